package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/spf13/cobra"

	"github.com/claimcheck/claimcheck/pkg/hookconfig"
	"github.com/claimcheck/claimcheck/schemas"
)

// addHooksVerify adds `hooks verify` to the hooks group.
func (a *app) addHooksVerify(hooks *cobra.Command) {
	hooks.AddCommand(a.hooksVerifyCommand())
}

// installRecordPath is where install records what it wrote.
func installRecordPath(getenv func(string) string) string {
	if d := hookStateDir(getenv); d != "" {
		return filepath.Join(d, hookconfig.RecordFile)
	}
	return ""
}

// recordInstall runs after a user-level `hooks install` that wrote the
// settings: it records the settings file and the hook command install
// wrote into it. A managed install records nothing here: the developer's
// user cannot change the managed layer, so drift there is a missing hook,
// and its receipt is under the system directory.
func (a *app) recordInstall(settings, hookCmd string) error {
	path := installRecordPath(a.env.Getenv)
	if path == "" {
		fmt.Fprintln(a.env.Stdout, "note: no hook state directory ($HOME unset); what was installed is not recorded")
		return nil
	}
	abs, err := filepath.Abs(settings)
	if err != nil {
		return err
	}
	in := hookconfig.NewInstallation(abs, hookCmd, time.Now().UTC().Format(time.RFC3339))
	if err := hookconfig.WriteInstallation(path, in); err != nil {
		return fmt.Errorf("record what was installed: %w", err)
	}
	fmt.Fprintf(a.env.Stdout, "recorded the installed hook command in %s (`claimcheck hooks verify` compares with it)\n", path)
	return nil
}

// verifyReport is `hooks verify --json`.
type verifyReport struct {
	Verdict      string        `json:"verdict"`
	Missing      []string      `json:"missing,omitempty"`
	Reasons      []string      `json:"reasons,omitempty"`
	Expected     string        `json:"expected_command,omitempty"`
	ExpectedFrom string        `json:"expected_from,omitempty"`
	Layers       []verifyLayer `json:"layers"`
}

type verifyLayer struct {
	Layer                 string   `json:"layer"`
	Path                  string   `json:"path"`
	Present               bool     `json:"present"`
	Parsed                bool     `json:"parsed"`
	Effective             bool     `json:"effective"`
	Error                 string   `json:"error,omitempty"`
	Digest                string   `json:"digest,omitempty"`
	Events                []string `json:"events,omitempty"`
	Commands              []string `json:"commands,omitempty"`
	AllowManagedHooksOnly bool     `json:"allow_managed_hooks_only,omitempty"`
	DisableAllHooks       bool     `json:"disable_all_hooks,omitempty"`
}

func (a *app) hooksVerifyCommand() *cobra.Command {
	var project, managed, systemDir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check that Claude Code's hook settings hand every claimcheck event to claimcheck-hook; exit 1 if not",
		Long: `verify reads every settings layer Claude Code takes hooks from — managed
(managed-settings.json and managed-settings.d/*.json), user (~/.claude/settings.json),
project (<project>/.claude/settings.json) and local (<project>/.claude/settings.local.json) —
and prints for each whether it is there, which of claimcheck's events it hands to
claimcheck-hook, with which command, and allowManagedHooksOnly / disableAllHooks.
It is the check claimcheck-hook records at every SessionStart.

The hooks are gated when every event install writes has a claimcheck-hook handler
(for every tool) in a layer whose hooks run, each with the expected command: the
one ` + "`claimcheck hooks install`" + ` recorded, else the one it would write now.

Exit status: 0 gated, 1 drift (events unhandled, hooks turned off by
disableAllHooks or allowManagedHooksOnly, or a claimcheck-hook handler with another
command), 2 usage errors.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if project == "" {
				wd, err := os.Getwd()
				if err != nil {
					return &exitError{ExitError, err}
				}
				project = wd
			}
			abs, err := filepath.Abs(project)
			if err != nil {
				return &exitError{ExitError, err}
			}
			exp, from := a.expectedHooks(cmd, systemDir)
			c := hookconfig.Read(hookconfig.Sources{ManagedDir: managed, Home: a.env.Getenv("HOME"), ProjectDir: abs}, exp)
			rep := report(c, from)
			if asJSON {
				b, err := json.Marshal(rep, json.Deterministic(true))
				if err != nil {
					return &exitError{ExitError, err}
				}
				fmt.Fprintln(a.env.Stdout, string(b))
			} else {
				a.printVerify(rep)
			}
			if c.Verdict != schemas.HooksGated {
				return &exitError{code: ExitFault}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&project, "project", "", "the project whose settings Claude Code reads (default: the current directory)")
	f.StringVar(&managed, "managed-settings-dir", hookconfig.DefaultManagedDir(), "where Claude Code's managed settings are")
	f.BoolVar(&asJSON, "json", false, "print the report as one JSON object")
	f.StringVar(&systemDir, "system-dir", defaultSystemDir, "where a managed install (install --managed) put its receipt")
	return cmd
}

// expectedHooks is the hook command the settings should run: a managed
// install's receipt (only root writes it), install's record, else what
// install would write now, else none (commands are then not compared).
// from says which.
func (a *app) expectedHooks(cmd *cobra.Command, systemDir string) (hookconfig.Expect, string) {
	if rec, ok, err := readReceipt(systemDir); ok && rec.HookCommand != "" {
		return hookconfig.Expect{Command: rec.HookCommand}, "the managed install's receipt " + receiptPath(systemDir)
	} else if err != nil {
		fmt.Fprintf(a.env.Stderr, "claimcheck: %v (ignored)\n", err)
	}
	if path := installRecordPath(a.env.Getenv); path != "" {
		in, ok, err := hookconfig.LoadInstallation(path)
		if ok {
			return in.Expect(), "the install record " + path
		}
		if err != nil {
			fmt.Fprintf(a.env.Stderr, "claimcheck: %v (ignored)\n", err)
		}
	}
	if line, err := a.hookCommandLine("", cmd.Flags().Changed("nats-url")); err == nil {
		return hookconfig.Expect{Command: line}, "what `claimcheck hooks install` would write now"
	}
	return hookconfig.Expect{}, ""
}

func report(c hookconfig.Config, from string) verifyReport {
	rep := verifyReport{Verdict: c.Verdict, Missing: c.Missing, Reasons: c.Reasons, Expected: c.Expect.Command, ExpectedFrom: from,
		Layers: []verifyLayer{}}
	for _, l := range c.Layers {
		rep.Layers = append(rep.Layers, verifyLayer{Layer: l.Kind, Path: l.Path, Present: l.Present, Parsed: l.Parsed,
			Effective: l.Effective, Error: l.Err, Digest: l.Digest, Events: l.Events, Commands: l.Commands,
			AllowManagedHooksOnly: l.Settings.AllowManagedHooksOnly, DisableAllHooks: l.Settings.DisableAllHooks})
	}
	return rep
}

func (a *app) printVerify(rep verifyReport) {
	w := a.env.Stdout
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LAYER\tPATH\tPRESENT\tEVENTS\tHOOK COMMAND\tSWITCHES")
	for _, l := range rep.Layers {
		present, events, command := "no", "-", "-"
		if l.Present {
			present = "yes"
			events = fmt.Sprintf("%d/%d", len(l.Events), len(schemas.HookEvents))
			if !l.Effective {
				events += " (off)"
			}
			if l.Error != "" {
				present = "unreadable: " + l.Error
			}
		}
		if len(l.Commands) > 0 {
			command = strings.Join(l.Commands, " | ")
		}
		var sw []string
		if l.AllowManagedHooksOnly {
			sw = append(sw, "allowManagedHooksOnly")
		}
		if l.DisableAllHooks {
			sw = append(sw, "disableAllHooks")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", l.Layer, l.Path, present, events, command, strings.Join(sw, ","))
	}
	_ = tw.Flush()
	if rep.Expected != "" {
		fmt.Fprintf(w, "expected hook command: %s (from %s)\n", rep.Expected, rep.ExpectedFrom)
	} else {
		fmt.Fprintln(w, "expected hook command: unknown (no install record and claimcheck-hook not found); commands not compared")
	}
	fmt.Fprintf(w, "verdict: %s\n", rep.Verdict)
	if len(rep.Missing) > 0 {
		fmt.Fprintf(w, "  unhandled: %s\n", strings.Join(rep.Missing, ", "))
	}
	for _, r := range rep.Reasons {
		fmt.Fprintf(w, "  %s\n", r)
	}
	if rep.Verdict != schemas.HooksGated {
		fmt.Fprintln(w, "Run `claimcheck hooks install` (with --settings for the layer you use) to restore claimcheck's hooks; "+
			"sessions started now are not gated.")
	}
}

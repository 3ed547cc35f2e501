package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/claimcheck/claimcheck/pkg/clock"
	"github.com/claimcheck/claimcheck/pkg/config"
	"github.com/claimcheck/claimcheck/pkg/decision"
	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/identity"
	"github.com/claimcheck/claimcheck/pkg/intake"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/services/gatekeeper"
)

// hookStateDir is claimcheck-hook's default state directory.
func hookStateDir(getenv func(string) string) string {
	if x := getenv("CLAIMCHECK_HOOK_STATE_DIR"); x != "" {
		return x
	}
	if x := getenv("XDG_STATE_HOME"); x != "" {
		return filepath.Join(x, "claimcheck", "hook")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "state", "claimcheck", "hook")
	}
	return ""
}

// hookKeysPath is where claimcheck-hook looks for the key set it trusts
// for the server at natsURL: one file per server in its state directory
// (decision.KeySetPath), so that two servers on one host keep their own.
func hookKeysPath(getenv func(string) string, natsURL string) string {
	if x := getenv("CLAIMCHECK_HOOK_GATE_KEYS"); x != "" {
		return x
	}
	if d := hookStateDir(getenv); d != "" {
		return decision.KeySetPath(d, natsURL)
	}
	return ""
}

// natsURL is the NATS URL the short-lived commands connect to (and the
// hooks they install use).
func (a *app) natsURL() string {
	if u := a.v.GetString("nats.url"); u != "" {
		return u
	}
	return nats.DefaultURL
}

// writeHookKeys writes the exported key set where the hook trusts it
// (0600 in a 0700 directory, replaced atomically).
func writeHookKeys(ctx context.Context, reg *keyring.Registry, path string, mode os.FileMode) (int, error) {
	keys, err := reg.List(ctx)
	if err != nil {
		return 0, err
	}
	if len(keys) == 0 {
		return 0, errors.New("the key registry is empty (claimcheck up creates the first key)")
	}
	raw, err := json.Marshal(keyring.Export(keys, time.Now()), json.Deterministic(true))
	if err != nil {
		return 0, err
	}
	dirMode := os.FileMode(0o700)
	if mode&0o044 != 0 {
		dirMode = 0o755 // a managed install's key set, read by the developer's user
	}
	if err := writeAtomic(path, append(raw, '\n'), mode, dirMode); err != nil {
		return 0, fmt.Errorf("hook key set: %w", err)
	}
	return len(keys), nil
}

// refreshHookKeys rewrites the hook's trusted key set after a key change,
// when this machine has one.
func (a *app) refreshHookKeys(ctx context.Context, reg *keyring.Registry) {
	// A managed install's key set, when this process may write it.
	if rec, ok, _ := readReceipt(defaultSystemDir); ok && rec.GateKeys != "" && needRights("install", rec.GateKeys) == nil {
		if n, err := writeHookKeys(ctx, reg, rec.GateKeys, 0o644); err != nil {
			fmt.Fprintf(a.env.Stderr, "warning: could not refresh %s (the managed hooks' trusted keys): %v\n", rec.GateKeys, err)
		} else {
			fmt.Fprintf(a.env.Stdout, "refreshed %s (%d keys): the managed hooks on this machine trust the new key set\n", rec.GateKeys, n)
		}
	}
	path := hookKeysPath(a.env.Getenv, a.natsURL())
	if path == "" {
		return
	}
	if _, err := os.Stat(path); err != nil {
		return
	}
	if n, err := writeHookKeys(ctx, reg, path, 0o600); err != nil {
		fmt.Fprintf(a.env.Stderr, "warning: could not refresh %s (claimcheck-hook's trusted keys): %v\n", path, err)
	} else {
		fmt.Fprintf(a.env.Stdout,
			"refreshed %s (%d keys): claimcheck-hook on this machine trusts the new key set; copy it to other agent hosts\n", path, n)
	}
}

func (a *app) gateCommand() *cobra.Command {
	gate := &cobra.Command{Use: "gate", Short: "Operate the Stop and PreToolUse gate"}
	var session, reason string
	override := &cobra.Command{
		Use:   "override",
		Short: "Let the next Stop of a session through (break-glass; recorded in the session's ledger)",
		Long: `override records a GateOverride event in the session's chain. The gatekeeper lets the
session's next Stop through even when it would block it, says so to the user, and
records the decision with the override's id. Run it yourself, not through the agent:
the PreToolUse gate denies agents running it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := id.CheckSession(session); err != nil {
				return &exitError{ExitError, fmt.Errorf("--session: %w", err)}
			}
			if strings.TrimSpace(reason) == "" || len(reason) > 2000 {
				return &exitError{ExitError, errors.New("--reason: required, at most 2000 characters (it is recorded for the audit)")}
			}
			nc, js, err := a.connect(cmd.Context())
			if err != nil {
				return &exitError{ExitError, err}
			}
			defer nc.Close()
			eventID, err := id.NewGenerator(clock.Real{}, id.FastEntropy{}).New()
			if err != nil {
				return err
			}
			src := cliSource()
			name := identity.RoleOperator
			if i, ok, err := a.identity(identity.RoleOperator); err != nil {
				return &exitError{ExitError, err}
			} else if ok {
				if i.Role != identity.RoleOperator {
					return &exitError{ExitError, fmt.Errorf(
						"an override needs operator credentials (<data dir>/creds/operator.creds, or claimcheck creds issue --role operator); these are of role %s", i.Role)}
				}
				name = i.Name
			}
			payload, err := json.Marshal(
				schemas.GateOverride{SessionID: session, HookEvent: schemas.GateOverrideEvent, Reason: reason, Operator: src.AgentID})
			if err != nil {
				return err
			}
			pub := intake.Publisher{JS: js, Origin: subject.OriginOperator, Name: name}
			if err := pub.Event(cmd.Context(), eventID, session, schemas.GateOverrideEvent, time.Now(), src, payload); err != nil {
				return &exitError{ExitError, fmt.Errorf("record the override: %w", err)}
			}
			fmt.Fprintf(a.env.Stdout, "override %s recorded for session %s: its next Stop is let through\n", eventID, session)
			return nil
		},
	}
	override.Flags().StringVar(&session, "session", "", "the session whose next Stop passes")
	override.Flags().StringVar(&reason, "reason", "", "why (recorded)")
	gate.AddCommand(override, a.gateReplayCommand(), a.gateLevelCommand())
	return gate
}

func (a *app) gateReplayCommand() *cobra.Command {
	var session string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "replay --session S",
		Short: "Decide every Stop and PreToolUse of a recorded session again and show why",
		Long: `replay reads the session's chain, rebuilds the gatekeeper's view of the session
up to each recorded Stop and PreToolUse event, decides it again with the current
policy and keys, and prints each decision with its reasons beside the decision
recorded at the time. Use it to understand a block (the inputs are the ledger's,
so there is no transcript race).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := id.CheckSession(session); err != nil {
				return &exitError{ExitError, fmt.Errorf("--session: %w", err)}
			}
			nc, js, err := a.connect(cmd.Context())
			if err != nil {
				return &exitError{ExitError, err}
			}
			defer nc.Close()
			cfg := gatekeeper.DefaultConfig()
			_ = config.Decode(a.v, "gatekeeper", &cfg)
			w := a.env.Stdout
			n := 0
			err = gatekeeper.Replay(cmd.Context(), js, cfg, session, func(st gatekeeper.ReplayStep) {
				n++
				if asJSON {
					b, _ := json.Marshal(st, json.Deterministic(true))
					fmt.Fprintln(w, string(b))
					return
				}
				fmt.Fprintf(w, "n=%d %s %s\n  now:      %s (%s)\n", st.N, st.HookEvent, st.Summary, st.Decision.Decision, st.Decision.Rule)
				for _, r := range st.Decision.Reasons {
					fmt.Fprintf(w, "            %s\n", r)
				}
				if st.Decision.Reason != "" && len(st.Decision.Reasons) == 0 {
					fmt.Fprintf(w, "            %s\n", st.Decision.Reason)
				}
				if st.Decision.NextStep != "" {
					fmt.Fprintf(w, "            next step: %s\n", st.Decision.NextStep)
				}
				for _, r := range st.Recorded {
					fmt.Fprintf(w, "  recorded: %s (%s) by %s at %s\n", r.Decision, r.Rule, orSource(r), r.IssuedAt)
				}
				if len(st.Recorded) == 0 {
					fmt.Fprintln(w, "  recorded: none")
				}
			})
			if err != nil {
				return &exitError{ExitError, err}
			}
			if n == 0 && !asJSON {
				fmt.Fprintf(w, "session %s has no recorded Stop or PreToolUse events\n", session)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&session, "session", "", "the session to replay")
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON object per event")
	return cmd
}

func orSource(d schemas.GateDecision) string {
	if d.Gatekeeper != "" {
		return d.Source + " " + d.Gatekeeper
	}
	return d.Source
}

package hookconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"

	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/schemas/validation"
)

const hookCmd = "/opt/claimcheck/bin/claimcheck-hook --nats-creds /home/dev/.local/share/claimcheck/creds/hook.creds"

// installed is a settings file as `claimcheck hooks install` writes it,
// with cmd for every event but those in skip.
func installed(cmd string, skip ...string) string {
	var parts []string
	for _, ev := range schemas.HookEvents {
		if contains(skip, ev.Name) {
			continue
		}
		h, _ := json.Marshal(cmd)
		parts = append(parts, fmt.Sprintf(`%q:[{"hooks":[{"type":"command","command":%s,"timeout":%d}]}]`, ev.Name, h, ev.Timeout))
	}
	return `{"model":"opus","hooks":{` + strings.Join(parts, ",") + `}}`
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func allEvents() []string {
	var out []string
	for _, ev := range schemas.HookEvents {
		out = append(out, ev.Name)
	}
	return out
}

// tree writes files (relative to a temp root: managed/…, home/…, proj/…).
func tree(t *testing.T, files map[string]string) Sources {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return Sources{ManagedDir: filepath.Join(root, "managed"), Home: filepath.Join(root, "home"), ProjectDir: filepath.Join(root, "proj")}
}

const (
	managedFile = "managed/managed-settings.json"
	userFile    = "home/.claude/settings.json"
	projectFile = "proj/.claude/settings.json"
	localFile   = "proj/.claude/settings.local.json"
)

func TestReadJudgesEachLayer(t *testing.T) {
	tests := []struct {
		name        string
		files       map[string]string
		exp         Expect
		verdict     string
		missing     []string
		effective   map[string]bool // layer kind → effective, for present layers
		wantReasons []string
	}{
		{name: "nothing installed", files: map[string]string{}, verdict: schemas.HooksNone, missing: allEvents()},
		{name: "project install", files: map[string]string{projectFile: installed(hookCmd)}, exp: Expect{hookCmd},
			verdict: schemas.HooksGated, effective: map[string]bool{schemas.LayerProject: true}},
		{name: "user install", files: map[string]string{userFile: installed(hookCmd)}, verdict: schemas.HooksGated},
		{name: "local install", files: map[string]string{localFile: installed(hookCmd)}, verdict: schemas.HooksGated},
		{name: "managed install", files: map[string]string{managedFile: installed(hookCmd)}, verdict: schemas.HooksGated},
		{name: "managed.d install", files: map[string]string{"managed/managed-settings.d/10-claimcheck.json": installed(hookCmd)},
			verdict: schemas.HooksGated},
		{name: "split across layers", files: map[string]string{
			userFile:    installed(hookCmd, schemas.HookStop, schemas.HookPreToolUse),
			projectFile: `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"` + hookCmd + `"}]}],"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"` + hookCmd + `"}]}]}}`,
		}, verdict: schemas.HooksGated},
		{name: "settings overwritten with {}", files: map[string]string{projectFile: `{}`}, verdict: schemas.HooksNone, missing: allEvents()},
		{name: "Stop removed", files: map[string]string{projectFile: installed(hookCmd, schemas.HookStop)},
			verdict: schemas.HooksMissing, missing: []string{schemas.HookStop}},
		{name: "PreToolUse for Bash only", files: map[string]string{projectFile: strings.Replace(installed(hookCmd),
			`"PreToolUse":[{"hooks"`, `"PreToolUse":[{"matcher":"Bash","hooks"`, 1)},
			verdict: schemas.HooksMissing, missing: []string{schemas.HookPreToolUse}, wantReasons: []string{"only some tools"}},
		{name: "project settings do not parse", files: map[string]string{projectFile: installed(hookCmd) + "x"},
			verdict: schemas.HooksNone, missing: allEvents(), wantReasons: []string{"invalid JSON at byte"}},
		{name: "hooks of the wrong type", files: map[string]string{projectFile: `{"hooks":[]}`},
			verdict: schemas.HooksNone, missing: allEvents(), wantReasons: []string{"unexpected value at /hooks"}},
		{name: "disableAllHooks in local settings", files: map[string]string{projectFile: installed(hookCmd), localFile: `{"disableAllHooks":true}`},
			verdict: schemas.HooksNone, missing: allEvents(),
			effective:   map[string]bool{schemas.LayerProject: false, schemas.LayerLocal: false},
			wantReasons: []string{"do not run: disableAllHooks in"}},
		{name: "disableAllHooks outside managed leaves managed hooks", files: map[string]string{managedFile: installed(hookCmd),
			userFile: `{"disableAllHooks":true}`},
			verdict: schemas.HooksGated, effective: map[string]bool{schemas.LayerManaged: true, schemas.LayerUser: false}},
		{name: "managed disableAllHooks turns everything off", files: map[string]string{managedFile: `{"disableAllHooks":true}`,
			userFile: installed(hookCmd)},
			verdict: schemas.HooksNone, missing: allEvents(), effective: map[string]bool{schemas.LayerManaged: false, schemas.LayerUser: false}},
		{name: "allowManagedHooksOnly with the hooks in the project", files: map[string]string{managedFile: `{"allowManagedHooksOnly":true}`,
			projectFile: installed(hookCmd)},
			verdict: schemas.HooksNone, missing: allEvents(), wantReasons: []string{"allowManagedHooksOnly in"}},
		{name: "allowManagedHooksOnly with the hooks in managed", files: map[string]string{
			managedFile: strings.Replace(installed(hookCmd), `{"model"`, `{"allowManagedHooksOnly":true,"model"`, 1),
			projectFile: `{"disableAllHooks":false,"hooks":{}}`},
			verdict: schemas.HooksGated, effective: map[string]bool{schemas.LayerManaged: true, schemas.LayerProject: false}},
		{name: "allowManagedHooksOnly outside managed is ignored", files: map[string]string{projectFile: strings.Replace(installed(hookCmd),
			`{"model"`, `{"allowManagedHooksOnly":true,"model"`, 1)}, verdict: schemas.HooksGated},
		{name: "a different command", files: map[string]string{projectFile: installed("/tmp/claimcheck-hook --fail-open Stop,PreToolUse")},
			exp: Expect{hookCmd}, verdict: schemas.HooksChanged, wantReasons: []string{"other than the one"}},
		{name: "two commands without a record", files: map[string]string{userFile: installed(hookCmd),
			projectFile: installed("claimcheck-hook-tls")}, verdict: schemas.HooksChanged, wantReasons: []string{"2 different command lines"}},
		{name: "look-alikes are not claimcheck-hook", files: map[string]string{projectFile: installed("/tmp/not-claimcheck-hook")},
			verdict: schemas.HooksNone, missing: allEvents()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Read(tree(t, tt.files), tt.exp)
			if c.Verdict != tt.verdict {
				t.Errorf("verdict %s, want %s (reasons %q)", c.Verdict, tt.verdict, c.Reasons)
			}
			if diff := cmp.Diff(tt.missing, c.Missing); diff != "" {
				t.Errorf("missing (-want +got):\n%s", diff)
			}
			for _, l := range c.Layers {
				if want, ok := tt.effective[l.Kind]; ok && l.Present && l.Effective != want {
					t.Errorf("layer %s effective=%v, want %v", l.Kind, l.Effective, want)
				}
			}
			for _, r := range tt.wantReasons {
				if !strings.Contains(strings.Join(c.Reasons, "\n"), r) {
					t.Errorf("reasons %q lack %q", c.Reasons, r)
				}
			}
			checkRecord(t, c)
		})
	}
}

// checkRecord: the ledger form is schema-valid and holds no command line.
var validator = sync.OnceValues(validation.New)

func checkRecord(t *testing.T, c Config) {
	t.Helper()
	v, err := validator()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(c.Record())
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Validate(schemas.HookConfigV1, raw); err != nil {
		t.Fatalf("record: %v\n%s", err, raw)
	}
	if strings.Contains(string(raw), "/opt/claimcheck/bin") || strings.Contains(string(raw), "--") {
		t.Fatalf("record holds a command line: %s", raw)
	}
}

func TestLayersReadAndDigest(t *testing.T) {
	body := installed(hookCmd)
	src := tree(t, map[string]string{projectFile: body, "managed/managed-settings.d/b.json": `{}`,
		"managed/managed-settings.d/a.json": `{}`, "managed/managed-settings.d/notes.txt": "x"})
	c := Read(src, Expect{hookCmd})
	var kinds []string
	for _, l := range c.Layers {
		kinds = append(kinds, l.Kind+":"+filepath.Base(l.Path)+":"+fmt.Sprint(l.Present))
	}
	want := []string{"managed:managed-settings.json:false", "managed.d:a.json:true", "managed.d:b.json:true",
		"user:settings.json:false", "project:settings.json:true", "local:settings.local.json:false"}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Fatalf("layers (-want +got):\n%s", diff)
	}
	p := c.Layers[4]
	if p.Digest != digest.SHA256([]byte(body)) || p.Size != len(body) || !p.Parsed || len(p.Events) != len(schemas.HookEvents) {
		t.Fatalf("project layer %+v", p)
	}
	r := c.Record()
	if r.Layers[4].Handlers != Installed(hookCmd) || r.Expected != Installed(hookCmd) {
		t.Fatalf("handlers %s, expected %s, want %s", r.Layers[4].Handlers, r.Expected, Installed(hookCmd))
	}
	if r.Layers[4].Commands[0] != digest.SHA256([]byte(hookCmd)) {
		t.Fatalf("commands %v", r.Layers[4].Commands)
	}
}

func TestOversizedAndUnreadableFiles(t *testing.T) {
	src := tree(t, map[string]string{projectFile: `{"x":"` + strings.Repeat("a", MaxFileBytes) + `"}`, userFile: "{}"})
	if err := os.Chmod(filepath.Join(src.Home, ".claude", "settings.json"), 0); err != nil {
		t.Fatal(err)
	}
	c := Read(src, Expect{})
	for _, l := range c.Layers {
		switch l.Kind {
		case schemas.LayerProject:
			if !l.Present || l.Parsed || !strings.Contains(l.Err, "larger than") || l.Digest != "" {
				t.Errorf("oversized: %+v", l)
			}
		case schemas.LayerUser:
			if os.Geteuid() != 0 && (!l.Present || l.Err == "" || strings.Contains(l.Err, src.Home)) {
				t.Errorf("unreadable: %+v", l)
			}
		}
	}
	checkRecord(t, c)
}

func TestIsClaimcheckHook(t *testing.T) {
	tests := map[string]bool{
		"claimcheck-hook": true,
		"/usr/local/bin/claimcheck-hook --nats-url x":                        true,
		"'/home/a b/bin/claimcheck-hook-tls' --nats-creds '/x y/hook.creds'": true,
		`"/opt/cc/claimcheck-hook"`:                                          true,
		`/opt/cc/claimcheck\-hook`:                                           true,
		"  claimcheck-hook;true":                                             true,
		"$HOME/bin/claimcheck-hook":                                          true,
		"":                                                                   false,
		"not-claimcheck-hook":                                                false,
		"/tmp/evil/claimcheck-hook.sh":                                       false,
		"claimcheck-hooks":                                                   false,
		"sh -c claimcheck-hook":                                              false,
		"echo claimcheck-hook":                                               false,
		"'claimcheck-hook":                                                   false,
		"/opt/claimcheck-hook/bin/true":                                      false,
		"claimcheck-hook-tls-wrapper":                                        false,
		"$(echo claimcheck-hook)":                                            false,
	}
	for cmd, want := range tests {
		if got := IsClaimcheckHook(cmd); got != want {
			t.Errorf("IsClaimcheckHook(%q) = %v, want %v", cmd, got, want)
		}
	}
}

func TestInstallationRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", RecordFile)
	if _, ok, err := LoadInstallation(path); ok || err != nil {
		t.Fatalf("no record: ok=%v err=%v", ok, err)
	}
	in := NewInstallation("/p/.claude/settings.json", hookCmd, "2026-11-25T00:00:00Z")
	if err := WriteInstallation(path, in); err != nil {
		t.Fatal(err)
	}
	got, ok, err := LoadInstallation(path)
	if err != nil || !ok {
		t.Fatalf("load: ok=%v err=%v", ok, err)
	}
	if diff := cmp.Diff(in, got); diff != "" {
		t.Fatalf("round trip (-want +got):\n%s", diff)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
	if err := os.WriteFile(path, []byte(`{"v":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := LoadInstallation(path); ok || err == nil {
		t.Fatal("a record without a command loaded")
	}
}

// FuzzParse: Parse never panics, and its errors never quote the input.
func FuzzParse(f *testing.F) {
	f.Add([]byte(installed(hookCmd)))
	f.Add([]byte(`{"hooks":{"Stop":[{"matcher":"*","hooks":[{"type":"command","command":"x"}]}]},"disableAllHooks":true}`))
	f.Add([]byte(`{"hooks":[]}`))
	f.Add([]byte(`{"allowManagedHooksOnly":"yes"}`))
	f.Add([]byte("{\"x\":\"secret-value\""))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			if len(data) >= 12 && strings.Contains(err.Error(), string(data)) {
				t.Fatalf("error quotes the input: %v", err)
			}
			return
		}
		l := Layer{Kind: schemas.LayerProject, Path: "/p", Present: true, Parsed: true, Settings: s}
		l.scan()
		checkRecord(t, Judge([]Layer{l}, Expect{}))
	})
}

package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/identity"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/schemas"
)

type res struct {
	code           int
	stdout, stderr string
}

// runCLI runs claimcheck in-process. CLAIMCHECK_* variables go to the real
// environment (viper reads it directly); the rest through Env.Getenv.
func runCLI(t *testing.T, env map[string]string, args ...string) res {
	t.Helper()
	for k, v := range env {
		if strings.HasPrefix(k, "CLAIMCHECK_") {
			t.Setenv(k, v)
		}
	}
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, Env{Getenv: func(k string) string { return env[k] }, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
	return res{code, out.String(), errb.String()}
}

func fakeHook(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "claimcheck-hook")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

const userSettings = `{
  "model": "opus",
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/block-rm.sh", "timeout": 5}]}
    ],
    "Stop": [{"hooks": [{"type": "command", "command": "echo bye"}]}]
  },
  "permissions": {"allow": ["Bash(ls:*)"]}
}
`

func TestHooksInstallMergesIdempotentlyWithBackup(t *testing.T) {
	dir := t.TempDir()
	settings := filepath.Join(dir, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(userSettings), 0o640); err != nil {
		t.Fatal(err)
	}
	hook := fakeHook(t)
	env := map[string]string{"HOME": dir}
	r := runCLI(t, env, "hooks", "install", "--hook-command", hook)
	if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("added %d", len(hookEvents))) {
		t.Fatalf("install: %+v", r)
	}
	got, _ := os.ReadFile(settings)
	var doc struct {
		Model       string                      `json:"model"`
		Permissions map[string][]string         `json:"permissions"`
		Hooks       map[string][]jsontext.Value `json:"hooks"`
	}
	if err := json.Unmarshal(got, &doc); err != nil {
		t.Fatalf("result is not JSON: %v\n%s", err, got)
	}
	if doc.Model != "opus" || len(doc.Permissions["allow"]) != 1 {
		t.Fatalf("user settings lost: %s", got)
	}
	if !strings.Contains(string(got), "block-rm.sh") || !strings.Contains(string(got), "echo bye") {
		t.Fatalf("user hooks lost: %s", got)
	}
	for _, ev := range hookEvents {
		if !strings.Contains(string(got), `"`+ev.Name+`"`) {
			t.Errorf("event %s not installed", ev.Name)
		}
	}
	if strings.Index(string(got), `"model"`) > strings.Index(string(got), `"hooks"`) || strings.Index(string(got), `"hooks"`) > strings.Index(string(got), `"permissions"`) {
		t.Errorf("member order changed:\n%s", got)
	}
	if !strings.Contains(string(got), `"timeout": 30`) {
		t.Errorf("no explicit timeout:\n%s", got)
	}
	fi, _ := os.Stat(settings)
	if fi.Mode().Perm() != 0o640 {
		t.Errorf("mode changed to %v", fi.Mode().Perm())
	}
	backups, _ := filepath.Glob(settings + ".bak-*")
	if len(backups) != 1 {
		t.Fatalf("backups: %v", backups)
	}
	if b, _ := os.ReadFile(backups[0]); string(b) != userSettings {
		t.Fatal("backup differs from the original")
	}
	// Second run: nothing changes, no new backup.
	r = runCLI(t, env, "hooks", "install", "--hook-command", hook)
	if r.code != 0 || !strings.Contains(r.stdout, "nothing changed") {
		t.Fatalf("second install: %+v", r)
	}
	again, _ := os.ReadFile(settings)
	if !bytes.Equal(again, got) {
		t.Fatal("second install rewrote the file")
	}
	if b, _ := filepath.Glob(settings + ".bak-*"); len(b) != 1 {
		t.Fatalf("second install made a backup: %v", b)
	}
	// A moved binary: entries are updated in place, never duplicated.
	hook2 := fakeHook(t)
	r = runCLI(t, env, "hooks", "install", "--hook-command", hook2)
	if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("updated %d", len(hookEvents))) {
		t.Fatalf("reinstall: %+v", r)
	}
	final, _ := os.ReadFile(settings)
	if strings.Count(string(final), "claimcheck-hook") != len(hookEvents) || strings.Contains(string(final), hook+`"`) {
		t.Fatalf("duplicated or stale entries:\n%s", final)
	}
}

// --sandbox merges Claude Code's sandbox: on, failing hard when it cannot
// start, no unsandboxed retries, claimcheck's data, the hook's state and
// credentials unreadable to the agent's commands, `claimcheck claim`
// outside it; the user's own sandbox settings stay, and a second run
// changes nothing.
func TestHooksInstallSandbox(t *testing.T) {
	dir := t.TempDir()
	settings := filepath.Join(dir, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o700); err != nil {
		t.Fatal(err)
	}
	user := `{"model":"opus","sandbox":{"enabled":false,"excludedCommands":["docker *"],"filesystem":{"denyRead":["~/secrets"],"allowWrite":["~/out"]},"network":{"allowedDomains":["github.com","localhost"]}}}`
	if err := os.WriteFile(settings, []byte(user), 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	env := map[string]string{"HOME": dir, "CLAIMCHECK_DATA_DIR": data}
	hook := fakeHook(t)
	r := runCLI(t, env, "hooks", "install", "--hook-command", hook, "--sandbox")
	if r.code != 0 || !strings.Contains(r.stdout, "sandbox settings merged") || !strings.Contains(r.stdout, `allowedDomains lists "localhost"`) {
		t.Fatalf("install --sandbox: %+v", r)
	}
	got, _ := os.ReadFile(settings)
	var doc struct {
		Model   string `json:"model"`
		Sandbox struct {
			Enabled                  bool     `json:"enabled"`
			FailIfUnavailable        bool     `json:"failIfUnavailable"`
			AllowUnsandboxedCommands *bool    `json:"allowUnsandboxedCommands"`
			ExcludedCommands         []string `json:"excludedCommands"`
			Filesystem               struct {
				DenyRead   []string `json:"denyRead"`
				AllowWrite []string `json:"allowWrite"`
			} `json:"filesystem"`
			Network struct {
				AllowedDomains []string `json:"allowedDomains"`
			} `json:"network"`
		} `json:"sandbox"`
	}
	if err := json.Unmarshal(got, &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, got)
	}
	sb := doc.Sandbox
	if doc.Model != "opus" || !sb.Enabled || !sb.FailIfUnavailable || sb.AllowUnsandboxedCommands == nil || *sb.AllowUnsandboxedCommands {
		t.Fatalf("sandbox flags or user settings: %s", got)
	}
	for _, want := range []string{"~/secrets", data, filepath.Join(dir, ".local", "state", "claimcheck", "hook")} {
		if !slices.Contains(sb.Filesystem.DenyRead, want) {
			t.Errorf("denyRead %v lacks %s", sb.Filesystem.DenyRead, want)
		}
	}
	if !slices.Contains(sb.ExcludedCommands, "docker *") || !slices.Contains(sb.ExcludedCommands, "claimcheck claim *") || len(sb.Filesystem.AllowWrite) != 1 || len(sb.Network.AllowedDomains) != 2 {
		t.Fatalf("the user's sandbox settings or claimcheck claim's exclusion: %s", got)
	}
	r = runCLI(t, env, "hooks", "install", "--hook-command", hook, "--sandbox")
	if again, _ := os.ReadFile(settings); r.code != 0 || !bytes.Equal(again, got) || !strings.Contains(r.stdout, "nothing changed") {
		t.Fatalf("second install changed the settings: %+v\n%s", r, again)
	}
	// Without --sandbox, install says what the agent's processes can still do.
	r = runCLI(t, env, "hooks", "install", "--hook-command", hook)
	if !strings.Contains(r.stdout, "without --sandbox the agent's Bash commands run as you") {
		t.Fatalf("no word on what stays open without the sandbox: %+v", r)
	}
}

func TestHooksInstallRefusesMalformedSettings(t *testing.T) {
	dir := t.TempDir()
	settings := filepath.Join(dir, "settings.json")
	for _, bad := range []string{`{"hooks": [}`, `[1,2]`, `{"hooks": []}`, `{"hooks": {"Stop": {"x":1}}}`} {
		if err := os.WriteFile(settings, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		r := runCLI(t, map[string]string{"HOME": dir}, "hooks", "install", "--settings", settings, "--hook-command", fakeHook(t))
		if r.code == 0 || !strings.Contains(r.stderr, settings) {
			t.Errorf("%s: %+v, want an error naming the file", bad, r)
		}
		if b, _ := os.ReadFile(settings); string(b) != bad {
			t.Errorf("%s: file changed to %s", bad, b)
		}
	}
	r := runCLI(t, map[string]string{"HOME": dir}, "hooks", "install", "--settings", settings, "--hook-command", filepath.Join(dir, "missing"))
	if r.code == 0 || !strings.Contains(r.stderr, "missing") {
		t.Errorf("missing hook binary: %+v", r)
	}
}

func TestHooksInstallNewFileAndDryRun(t *testing.T) {
	dir := t.TempDir()
	settings := filepath.Join(dir, "new", "settings.json")
	r := runCLI(t, map[string]string{"HOME": dir}, "hooks", "install", "--settings", settings, "--hook-command", fakeHook(t), "--dry-run")
	if r.code != 0 || !strings.Contains(r.stdout, "dry run") {
		t.Fatalf("dry run: %+v", r)
	}
	if _, err := os.Stat(settings); !os.IsNotExist(err) {
		t.Fatal("dry run wrote the file")
	}
	r = runCLI(t, map[string]string{"HOME": dir}, "--nats-url", "nats://10.0.0.5:4222", "hooks", "install", "--settings", settings, "--hook-command", fakeHook(t))
	if r.code != 0 {
		t.Fatalf("install: %+v", r)
	}
	b, _ := os.ReadFile(settings)
	if !strings.Contains(string(b), "--nats-url nats://10.0.0.5:4222") {
		t.Fatalf("nats url not passed to the hook:\n%s", b)
	}
	fi, _ := os.Stat(settings)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("new settings mode %v", fi.Mode().Perm())
	}
}

// ledgerFixture starts a server with one chain of k entries.
func ledgerFixture(t *testing.T, k int) (map[string]string, jetstream.JetStream) {
	t.Helper()
	s := natstest.RunServer(t)
	_, js := natstest.Connect(t, s.ClientURL())
	natstest.Bootstrap(t, js, nil)
	a := ledger.NewAppender(js, ledger.AppenderConfig{MaxBlockBytes: 2000})
	var entries []*schemas.Entry
	for i := 1; i <= k; i++ {
		p := fmt.Sprintf(`{"session_id":"sess-a","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"echo %d"}}`, i)
		entries = append(entries, &schemas.Entry{V: 1, Kind: schemas.EntryEvent, Chain: "sess-a", SessionID: "sess-a",
			EventID: fmt.Sprintf("01JD%022d", i), HookEvent: "PostToolUse", ToolName: "Bash",
			IngestedAt: "2026-11-22T03:04:05.123Z", ReceivedAt: "2026-11-22T03:04:05.100Z",
			Payload: &p, PayloadDigest: "sha256:" + strings.Repeat("0", 64), PayloadSize: len(p), Bundle: "test"})
	}
	if _, err := a.Append(t.Context(), "sess-a", entries); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"CLAIMCHECK_NATS_URL": s.ClientURL(), "HOME": t.TempDir()}, js
}

func TestLedgerShowSessionsVerify(t *testing.T) {
	env, _ := ledgerFixture(t, 6)
	r := runCLI(t, env, "ledger", "sessions")
	if r.code != 0 || !strings.Contains(r.stdout, "sess-a") || !strings.Contains(r.stdout, "6") {
		t.Fatalf("sessions: %+v", r)
	}
	r = runCLI(t, env, "ledger", "show", "--session", "sess-a", "--json")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 6 {
		t.Fatalf("show --json: %+v", r)
	}
	for i, l := range lines {
		var e struct {
			N         uint64 `json:"n"`
			Hash      string `json:"hash"`
			PrevHash  string `json:"prev_hash"`
			HookEvent string `json:"hook_event"`
			EventID   string `json:"event_id"`
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil || e.N != uint64(i+1) || e.Hash == "" || e.PrevHash == "" || e.HookEvent == "" || e.EventID == "" {
			t.Fatalf("line %d: %s (%v)", i, l, err)
		}
	}
	r = runCLI(t, env, "ledger", "show", "--session", "sess-a")
	if r.code != 0 || !strings.Contains(r.stdout, "echo 6") {
		t.Fatalf("show: %+v", r)
	}
	r = runCLI(t, env, "ledger", "verify")
	if r.code != 0 || !strings.Contains(r.stdout, "ok: 1 chains, 6 entries") {
		t.Fatalf("verify: %+v", r)
	}
	for _, bad := range []string{"../x", "a b", ""} {
		if r := runCLI(t, env, "ledger", "show", "--session", bad); r.code != ExitError {
			t.Errorf("show --session %q: %+v", bad, r)
		}
	}
	if r := runCLI(t, env, "ledger", "show", "--session", "nosuch"); r.code != ExitError || !strings.Contains(r.stderr, "no entries") {
		t.Errorf("unknown session: %+v", r)
	}
}

// TestLedgerVerifyDetectsTamperedCopies writes modified copies of a session
// into a second stream (as an attacker with stream access, or a restore from
// a bad backup, would) and verifies them.
func TestLedgerVerifyDetectsTamperedCopies(t *testing.T) {
	env, js := ledgerFixture(t, 6)
	var orig [][]byte
	if err := ledger.NewReader(js, "").Walk(t.Context(), "sess-a", 0, func(s ledger.Stored) error {
		orig = append(orig, s.Raw)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		mutate  func([][]byte) [][]byte
		wantPos int
		wantMsg string
	}{
		{"changed", func(e [][]byte) [][]byte { e[3] = bytes.Replace(e[3], []byte("echo 4"), []byte("echo X"), 1); return e }, 4, "hash mismatch"},
		{"removed", func(e [][]byte) [][]byte { return append(e[:2:2], e[3:]...) }, 3, "missing"},
		{"reordered", func(e [][]byte) [][]byte { e[4], e[5] = e[5], e[4]; return e }, 5, "out of order"},
		{"not canonical", func(e [][]byte) [][]byte {
			e[2] = bytes.Replace(e[2], []byte(`,"kind":`), []byte(`, "kind":`), 1)
			return e
		}, 3, "canonical"},
		// Re-sealed (a forger who recomputes the hash): the chain holds
		// at the entry, its schema does not.
		{"schema violation", func(e [][]byte) [][]byte {
			e[3] = reseal(t, e[3], func(x *schemas.Entry) { x.Kind = "bogus" })
			return e
		}, 4, "/kind"},
		{"linked to another entry", func(e [][]byte) [][]byte {
			e[3] = reseal(t, e[3], func(x *schemas.Entry) { x.PrevHash = "sha256:" + strings.Repeat("1", 64) })
			return e
		}, 4, "prev_hash"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := fmt.Sprintf("COPY%d", i)
			prefix := fmt.Sprintf("copy%d", i)
			if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: name, Subjects: []string{prefix + ".>"}}); err != nil {
				t.Fatal(err)
			}
			entries := tt.mutate(append([][]byte(nil), orig...))
			for _, e := range entries {
				if _, err := js.Publish(t.Context(), prefix+".sess-a", e); err != nil {
					t.Fatal(err)
				}
			}
			r := runCLI(t, env, "ledger", "verify", "--stream", name)
			want := fmt.Sprintf("FAIL session sess-a position %d", tt.wantPos)
			if r.code != ExitFault || !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, tt.wantMsg) {
				t.Fatalf("verify --stream %s: %+v, want exit %d and %q (%s)", name, r, ExitFault, want, tt.wantMsg)
			}
			// The original is untouched and still verifies.
			if r := runCLI(t, env, "ledger", "verify", "--session", "sess-a"); r.code != 0 {
				t.Fatalf("original: %+v", r)
			}
		})
	}
}

// reseal changes a stored entry and seals it again.
func reseal(t *testing.T, raw []byte, change func(*schemas.Entry)) []byte {
	t.Helper()
	var e schemas.Entry
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatal(err)
	}
	change(&e)
	out, err := chain.Seal(&e)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCommandsWithoutNATS(t *testing.T) {
	env := map[string]string{"CLAIMCHECK_NATS_URL": fmt.Sprintf("nats://127.0.0.1:%d", natstest.FreePort(t)), "HOME": t.TempDir()}
	start := time.Now()
	r := runCLI(t, env, "ledger", "verify")
	if r.code != ExitError || !strings.Contains(r.stderr, "claimcheck up") {
		t.Fatalf("verify without NATS: %+v", r)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatal("took too long to fail")
	}
}

func TestUpRejectsBadConfiguration(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	cases := map[string]string{
		"ingest:\n  batch_size: 0\n":       "batch_size",
		"ingest:\n  no_such_key: 1\n":      "no_such_key",
		"bogus: 1\n":                       "bogus",
		"streams:\n  partitions: 100\n":    "partitions",
		"listen: 0.0.0.0:0\n":              "loopback",
		"ingest:\n  ack_wait: fortnight\n": "ack_wait",
	}
	for body, want := range cases {
		if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		r := runCLI(t, map[string]string{"HOME": dir}, "up", "--config", cfg, "--data-dir", filepath.Join(dir, "d"))
		if r.code != ExitError || !strings.Contains(r.stderr, want) {
			t.Errorf("config %q: %+v, want an error naming %q", body, r, want)
		}
	}
}

// For tls:// URLs install picks claimcheck-hook-tls (the plain binary is the
// lean build without TLS); re-installing with a plain URL switches back,
// updating the same entries.
func TestHooksInstallPicksTheTLSBuildForTLSURLs(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"claimcheck-hook", "claimcheck-hook-tls"} {
		if err := os.WriteFile(filepath.Join(bin, n), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin)
	settings := filepath.Join(dir, "settings.json")
	env := map[string]string{"HOME": dir}
	r := runCLI(t, env, "hooks", "install", "--settings", settings, "--nats-url", "tls://nats.example:4222")
	if r.code != 0 || !strings.Contains(r.stdout, "claimcheck-hook-tls") {
		t.Fatalf("install with a tls:// URL: %+v", r)
	}
	got, _ := os.ReadFile(settings)
	if n := strings.Count(string(got), "claimcheck-hook-tls"); n != len(hookEvents) {
		t.Fatalf("%d entries run claimcheck-hook-tls, want %d:\n%s", n, len(hookEvents), got)
	}
	r = runCLI(t, env, "hooks", "install", "--settings", settings, "--nats-url", "nats://127.0.0.1:4222")
	if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("updated %d", len(hookEvents))) {
		t.Fatalf("reinstall with a nats:// URL: %+v", r)
	}
	got, _ = os.ReadFile(settings)
	if strings.Contains(string(got), "claimcheck-hook-tls") || strings.Count(string(got), "claimcheck-hook") != len(hookEvents) {
		t.Fatalf("entries not switched back to the lean build:\n%s", got)
	}
	// NATS credentials travel with the command, the lean build reads them;
	// they must be a hook identity.
	a, _, err := identity.Open(filepath.Join(dir, "auth"))
	if err != nil {
		t.Fatal(err)
	}
	issue := func(req identity.Request, path string) {
		c, err := a.Issue(req)
		if err == nil {
			err = identity.WriteCreds(path, c)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	creds := filepath.Join(dir, "creds", "hook.creds")
	issue(identity.Request{Role: identity.RoleHook, Host: "laptop"}, creds)
	r = runCLI(t, env, "hooks", "install", "--settings", settings, "--nats-url", "nats://127.0.0.1:4222", "--nats-creds", creds)
	if r.code != 0 {
		t.Fatalf("install with credentials: %+v", r)
	}
	got, _ = os.ReadFile(settings)
	if strings.Contains(string(got), "claimcheck-hook-tls") || strings.Count(string(got), "--nats-creds "+creds) != len(hookEvents) {
		t.Fatalf("entries with credentials:\n%s", got)
	}
	op := filepath.Join(dir, "creds", "operator.creds")
	issue(identity.Request{Role: identity.RoleOperator}, op)
	r = runCLI(t, env, "hooks", "install", "--settings", settings, "--nats-creds", op)
	if r.code != ExitError || !strings.Contains(r.stderr, "holds credentials of role operator: the hook needs this host's hook identity") {
		t.Fatalf("install with the operator's credentials: %+v", r)
	}
	// Without --nats-creds, the hook identity `claimcheck up` wrote in its
	// data directory is wired.
	r = runCLI(t, map[string]string{"HOME": dir, "CLAIMCHECK_DATA_DIR": dir}, "hooks", "install", "--settings", settings)
	got, _ = os.ReadFile(settings)
	if r.code != 0 || strings.Count(string(got), "--nats-creds "+creds) != len(hookEvents) {
		t.Fatalf("install with up's hook credentials: %+v\n%s", r, got)
	}
}

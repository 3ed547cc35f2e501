package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/claimcheck/claimcheck/pkg/natstest"
)

func TestClaimArgs(t *testing.T) {
	tests := []struct {
		in, want, err string
	}{
		{`{"min_runs":2, "command_substring":"go test ./..."}`, `{"command_substring":"go test ./...","min_runs":2}`, ""},
		{``, `{}`, ""},
		{`  {}  `, `{}`, ""},
		{`{"command_substring":`, "", "not valid JSON"},
		{`{"a":1,"a":2}`, "", "duplicate"},
		{`["go test"]`, "", "not an array"},
		{`"go test"`, "", "not a string"},
		{`null`, "", "not null"},
		{`{"x":"` + strings.Repeat("a", 9000) + `"}`, "", "limit is 8192"},
		{strings.Repeat(" ", 40000) + `{}`, `{}`, ""},
		{"{\"x\":\"\xff\"}", "", "not valid JSON"},
	}
	for _, tt := range tests {
		got, err := claimArgs(tt.in)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("claimArgs(%.40q): %v, want an error mentioning %q", tt.in, err, tt.err)
		case tt.err == "" && (err != nil || string(got) != tt.want):
			t.Errorf("claimArgs(%.40q) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

// FuzzClaimArgs: whatever --args holds, claimArgs either refuses it or
// returns one canonical JSON object within the limit.
func FuzzClaimArgs(f *testing.F) {
	for _, s := range []string{`{"command_substring":"go test"}`, `{}`, `[]`, `{"a":{"b":[1,2.50,"\u00e9"]}}`, `{"a":1,"a":1}`, "{\"k\":1e400}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := claimArgs(in)
		if err != nil {
			return
		}
		if got.Kind() != '{' || len(got) > maxClaimArgs {
			t.Fatalf("claimArgs(%q) = %s", in, got)
		}
		c := jsontext.Value(append([]byte(nil), got...))
		if err := c.Canonicalize(); err != nil || string(c) != string(got) {
			t.Fatalf("claimArgs(%q) = %s, not canonical (%v)", in, got, err)
		}
	})
}

func TestClaimUsageErrorsNeverLookLikeVerdicts(t *testing.T) {
	// Exit codes 2 and 3 mean FAIL and REFUSED: a usage error must not use
	// them, nor reach NATS.
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"claim", "--bogus"}, "bogus"},
		{[]string{"claim", "--claim", "done", "--validator", "test_pass"}, "no session"},
		{[]string{"claim", "--session", "a.b", "--claim", "done", "--validator", "test_pass"}, `--session: invalid session id "a.b"`},
		{[]string{"claim", "--session", "s1", "--validator", "test_pass"}, "--claim is required"},
		{[]string{"claim", "--session", "s1", "--claim", "done", "--validator", "test_pass", "--args", "{"}, "--args"},
		{[]string{"claim", "--session", "s1", "--claim", "done", "--validator", "test_pass", "extra"}, "extra"},
	} {
		r := runCLI(t, map[string]string{"CLAIMCHECK_NATS_URL": "nats://127.0.0.1:1"}, c.args...)
		if r.code != ClaimBadInput || !strings.Contains(r.stderr, c.msg) {
			t.Errorf("%v: exit %d stderr %q, want %d and %q", c.args, r.code, r.stderr, ClaimBadInput, c.msg)
		}
	}
	// Valid input but no NATS: transport, exit 4.
	r := runCLI(t, map[string]string{"CLAIMCHECK_NATS_URL": "nats://127.0.0.1:1", "CLAUDE_CODE_SESSION_ID": "s1"}, "claim", "--claim", "done", "--validator", "test_pass", "--args", `{"command_substring":"go test"}`)
	if r.code != ClaimTransport || !strings.Contains(r.stderr, "127.0.0.1:1") {
		t.Errorf("no NATS: %+v", r)
	}
	// Inside Codex the session is its thread id.
	r = runCLI(t, map[string]string{"CLAIMCHECK_NATS_URL": "nats://127.0.0.1:1", "CODEX_THREAD_ID": "01a22199-878f-7be2-a030-2bfedacfeda7"},
		"claim", "--claim", "done", "--validator", "test_pass", "--args", `{"command_substring":"go test"}`)
	if r.code != ClaimTransport || !strings.Contains(r.stderr, "127.0.0.1:1") {
		t.Errorf("session from CODEX_THREAD_ID, no NATS: %+v", r)
	}
	// Inside Gemini CLI there is none to take (GEMINI_CLI=1 only): the
	// error says so and what to pass.
	r = runCLI(t, map[string]string{"CLAIMCHECK_NATS_URL": "nats://127.0.0.1:1", "GEMINI_CLI": "1"},
		"claim", "--claim", "done", "--validator", "test_pass", "--args", `{"command_substring":"go test"}`)
	if r.code != ClaimBadInput || !strings.Contains(r.stderr, "Gemini CLI gives the commands it runs no session id; pass --session") {
		t.Errorf("inside Gemini CLI without --session: %+v", r)
	}
}

// A claim never asks while events of its session sit in this host's hook
// spool: they would be chained after the claim and judged as missing.
// Here no claimcheck-hook is beside this test binary (the only place the
// claim takes it from: one on $PATH, here a fake that succeeds, is never
// run), so the spool cannot be delivered and the claim refuses with exit
// 4, naming the spool; another session's spooled events do not hold it
// up.
func TestClaimRefusesWhileItsSessionIsSpooled(t *testing.T) {
	s := natstest.RunServer(t)
	_, js := natstest.Connect(t, s.ClientURL())
	natstest.Bootstrap(t, js, nil)
	state := t.TempDir()
	spool := filepath.Join(state, "spool")
	if err := os.MkdirAll(spool, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"0000000000000001.01M8HXKGBXAD4SNNA4VBMCTDME.s1.PostToolUse.evt",
		"0000000000000002.01M8HXKGBXAD4SNNA4VBMCTDMF.s1.PreToolUse.evt", "0000000000000003.01M8HXKGBXAD4SNNA4VBMCTDMG.other.Stop.evt"} {
		if err := os.WriteFile(filepath.Join(spool, name), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", filepath.Dir(fakeHook(t)))
	claim := func(session string) res {
		return runCLI(t, map[string]string{"CLAIMCHECK_NATS_URL": s.ClientURL(), "CLAIMCHECK_HOOK_STATE_DIR": state, "CLAUDE_CODE_SESSION_ID": session},
			"claim", "--claim", "done", "--validator", "test_pass", "--args", `{"command_substring":"go test"}`, "--timeout", "1s")
	}
	r := claim("s1")
	if r.code != ClaimTransport || !strings.Contains(r.stderr, "2 events of session s1 are still in this host's hook spool ("+spool+")") ||
		!strings.Contains(r.stderr, "claimcheck-hook not found beside") {
		t.Fatalf("claim with its session spooled: %+v", r)
	}
	// Nothing of s2 is spooled: the claim goes on (to the ledger, which
	// has never seen s2).
	if r := claim("s2"); r.code != ClaimBadInput || !strings.Contains(r.stderr, "unknown session s2") {
		t.Fatalf("claim of a session with nothing spooled: %+v", r)
	}
}

package e2e

import (
	"bufio"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/secure-systems-lab/go-securesystemslib/dsse"

	"github.com/claimcheck/claimcheck/pkg/clientcontract"
	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/schemas"
)

// agent drives one Claude Code session through the built claimcheck-hook
// and asks for verdicts with the built claimcheck, as an agent would.
type agent struct {
	t        *testing.T
	env      []string
	session  string
	prompts  int    // prompts submitted so far
	promptID string // the current prompt's prompt_id, as Claude Code sends it
}

func newAgent(t *testing.T, env []string, session string) *agent {
	return &agent{t: t, env: env, session: session, promptID: session + "-prompt-0"}
}

// payload is one hook payload in Claude Code's shape (the common fields,
// then the event's own), checked against what the pinned client sends
// (pkg/clientcontract).
func (a *agent) payload(event, fields string) []byte {
	a.t.Helper()
	common := fmt.Sprintf(`"session_id":%q,"transcript_path":"/home/user/.claude/projects/-repo/%s.jsonl","cwd":"/repo",`, a.session, a.session)
	switch event {
	case schemas.HookSessionStart:
	case schemas.HookSessionEnd:
		common += fmt.Sprintf(`"prompt_id":%q,`, a.promptID)
	default:
		common += fmt.Sprintf(`"permission_mode":"default","prompt_id":%q,`, a.promptID)
	}
	p := []byte(fmt.Sprintf(`{%s"hook_event_name":%q,%s}`, common, event, fields))
	clientcontract.Complete(a.t, p)
	return p
}

// hook sends one hook payload and expects it recorded.
func (a *agent) hook(event, fields string) {
	a.t.Helper()
	if r := runBin(a.t, a.env, a.payload(event, fields), "claimcheck-hook"); r.code != 0 {
		a.t.Fatalf("hook %s: %+v", event, r)
	}
}

func (a *agent) prompt(text string) {
	a.prompts++
	a.promptID = fmt.Sprintf("%s-prompt-%d", a.session, a.prompts)
	a.hook(schemas.HookUserPromptSubmit, fmt.Sprintf(`"prompt":%q`, text))
}

func (a *agent) bash(cmd, stdout string) {
	a.call("PostToolUse", "Bash", fmt.Sprintf(`{"command":%q,"description":"run"}`, cmd), "tool_response", fmt.Sprintf(`{"stdout":%q,"stderr":"","interrupted":false,"isImage":false}`, stdout))
}

func (a *agent) bashFail(cmd, errText string) {
	a.call("PostToolUseFailure", "Bash", fmt.Sprintf(`{"command":%q}`, cmd), "error", fmt.Sprintf(`%q,"is_interrupt":false`, errText))
}

func (a *agent) edit(path string) {
	a.call("PostToolUse", "Edit", fmt.Sprintf(`{"file_path":%q,"old_string":"a","new_string":"b","replace_all":false}`, path), "tool_response",
		fmt.Sprintf(`{"filePath":%q,"oldString":"a","newString":"b","structuredPatch":[],"userModified":false}`, path))
}

func (a *agent) tool(event, name, input, result string) {
	key := "tool_response"
	if event == schemas.HookPostToolUseFailure {
		key, result = "error", result+`,"is_interrupt":false` // Claude Code sends both with every failure
	}
	a.call(event, name, input, key, result)
}

// call makes one tool call as Claude Code's tool loop reports it: a
// PreToolUse, then the result event with the same tool_use_id and
// tool_input.
func (a *agent) call(event, name, input, key, result string) {
	a.t.Helper()
	useID := fmt.Sprintf("toolu_%d", time.Now().UnixNano())
	a.hook("PreToolUse", fmt.Sprintf(`"tool_name":%q,"tool_input":%s,"tool_use_id":%q`, name, input, useID))
	a.hook(event, fmt.Sprintf(`"tool_name":%q,"tool_input":%s,%q:%s,"tool_use_id":%q`, name, input, key, result, useID))
}

// verdict is what `claimcheck claim --json` promises.
type verdict struct {
	Verdict       string   `json:"verdict"`
	Reasons       []string `json:"reasons"`
	NextStep      string   `json:"next_step"`
	AttestationID string   `json:"attestation_id"`
	RequestID     string   `json:"request_id"`
}

// claim runs `claimcheck claim --json` with the session from the
// environment, as inside Claude Code.
func (a *agent) claim(claimType, validator, args string) (verdict, result) {
	a.t.Helper()
	env := append([]string{"CLAUDE_CODE_SESSION_ID=" + a.session}, a.env...)
	r := runBin(a.t, env, nil, "claimcheck", "claim", "--claim", claimType, "--validator", validator, "--args", args, "--json", "--timeout", "30s")
	var v verdict
	if r.code <= 3 && r.code != 1 {
		if err := json.Unmarshal([]byte(r.stdout), &v, json.RejectUnknownMembers(false)); err != nil {
			a.t.Fatalf("claim --json output is not a verdict: %v\n%+v", err, r)
		}
	}
	return v, r
}

const (
	matrixPrompt = "Fix the failing test in `src/app.test.ts`, run `go test ./...`, deploy and check https://app.example.com/healthz; fetch the docs from https://docs.vendor.example/api if needed."
	ladderPrompt = "Fetch the release notes from https://api.vendor.example/v2/releases and summarise them"
	goTestPass   = "ok  \tgithub.com/acme/app/store\t0.412s\nok  \tgithub.com/acme/app/api\t0.120s\n"
	goTestFail   = "Exit code 1\n--- FAIL: TestStore (0.00s)\n    store_test.go:9: got 2, want 3\nFAIL\nFAIL\tgithub.com/acme/app/store\t0.013s\nFAIL"
)

// TestClaimDeliversItsSessionsSpooledEventsFirst: the test run of a
// session reaches the hook while NATS is out of its reach, so the hook
// spools it (exit 0, as Claude Code needs); the claim right after delivers
// the spool before it asks, so the run is in the chain before the claim
// and the verdict is PASS, not "no run found".
func TestClaimDeliversItsSessionsSpooledEventsFirst(t *testing.T) {
	dir := t.TempDir()
	_, url := up(t, filepath.Join(dir, "data"), "127.0.0.1:0")
	state := filepath.Join(dir, "hook")
	env := []string{"CLAIMCHECK_NATS_URL=" + url, "CLAIMCHECK_HOOK_STATE_DIR=" + state, "CLAIMCHECK_HOOK_GATE=false"}
	a := newAgent(t, env, "spooled-run")
	a.prompt(matrixPrompt)
	a.edit("/repo/src/app.test.ts")
	away := newAgent(t, append(env[:len(env):len(env)], fmt.Sprintf("CLAIMCHECK_NATS_URL=nats://127.0.0.1:%d", natstest.FreePort(t))), a.session)
	away.promptID = a.promptID
	away.bash("go test ./...", goTestPass)
	if spooled, _ := filepath.Glob(filepath.Join(state, "spool", "*.spooled-run.*.evt")); len(spooled) != 2 {
		t.Fatalf("the run's PreToolUse and PostToolUse were not spooled: %v", spooled)
	}
	v, r := a.claim("done", "test_pass", `{"command_substring":"go test ./..."}`)
	if r.code != 0 || v.Verdict != schemas.Pass || !strings.Contains(r.stderr, "delivered this session's 2 spooled events before the claim") {
		t.Fatalf("claim after a spooled run: %+v %+v", v, r)
	}
}

// TestValidatorMatrixEndToEnd: every validator × PASS / FAIL / REFUSED,
// from Claude Code hook payloads through claimcheck-hook, ingest, the
// ledger and the verifier to `claimcheck claim`'s exit code and output.
func TestValidatorMatrixEndToEnd(t *testing.T) {
	dir := t.TempDir()
	_, url := up(t, filepath.Join(dir, "data"), "127.0.0.1:0")
	env := []string{"CLAIMCHECK_NATS_URL=" + url, "CLAIMCHECK_HOOK_STATE_DIR=" + filepath.Join(dir, "hook"), "CLAIMCHECK_HOOK_GATE=false"}
	cases := []struct {
		name, claim, validator, args string
		build                        func(a *agent)
		want                         string
		reason                       string // in a reason (or the next step)
	}{
		{"cze pass", "done", "command_zero_exit", `{"command_substring":"go test ./..."}`, func(a *agent) {
			a.prompt(matrixPrompt)
			a.bash("go test ./...", goTestPass)
		}, "PASS", ""},
		{"cze fail exit 1", "done", "command_zero_exit", `{"command_substring":"go test ./..."}`, func(a *agent) {
			a.prompt(matrixPrompt)
			a.bashFail("go test ./...", goTestFail)
		}, "FAIL", "Exit code 1"},
		{"cze refused unbound", "done", "command_zero_exit", `{"command_substring":"echo fixed"}`, func(a *agent) {
			a.prompt(matrixPrompt)
			a.bash("echo fixed", "fixed")
		}, "REFUSED", "not bound"},
		{"test pass", "done", "test_pass", `{"command_substring":"go test ./...","min_runs":1}`, func(a *agent) {
			a.prompt(matrixPrompt)
			a.edit("/repo/src/app.test.ts")
			a.bash("go test ./...", goTestPass)
		}, "PASS", ""},
		{"test fail stale after edit", "done", "test_pass", `{"command_substring":"go test ./..."}`, func(a *agent) {
			a.prompt(matrixPrompt)
			a.bash("go test ./...", goTestPass)
			a.edit("/repo/src/app.test.ts")
		}, "FAIL", "edit of /repo/src/app.test.ts"},
		{"test fail exit 1", "done", "test_pass", `{"command_substring":"go test ./..."}`, func(a *agent) {
			a.prompt(matrixPrompt)
			a.bashFail("go test ./...", goTestFail)
		}, "FAIL", "Exit code 1"},
		{"test fail filtered output", "done", "test_pass", `{"command_substring":"go test ./..."}`, func(a *agent) {
			a.prompt(matrixPrompt)
			a.bash("go test ./... 2>&1 | tail -1", "ok  \tgithub.com/acme/app/internal/store\t0.412s\n")
		}, "FAIL", "went through `tail -1`"},
		{"cze fail masked exit", "done", "command_zero_exit", `{"command_substring":"go test ./..."}`, func(a *agent) {
			a.prompt(matrixPrompt)
			a.bash("go test ./... || true", goTestFail)
		}, "FAIL", "`||` ignores its failure"},
		{"test refused weak", "done", "test_pass", `{"command_substring":"go"}`, func(a *agent) {
			a.prompt(matrixPrompt)
			a.bash("go test ./...", goTestPass)
		}, "REFUSED", ""},
		{"diff pass", "done", "file_diff_present", `{"path":"src/app.test.ts"}`, func(a *agent) {
			a.prompt(matrixPrompt)
			a.edit("/repo/src/app.test.ts")
		}, "PASS", ""},
		{"diff fail", "done", "file_diff_present", `{"path":"src/app.test.ts"}`, func(a *agent) {
			a.prompt(matrixPrompt)
			a.edit("/repo/src/other.ts")
		}, "FAIL", "src/app.test.ts"},
		{"diff refused", "done", "file_diff_present", `{"path":"src/other.ts"}`, func(a *agent) {
			a.prompt(matrixPrompt)
			a.edit("/repo/src/other.ts")
		}, "REFUSED", "not one of the contract's paths"},
		{"http pass", "done", "http_2xx", `{"url":"https://app.example.com/healthz"}`, func(a *agent) {
			a.prompt(matrixPrompt)
			a.tool("PostToolUse", "WebFetch", `{"url":"https://app.example.com/healthz","prompt":"status?"}`, `{"bytes":2,"code":200,"codeText":"OK","result":"ok","durationMs":80,"url":"https://app.example.com/healthz"}`)
		}, "PASS", ""},
		{"http fail 503", "done", "http_2xx", `{"url":"https://app.example.com/healthz"}`, func(a *agent) {
			a.prompt(matrixPrompt)
			a.bash("curl -s -o /dev/null -w '%{http_code}\\n' https://app.example.com/healthz", "503\n")
		}, "FAIL", "503"},
		{"http refused", "done", "http_2xx", `{"url":"https://evil.example/healthz"}`, func(a *agent) {
			a.prompt(matrixPrompt)
		}, "REFUSED", "not one of the contract's URLs"},
		{"fetch pass", "delegation", "fetch_attempt_proof", `{"keyword":"docs.vendor.example"}`, func(a *agent) {
			a.prompt(matrixPrompt)
			a.tool("PostToolUseFailure", "WebFetch", `{"url":"https://docs.vendor.example/api","prompt":"api"}`, `"Request failed with status code 403"`)
			a.bashFail("curl -sSf https://docs.vendor.example/api", "Exit code 22\ncurl: (22) The requested URL returned error: 403")
			a.tool("PostToolUse", "WebSearch", `{"query":"docs.vendor.example api reference"}`, `"No results found; blocked"`)
		}, "PASS", ""},
		{"fetch fail two tools", "delegation", "fetch_attempt_proof", `{"keyword":"docs.vendor.example"}`, func(a *agent) {
			a.prompt(matrixPrompt)
			a.tool("PostToolUseFailure", "WebFetch", `{"url":"https://docs.vendor.example/api","prompt":"api"}`, `"Request failed with status code 403"`)
			a.bashFail("curl https://docs.vendor.example/api", "Exit code 6\ncurl: (6) Could not resolve host")
		}, "FAIL", "3 different fetch tools"},
		{"fetch refused unbound keyword", "delegation", "fetch_attempt_proof", `{"keyword":"weather"}`, func(a *agent) {
			a.prompt(matrixPrompt)
		}, "REFUSED", "not bound"},
		{"ladder pass", "blocked", "ladder_exhaustion_proof", `{}`, func(a *agent) {
			a.prompt(ladderPrompt)
			a.tool("PostToolUseFailure", "WebFetch", `{"url":"https://api.vendor.example/v2/releases","prompt":"notes"}`, `"Request failed with status code 401"`)
			a.tool("PostToolUse", "WebSearch", `{"query":"vendor release notes"}`, `"results: none"`)
		}, "PASS", ""},
		{"ladder fail hop missing", "blocked", "ladder_exhaustion_proof", `{}`, func(a *agent) {
			a.prompt(ladderPrompt)
			a.tool("PostToolUseFailure", "WebFetch", `{"url":"https://api.vendor.example/v2/releases","prompt":"notes"}`, `"Request failed with status code 401"`)
		}, "FAIL", "not attempted"},
		{"ladder refused for done", "done", "ladder_exhaustion_proof", `{}`, func(a *agent) {
			a.prompt(ladderPrompt)
		}, "REFUSED", "may not back a done claim"},
		{"no contract", "done", "test_pass", `{"command_substring":"go test ./..."}`, func(a *agent) {
			a.prompt("what does this repository do?")
			a.bash("go test ./...", goTestPass)
		}, "REFUSED", "no contract"},
	}
	wantCode := map[string]int{"PASS": 0, "FAIL": 2, "REFUSED": 3}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := newAgent(t, env, fmt.Sprintf("matrix-%02d", i))
			tc.build(a)
			v, r := a.claim(tc.claim, tc.validator, tc.args)
			if r.code != wantCode[tc.want] || v.Verdict != tc.want {
				t.Fatalf("exit %d verdict %s, want %d %s\n%+v", r.code, v.Verdict, wantCode[tc.want], tc.want, r)
			}
			all := strings.Join(v.Reasons, " | ") + " | " + v.NextStep
			if !strings.Contains(all, tc.reason) {
				t.Errorf("reasons %q do not mention %q", all, tc.reason)
			}
			if tc.want == "PASS" && v.AttestationID == "" {
				t.Error("PASS without attestation_id")
			}
			if tc.want != "PASS" && (len(v.Reasons) == 0 || v.NextStep == "") {
				t.Errorf("%s without reasons or next step: %+v", tc.want, v)
			}
			// The verdict is in the session's chain right after its claim.
			entries, _ := show(t, url, a.session, 1)
			last := entries[len(entries)-1]
			for tries := 0; last.Kind != "verdict" && tries < 50; tries++ {
				time.Sleep(20 * time.Millisecond)
				entries, _ = show(t, url, a.session, 1)
				last = entries[len(entries)-1]
			}
			if last.Kind != "verdict" || entries[len(entries)-2].Kind != "claim" {
				t.Fatalf("chain ends with %s after %s, want claim then verdict", last.Kind, entries[len(entries)-2].Kind)
			}
		})
	}
	// The human form, for a model to read.
	a := newAgent(t, env, "matrix-human")
	a.prompt(matrixPrompt)
	a.bash("go test ./...", goTestPass)
	a.edit("/repo/src/app.test.ts")
	r := runBin(t, append([]string{"CLAUDE_CODE_SESSION_ID=" + a.session}, env...), nil, "claimcheck", "claim", "--claim", "done", "--validator", "test_pass", "--args", `{"command_substring":"go test ./..."}`)
	if r.code != 2 || !strings.Contains(r.stdout, "FAIL: done claim") || !strings.Contains(r.stdout, "next step: re-run `go test ./...` after your last edit") {
		t.Fatalf("human FAIL output: %+v", r)
	}
	if r := runBin(t, env, nil, "claimcheck", "ledger", "verify"); r.code != 0 {
		t.Fatalf("ledger verify after the matrix: %+v", r)
	}
}

// TestSeedBypassesRefusedEndToEnd: the bypasses the seed's v3 rules closed
// are refused through the whole system.
func TestSeedBypassesRefusedEndToEnd(t *testing.T) {
	dir := t.TempDir()
	_, url := up(t, filepath.Join(dir, "data"), "127.0.0.1:0")
	env := []string{"CLAIMCHECK_NATS_URL=" + url, "CLAIMCHECK_HOOK_STATE_DIR=" + filepath.Join(dir, "hook"), "CLAIMCHECK_HOOK_GATE=false"}
	a := newAgent(t, env, "bypass")
	a.prompt("Refactor utils/parsing.py to use dataclasses and run pytest tests/test_parsing.py -q")
	a.bash("echo parsing dataclasses", "parsing dataclasses")
	a.bash("pytest tests/test_other.py -q", "3 passed in 0.01s\n")
	a.edit("/repo/docs/notes.md")
	for _, c := range []struct{ validator, args, why string }{
		{"command_zero_exit", `{"command_substring":"echo parsing dataclasses"}`, "a command that only shares keywords"},
		{"file_diff_present", `{"path":"docs/notes.md"}`, "a path not among the target paths"},
		{"test_pass", `{"command_substring":"parsing"}`, "a keyword as the whole argument (bag of words) with target fields present"},
		{"test_pass", `{"command_substring":"pytest"}`, "the runner alone, matching an unrelated test file's run"},
	} {
		v, r := a.claim("done", c.validator, c.args)
		if r.code != 3 || v.Verdict != "REFUSED" {
			t.Errorf("%s (%s %s): exit %d %s %q, want REFUSED", c.why, c.validator, c.args, r.code, v.Verdict, v.Reasons)
		}
	}
}

// TestClaimBadInputEndToEnd: bad claim input gets a clear error and exit 1,
// and nothing is recorded for it; an unknown validator is a recorded REFUSED.
func TestClaimBadInputEndToEnd(t *testing.T) {
	dir := t.TempDir()
	_, url := up(t, filepath.Join(dir, "data"), "127.0.0.1:0")
	env := []string{"CLAIMCHECK_NATS_URL=" + url, "CLAIMCHECK_HOOK_STATE_DIR=" + filepath.Join(dir, "hook"), "CLAIMCHECK_HOOK_GATE=false"}
	a := newAgent(t, env, "bad-claims")
	a.prompt(matrixPrompt)
	a.bash("go test ./...", goTestPass)
	before, _ := show(t, url, a.session, 3)
	for _, c := range []struct{ name, args, msg string }{
		{"malformed", `{"command_substring":`, "not valid JSON"},
		{"not an object", `["go test"]`, "must be a JSON object"},
		{"duplicate member", `{"command_substring":"go test ./...","command_substring":"x"}`, "duplicate"},
		{"oversized", `{"command_substring":"` + strings.Repeat("a", 9000) + `"}`, "limit is 8192"},
	} {
		_, r := a.claim("done", "test_pass", c.args)
		if r.code != 1 || !strings.Contains(r.stderr, c.msg) {
			t.Errorf("%s: exit %d stderr %q, want exit 1 and %q", c.name, r.code, r.stderr, c.msg)
		}
	}
	// Unknown session: exit 1 naming it. The agent's claim runs with the
	// host's hook identity, which may not read the ledger: the request is
	// chained (alone) and the verifier answers that nothing of the session
	// came before it, judging nothing.
	r := runBin(t, append([]string{"CLAUDE_CODE_SESSION_ID=no-such-session"}, env...), nil, "claimcheck", "claim", "--claim", "done", "--validator", "test_pass", "--args", `{"command_substring":"go test ./..."}`)
	if r.code != 1 || !strings.Contains(r.stderr, "unknown session no-such-session") {
		t.Fatalf("unknown session: %+v", r)
	}
	if entries, _ := show(t, url, "no-such-session", 1); len(entries) != 1 || entries[0].Kind != "claim" {
		t.Fatalf("the unknown session's chain holds %+v, want its claim alone and no verdict", entries)
	}
	// No session at all.
	r = runBin(t, env, nil, "claimcheck", "claim", "--claim", "done", "--validator", "test_pass")
	if r.code != 1 || !strings.Contains(r.stderr, "CLAUDE_CODE_SESSION_ID") {
		t.Fatalf("no session: %+v", r)
	}
	// Unknown flag: a usage error, never mistaken for FAIL (2).
	r = runBin(t, env, nil, "claimcheck", "claim", "--bogus")
	if r.code != 1 || !strings.Contains(r.stderr, "bogus") {
		t.Fatalf("unknown flag: %+v", r)
	}
	// None of that reached the ledger.
	after, _ := show(t, url, a.session, 3)
	if len(after) != len(before) {
		t.Fatalf("bad claims were recorded: %d entries, was %d", len(after), len(before))
	}
	// An unknown validator is a verdict: REFUSED, recorded.
	v, r := a.claim("done", "vibes_check", `{}`)
	if r.code != 3 || v.Verdict != "REFUSED" || !strings.Contains(strings.Join(v.Reasons, " "), `unknown validator "vibes_check"`) {
		t.Fatalf("unknown validator: %+v %+v", v, r)
	}
	// Transport: no NATS → exit 4 with the address.
	r = runBin(t, []string{"CLAIMCHECK_NATS_URL=nats://127.0.0.1:1", "CLAUDE_CODE_SESSION_ID=bad-claims"}, nil, "claimcheck", "claim", "--claim", "done", "--validator", "test_pass", "--args", `{"command_substring":"go test ./..."}`)
	if r.code != 4 || !strings.Contains(r.stderr, "127.0.0.1:1") {
		t.Fatalf("no NATS: %+v", r)
	}
}

// TestPolicyFileWithUnknownFieldStopsUp: a bad policy file stops claimcheck
// with an error naming the file and the field.
func TestPolicyFileWithUnknownFieldStopsUp(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.json")
	src, err := os.ReadFile(filepath.Join("..", "schemas", "policy", "default.json"))
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(src), `"test_pass": {`, `"test_pass": {"timeout_s": 5, `, 1)
	if err := os.WriteFile(policy, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runBin(t, []string{"CLAIMCHECK_VERIFIER_POLICY_FILE=" + policy}, nil, "claimcheck", "up", "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0", "--http-listen", "")
	if r.code == 0 || !strings.Contains(r.stderr, policy) || !strings.Contains(r.stderr, "timeout_s") {
		t.Fatalf("up with a bad policy: %+v", r)
	}
}

// TestKeysRotateRevokeAndVerifyEndToEnd: attestations made before a rotation
// still verify after it; a revocation at T fails what was signed after T
// and keeps what was signed before; forged envelopes are rejected; exported
// attestations verify offline and with an independent DSSE implementation.
func TestKeysRotateRevokeAndVerifyEndToEnd(t *testing.T) {
	dir := t.TempDir()
	_, url := up(t, filepath.Join(dir, "data"), "127.0.0.1:0")
	env := []string{"CLAIMCHECK_NATS_URL=" + url, "CLAIMCHECK_HOOK_STATE_DIR=" + filepath.Join(dir, "hook"), "CLAIMCHECK_HOOK_GATE=false", "CLAIMCHECK_DATA_DIR=" + filepath.Join(dir, "data")}
	a := newAgent(t, env, "keys")
	a.prompt(matrixPrompt)
	pass := func() string {
		t.Helper()
		a.bash("go test ./...", goTestPass)
		v, r := a.claim("done", "test_pass", `{"command_substring":"go test ./..."}`)
		if r.code != 0 {
			t.Fatalf("claim: %+v", r)
		}
		return v.AttestationID
	}
	cli := func(args ...string) result {
		t.Helper()
		return runBin(t, env, nil, "claimcheck", args...)
	}
	att1 := pass()
	// Rotate with an overlap: both keys sign for a while.
	if r := cli("keys", "rotate", "--algorithm", "ed25519", "--overlap", "1h"); r.code != 0 || !strings.Contains(r.stdout, "created v2 (ed25519)") {
		t.Fatalf("rotate: %+v", r)
	}
	var att2 string
	deadline := time.Now().Add(20 * time.Second)
	for {
		att2 = pass()
		if strings.Contains(exportOne(t, env, att2), `"keyid":"v2"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the verifier never signed with the rotated-in key")
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Rotate again without overlap: from now only v3 signs.
	if r := cli("keys", "rotate", "--overlap", "0s"); r.code != 0 || !strings.Contains(r.stdout, "created v3 (ecdsa-p256-sha256)") {
		t.Fatalf("rotate: %+v", r)
	}
	var att3 string
	for deadline := time.Now().Add(20 * time.Second); ; {
		att3 = pass()
		if e := exportOne(t, env, att3); strings.Contains(e, `"keyid":"v3"`) && !strings.Contains(e, `"keyid":"v2"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the verifier never signed with v3 alone")
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	revokeAt := time.Now().UTC()
	time.Sleep(50 * time.Millisecond)
	att4 := pass()

	if r := cli("attest", "verify"); r.code != 0 || !strings.Contains(r.stdout, "4 verified, 0 failed") {
		t.Fatalf("online verify after rotations: %+v", r)
	}
	// Revoke v3 at a time between att3 and att4.
	if r := cli("keys", "revoke", "v3", "--at", revokeAt.Format(time.RFC3339Nano)); r.code != 0 {
		t.Fatalf("revoke: %+v", r)
	}
	r := cli("attest", "verify", "--session", "keys")
	if r.code != 1 || !strings.Contains(r.stdout, "3 verified, 1 failed") || !strings.Contains(r.stdout, "revoked") {
		t.Fatalf("online verify after revocation: %+v", r)
	}
	for _, id := range []string{att1, att2, att3} {
		if !strings.Contains(r.stdout, "ok   "+id) {
			t.Errorf("attestation %s from before the revocation no longer verifies:\n%s", id, r.stdout)
		}
	}
	// keys list shows the statuses.
	if r := cli("keys", "list"); !strings.Contains(r.stdout, "v1") || !strings.Contains(r.stdout, "revoked") || !strings.Contains(r.stdout, "retired") {
		t.Fatalf("keys list: %+v", r)
	}

	// Offline: the exported key set and attestations.
	keysFile := filepath.Join(dir, "keys.json")
	attFile := filepath.Join(dir, "attestations.jsonl")
	kr := cli("keys", "export")
	ar := cli("attest", "export", "--session", "keys")
	if kr.code != 0 || ar.code != 0 {
		t.Fatalf("export: %+v %+v", kr, ar)
	}
	writeFileT(t, keysFile, kr.stdout)
	writeFileT(t, attFile, ar.stdout)
	r = cli("attest", "verify", "--keys", keysFile, attFile)
	if r.code != 1 || !strings.Contains(r.stdout, "3 verified, 1 failed") || !strings.Contains(r.stdout, attFile+":4: ") {
		t.Fatalf("offline verify: %+v", r)
	}

	// Forgeries, offline.
	lines := strings.Split(strings.TrimSpace(ar.stdout), "\n")
	env1, env2 := decodeEnvelope(t, lines[0]), decodeEnvelope(t, lines[1])
	forged := map[string]dsse.Envelope{}
	unknown := env1
	unknown.Signatures = []dsse.Signature{{KeyID: "v99", Sig: env1.Signatures[0].Sig}}
	forged["unknown key"] = unknown
	otherType := env1
	otherType.PayloadType = "application/vnd.claimcheck.other+json"
	forged["other payload type"] = otherType
	copied := env1 // att2's signatures over att1's statement (another range)
	copied.Signatures = env2.Signatures
	forged["signature copied onto another range"] = copied
	for name, e := range forged {
		b, _ := json.Marshal(e)
		f := filepath.Join(dir, "forged.jsonl")
		writeFileT(t, f, string(b)+"\n")
		r := cli("attest", "verify", "--keys", keysFile, f)
		if r.code != 1 || !strings.Contains(r.stdout, "0 verified, 1 failed") {
			t.Errorf("%s: %+v", name, r)
		}
	}
	// Online, a forged copy differs from what ATTEST holds.
	b, _ := json.Marshal(copied)
	f := filepath.Join(dir, "forged-online.jsonl")
	writeFileT(t, f, string(b)+"\n")
	if r := cli("attest", "verify", f); r.code != 1 || !strings.Contains(r.stdout, "differs from the attestation ATTEST holds") {
		t.Errorf("online forged: %+v", r)
	}

	// An independent DSSE implementation (go-securesystemslib with Go's
	// crypto) accepts every exported attestation made before the revocation.
	verifyIndependently(t, kr.stdout, lines[:3])
	_ = att4
}

func writeFileT(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// exportOne returns the exported envelope of one attestation.
func exportOne(t *testing.T, env []string, attID string) string {
	t.Helper()
	r := runBin(t, env, nil, "claimcheck", "attest", "export", "--session", "keys")
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		e := decodeEnvelope(t, sc.Text())
		payload, _ := base64.StdEncoding.DecodeString(e.Payload)
		if strings.Contains(string(payload), `"attestation_id":"`+attID+`"`) {
			return sc.Text()
		}
	}
	t.Fatalf("attestation %s not exported:\n%s", attID, r.stdout)
	return ""
}

func decodeEnvelope(t *testing.T, line string) dsse.Envelope {
	t.Helper()
	var e dsse.Envelope
	if err := json.Unmarshal([]byte(line), &e, json.RejectUnknownMembers(true)); err != nil {
		t.Fatalf("exported line is not a DSSE envelope: %v\n%s", err, line)
	}
	return e
}

// goVerifier verifies DSSE signatures with Go's standard library only.
type goVerifier struct {
	keyID string
	pub   crypto.PublicKey
}

func (v goVerifier) Verify(_ context.Context, data, sig []byte) error {
	switch k := v.pub.(type) {
	case *ecdsa.PublicKey:
		h := sha256.Sum256(data)
		if ecdsa.VerifyASN1(k, h[:], sig) {
			return nil
		}
	case ed25519.PublicKey:
		if ed25519.Verify(k, data, sig) {
			return nil
		}
	}
	return errors.New("signature does not verify")
}
func (v goVerifier) KeyID() (string, error)   { return v.keyID, nil }
func (v goVerifier) Public() crypto.PublicKey { return v.pub }

func verifyIndependently(t *testing.T, keySet string, envelopes []string) {
	t.Helper()
	var keys []struct {
		KeyID        string `json:"keyid"`
		PublicKeyPEM string `json:"public_key_pem"`
	}
	if err := json.Unmarshal([]byte(keySet), &keys, json.RejectUnknownMembers(false)); err != nil {
		t.Fatal(err)
	}
	byID := map[string]goVerifier{}
	for _, k := range keys {
		block, _ := pem.Decode([]byte(k.PublicKeyPEM))
		if block == nil {
			t.Fatalf("key %s: no PEM", k.KeyID)
		}
		pub, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			t.Fatalf("key %s: %v", k.KeyID, err)
		}
		byID[k.KeyID] = goVerifier{keyID: k.KeyID, pub: pub}
	}
	for i, line := range envelopes {
		e := decodeEnvelope(t, line)
		if e.PayloadType != "application/vnd.in-toto+json" {
			t.Fatalf("envelope %d: payload type %s", i, e.PayloadType)
		}
		var vs []dsse.Verifier
		for _, s := range e.Signatures {
			v, ok := byID[s.KeyID]
			if !ok {
				t.Fatalf("envelope %d: keyid %q is not in the exported key set", i, s.KeyID)
			}
			vs = append(vs, v)
		}
		ev, err := dsse.NewMultiEnvelopeVerifier(len(vs), vs...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ev.Verify(context.Background(), &e); err != nil {
			t.Fatalf("envelope %d does not verify independently: %v", i, err)
		}
		tampered := e
		tampered.Payload = base64.StdEncoding.EncodeToString([]byte(`{"_type":"https://in-toto.io/Statement/v1"}`))
		if _, err := ev.Verify(context.Background(), &tampered); err == nil {
			t.Fatalf("envelope %d: the independent verifier accepted a replaced payload", i)
		}
	}
}

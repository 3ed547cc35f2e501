package validate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/clientcontract"
	"github.com/claimcheck/claimcheck/pkg/contract"
	"github.com/claimcheck/claimcheck/pkg/evidence"
	"github.com/claimcheck/claimcheck/pkg/policy"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/schemas/validation"
)

// ledger builds evidence entries from hook payloads.
type ledger struct {
	entries  []evidence.Entry
	payloads []string // what add was given, for TestFixturesAreClientShaped
}

func (l *ledger) add(kind, hookEvent, tool, payload string) {
	n := uint64(len(l.entries) + 1)
	e := schemas.Entry{N: n, Hash: fmt.Sprintf("sha256:%064d", n), EventID: fmt.Sprintf("01JD%022d", n), Kind: kind, HookEvent: hookEvent, ToolName: tool}
	if payload != "" {
		e.Payload = &payload
		l.payloads = append(l.payloads, payload)
	}
	l.entries = append(l.entries, evidence.Decode(e))
}

func (l *ledger) prompt(text string) {
	c, ok := contract.Derive(contract.Prompt{SessionID: "s", EventID: "01JDB3H5KX0000000000000000", Text: text})
	l.add(schemas.EntryEvent, "UserPromptSubmit", "", fmt.Sprintf(`{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":%q}`, text))
	if ok {
		n := uint64(len(l.entries) + 1)
		l.entries = append(l.entries, evidence.Entry{N: n, Hash: fmt.Sprintf("sha256:%064d", n), Kind: schemas.EntryContract, Contract: &c})
	}
}

func (l *ledger) bash(cmd, stdout string) {
	l.add(schemas.EntryEvent, "PostToolUse", "Bash", fmt.Sprintf(`{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":%q},"tool_response":{"stdout":%q,"stderr":"","interrupted":false,"isImage":false}}`, cmd, stdout))
}

func (l *ledger) bashFail(cmd, errText string) {
	l.add(schemas.EntryEvent, "PostToolUseFailure", "Bash", fmt.Sprintf(`{"session_id":"s","hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":%q},"error":%q}`, cmd, errText))
}

func (l *ledger) edit(path string) {
	l.add(schemas.EntryEvent, "PostToolUse", "Edit", fmt.Sprintf(`{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{"file_path":%q,"old_string":"a","new_string":"b"},"tool_response":{"filePath":%q,"oldString":"a","newString":"b","structuredPatch":[],"userModified":false}}`, path, path))
}

func (l *ledger) tool(hookEvent, tool, input, response string) {
	resp := ""
	if hookEvent == "PostToolUse" {
		resp = `,"tool_response":` + response
	} else {
		resp = `,"error":` + response
	}
	l.add(schemas.EntryEvent, hookEvent, tool, fmt.Sprintf(`{"session_id":"s","hook_event_name":%q,"tool_name":%q,"tool_input":%s%s}`, hookEvent, tool, input, resp))
}

func defaultPolicy(t testing.TB) *policy.Policy {
	v, err := validation.New()
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.Default(v)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func claim(c, v string, args any) schemas.Claim {
	b, _ := json.Marshal(args)
	return schemas.Claim{Claim: c, Validator: v, Args: b, RequestID: "01JDB3H5KX0000000000000001", ReplyTo: "_INBOX.x"}
}

const (
	jestPass = "PASS src/app.test.ts\nTests:       12 passed, 12 total\n"
	jestFail = "FAIL src/app.test.ts\nTests:       1 failed, 11 passed, 12 total\n"
)

func TestValidatorMatrix(t *testing.T) {
	p := defaultPolicy(t)
	type tc struct {
		name    string
		build   func(l *ledger)
		claim   schemas.Claim
		verdict string
		reason  string // substring of a reason
		next    string // substring of the next step
	}
	const prompt = "Fix the failing test in `src/app.test.ts`, run npm test, deploy and check https://app.example.com/healthz; fetch the docs from https://docs.vendor.example/api if needed."
	tests := []tc{
		// command_zero_exit
		{"cze pass", func(l *ledger) { l.prompt(prompt); l.bash("npm test", jestPass) }, claim("done", "command_zero_exit", map[string]string{"command_substring": "npm test"}), "PASS", "", ""},
		{"cze fail none", func(l *ledger) { l.prompt(prompt) }, claim("done", "command_zero_exit", map[string]string{"command_substring": "npm test"}), "FAIL", "none found", "run `npm test`"},
		{"cze fail latest failed", func(l *ledger) {
			l.prompt(prompt)
			l.bash("npm test", jestPass)
			l.bashFail("npm test", "Exit code 1\nError: Cannot find module 'express'")
		}, claim("done", "command_zero_exit", map[string]string{"command_substring": "npm test"}), "FAIL", "Exit code 1", "run `npm test` again"},
		{"cze refused unbound", func(l *ledger) { l.prompt(prompt); l.bash("echo failing", "failing") }, claim("done", "command_zero_exit", map[string]string{"command_substring": "echo failing"}), "REFUSED", "not bound", ""},
		// test_pass
		{"test pass", func(l *ledger) { l.prompt(prompt); l.edit("/repo/src/app.test.ts"); l.bash("npm test", jestPass) }, claim("done", "test_pass", map[string]any{"command_substring": "npm test"}), "PASS", "", ""},
		{"test stale after edit", func(l *ledger) {
			l.prompt(prompt)
			l.bash("npm test", jestPass)
			l.edit("/repo/src/app.test.ts")
		}, claim("done", "test_pass", map[string]any{"command_substring": "npm test"}), "FAIL", "edit of /repo/src/app.test.ts at n=4", "re-run `npm test` after your last edit"},
		{"test failing summary", func(l *ledger) { l.prompt(prompt); l.bash("npm test", jestFail) }, claim("done", "test_pass", map[string]any{"command_substring": "npm test"}), "FAIL", "1 failed", ""},
		{"test failed run", func(l *ledger) { l.prompt(prompt); l.bashFail("npm test", "Exit code 1\nFAIL src/app.test.ts") }, claim("done", "test_pass", map[string]any{"command_substring": "npm test"}), "FAIL", "Exit code 1", ""},
		{"test min runs", func(l *ledger) { l.prompt(prompt); l.bash("npm test", jestPass) }, claim("done", "test_pass", map[string]any{"command_substring": "npm test", "min_runs": 2}), "FAIL", "1 of 2", ""},
		{"test no summary", func(l *ledger) { l.prompt(prompt); l.bash("npm test", "done") }, claim("done", "test_pass", map[string]any{"command_substring": "npm test"}), "FAIL", "no test summary", ""},
		// A run whose output went through a filter does not count: the
		// filter may have cut the failures (jest's summary line survives
		// tail; a failing suite's lines above it need not).
		// Shell writes of a contract path are edits too.
		{"test fail stale after sed", func(l *ledger) {
			l.prompt(prompt)
			l.bash("npm test", jestPass)
			l.bash("sed -i 's/skip/only/' src/app.test.ts", "")
		}, claim("done", "test_pass", map[string]any{"command_substring": "npm test"}), "FAIL", "edit of src/app.test.ts (by `sed -i", "re-run `npm test` after your last edit"},
		{"test fail stale after git apply", func(l *ledger) {
			l.prompt(prompt)
			l.bash("npm test", jestPass)
			l.bash("git apply fix.patch", "")
		}, claim("done", "test_pass", map[string]any{"command_substring": "npm test"}), "FAIL", "by `git apply fix.patch`", ""},
		{"test pass after writing another file", func(l *ledger) {
			l.prompt(prompt)
			l.bash("npm test", jestPass)
			l.bash("echo done > notes.txt", "")
		}, claim("done", "test_pass", map[string]any{"command_substring": "npm test"}), "PASS", "", ""},
		{"test filtered through tail", func(l *ledger) { l.prompt(prompt); l.bash("npm test 2>&1 | tail -3", jestPass) },
			claim("done", "test_pass", map[string]any{"command_substring": "npm test"}), "FAIL", "went through `tail -3`", "without filtering its output"},
		{"test filtered through grep", func(l *ledger) { l.prompt(prompt); l.bash("npm test | grep -v FAIL", jestPass) },
			claim("done", "test_pass", map[string]any{"command_substring": "npm test"}), "FAIL", "grep -v FAIL", "without filtering"},
		{"test redirected", func(l *ledger) {
			l.prompt(prompt)
			l.bash("npm test > /dev/null; echo 'Tests: 3 passed, 3 total'", "Tests: 3 passed, 3 total")
		}, claim("done", "test_pass", map[string]any{"command_substring": "npm test"}), "FAIL", "redirected", "without filtering"},
		{"test through tee passes", func(l *ledger) { l.prompt(prompt); l.bash("npm test 2>&1 | tee test.log", jestPass) },
			claim("done", "test_pass", map[string]any{"command_substring": "npm test"}), "PASS", "", ""},
		{"test filtered, then whole", func(l *ledger) {
			l.prompt(prompt)
			l.bash("npm test | tail -1", jestPass)
			l.bash("npm test", jestPass)
		}, claim("done", "test_pass", map[string]any{"command_substring": "npm test"}), "PASS", "", ""},
		// command_zero_exit needs the line's exit status to be the command's.
		{"cze masked by or-true", func(l *ledger) { l.prompt(prompt); l.bash("npm test || true", jestFail) },
			claim("done", "command_zero_exit", map[string]string{"command_substring": "npm test"}), "FAIL", "`||` ignores its failure", "command of its own"},
		{"cze masked by a later command", func(l *ledger) { l.prompt(prompt); l.bash("npm test; echo finished", jestFail) },
			claim("done", "command_zero_exit", map[string]string{"command_substring": "npm test"}), "FAIL", "later command", ""},
		{"cze masked by a pipe", func(l *ledger) { l.prompt(prompt); l.bash("npm test | tee log", jestFail) },
			claim("done", "command_zero_exit", map[string]string{"command_substring": "npm test"}), "FAIL", "pipefail", "pipefail"},
		{"cze pipefail", func(l *ledger) { l.prompt(prompt); l.bash("set -o pipefail; npm test | tee log", jestPass) },
			claim("done", "command_zero_exit", map[string]string{"command_substring": "npm test"}), "PASS", "", ""},
		{"test fake with echo", func(l *ledger) {
			l.prompt(prompt)
			l.bash("echo npm test; echo 'Tests: 3 passed, 3 total'", "npm test\nTests: 3 passed, 3 total")
		}, claim("done", "test_pass", map[string]any{"command_substring": "npm test"}), "FAIL", "none found", ""},
		{"test refused keyword only", func(l *ledger) { l.prompt(prompt); l.bash("npm run lint", jestPass) }, claim("done", "test_pass", map[string]any{"command_substring": "npm run lint"}), "REFUSED", "not bound", ""},
		{"test refused weak", func(l *ledger) { l.prompt(prompt) }, claim("done", "test_pass", map[string]any{"command_substring": "np"}), "REFUSED", "too weak", ""},
		{"test refused single word", func(l *ledger) { l.prompt(prompt) }, claim("done", "test_pass", map[string]any{"command_substring": "npm"}), "REFUSED", "not bound", ""},
		// file_diff_present
		{"diff pass", func(l *ledger) { l.prompt(prompt); l.edit("/repo/src/app.test.ts") }, claim("done", "file_diff_present", map[string]string{"path": "src/app.test.ts"}), "PASS", "", ""},
		{"diff fail", func(l *ledger) { l.prompt(prompt); l.edit("/repo/src/other.ts") }, claim("done", "file_diff_present", map[string]string{"path": "src/app.test.ts"}), "FAIL", "none found", "edit src/app.test.ts"},
		{"diff refused path not in contract", func(l *ledger) { l.prompt(prompt); l.edit("/repo/src/other.ts") }, claim("done", "file_diff_present", map[string]string{"path": "src/other.ts"}), "REFUSED", "not one of the contract's paths", ""},
		// http_2xx
		{"http pass curl", func(l *ledger) {
			l.prompt(prompt)
			l.bash("curl -sSi https://app.example.com/healthz", "HTTP/2 200 \ncontent-type: text/plain\n\nok")
		}, claim("done", "http_2xx", map[string]string{"url": "https://app.example.com/healthz"}), "PASS", "", ""},
		{"http pass webfetch", func(l *ledger) {
			l.prompt(prompt)
			l.tool("PostToolUse", "WebFetch", `{"url":"https://app.example.com/healthz","prompt":"status?"}`, `{"code":200,"codeText":"OK","result":"ok"}`)
		}, claim("done", "http_2xx", map[string]string{"url": "https://app.example.com/healthz"}), "PASS", "", ""},
		{"http fail 503", func(l *ledger) {
			l.prompt(prompt)
			l.bash("curl -s -o /dev/null -w '%{http_code}\\n' https://app.example.com/healthz", "503\n")
		}, claim("done", "http_2xx", map[string]string{"url": "https://app.example.com/healthz"}), "FAIL", "HTTP 503", ""},
		{"http refused other url", func(l *ledger) { l.prompt(prompt) }, claim("done", "http_2xx", map[string]string{"url": "https://evil.example/healthz"}), "REFUSED", "not one of the contract's URLs", ""},
		// A status printed by another command of the line is not the fetch's.
		{"http fail echo after curl", func(l *ledger) {
			l.prompt(prompt)
			l.bash("curl -sSi https://app.example.com/healthz; echo 'HTTP/1.1 200 OK'", "HTTP/2 503 \n\nunavailable\nHTTP/1.1 200 OK\n")
		}, claim("done", "http_2xx", map[string]string{"url": "https://app.example.com/healthz"}), "FAIL", "`echo` ran in the same command line", "on its own"},
		{"http fail or-echo", func(l *ledger) {
			l.prompt(prompt)
			l.bash("curl -sSi https://app.example.com/healthz || printf 'HTTP/1.1 200 OK'", "curl: (7) Failed to connect\nHTTP/1.1 200 OK")
		}, claim("done", "http_2xx", map[string]string{"url": "https://app.example.com/healthz"}), "FAIL", "`printf` ran", ""},
		{"http pass after cd", func(l *ledger) {
			l.prompt(prompt)
			l.bash("cd /tmp && curl -sSi https://app.example.com/healthz", "HTTP/2 200 \n\nok")
		}, claim("done", "http_2xx", map[string]string{"url": "https://app.example.com/healthz"}), "PASS", "", ""},
		// A summary another command could have printed, with the run's
		// failure masked.
		{"test fail fake summary with masked exit", func(l *ledger) {
			l.prompt(prompt)
			l.bash("echo 'Tests: 3 passed, 3 total'; npm test || true", "Tests: 3 passed, 3 total\nError: Cannot find module 'jest'")
		}, claim("done", "test_pass", map[string]any{"command_substring": "npm test"}), "FAIL", "`echo` ran in the same line", "on its own"},
		{"test pass after install", func(l *ledger) { l.prompt(prompt); l.bash("npm ci && npm test", jestPass) },
			claim("done", "test_pass", map[string]any{"command_substring": "npm test"}), "PASS", "", ""},
		// fetch_attempt_proof
		{"delegation pass", func(l *ledger) {
			l.prompt(prompt)
			l.tool("PostToolUseFailure", "WebFetch", `{"url":"https://docs.vendor.example/api"}`, `"Request failed with status code 403"`)
			l.bashFail("curl -sSf https://docs.vendor.example/api", "Exit code 22\ncurl: (22) The requested URL returned error: 403")
			l.tool("PostToolUse", "WebSearch", `{"query":"docs.vendor.example api reference"}`, `"No results found; blocked"`)
		}, claim("delegation", "fetch_attempt_proof", map[string]string{"keyword": "docs.vendor.example"}), "PASS", "", ""},
		{"delegation fail fabricated failure", func(l *ledger) {
			l.prompt(prompt)
			l.tool("PostToolUseFailure", "WebFetch", `{"url":"https://docs.vendor.example/api"}`, `"Request failed with status code 403"`)
			l.bash("curl -s https://docs.vendor.example/api; echo 'connection refused'", "{\"api\": \"v1\"}\nconnection refused")
			l.tool("PostToolUse", "WebSearch", `{"query":"docs.vendor.example api reference"}`, `"No results found; blocked"`)
		}, claim("delegation", "fetch_attempt_proof", map[string]string{"keyword": "docs.vendor.example"}), "FAIL", "2 distinct fetch tool(s)", ""},
		{"delegation fail two tools", func(l *ledger) {
			l.prompt(prompt)
			l.tool("PostToolUseFailure", "WebFetch", `{"url":"https://docs.vendor.example/api"}`, `"403"`)
			l.bashFail("curl https://docs.vendor.example/api", "Exit code 6\ncurl: (6) Could not resolve host")
		}, claim("delegation", "fetch_attempt_proof", map[string]string{"keyword": "docs.vendor.example"}), "FAIL", "2 distinct", "3 different fetch tools"},
		{"delegation fail a fetch worked", func(l *ledger) {
			l.prompt(prompt)
			l.bash("curl -i https://docs.vendor.example/api", "HTTP/1.1 200 OK\n\n{}")
		}, claim("delegation", "fetch_attempt_proof", map[string]string{"keyword": "docs.vendor.example"}), "FAIL", "succeeded", ""},
		{"delegation refused wrong validator", func(l *ledger) { l.prompt(prompt) }, claim("delegation", "test_pass", map[string]any{"command_substring": "npm test"}), "REFUSED", "may not back a delegation claim", ""},
		// ladder_exhaustion_proof
		{"blocked pass", func(l *ledger) {
			l.prompt("Fetch the release notes from https://api.vendor.example/v2/releases and summarise them")
			l.tool("PostToolUseFailure", "WebFetch", `{"url":"https://api.vendor.example/v2/releases"}`, `"Request failed with status code 401"`)
			l.tool("PostToolUse", "WebSearch", `{"query":"vendor release notes"}`, `"results: none"`)
		}, claim("blocked", "ladder_exhaustion_proof", map[string]string{}), "PASS", "", ""},
		{"blocked fail hop missing", func(l *ledger) {
			l.prompt("Fetch the release notes from https://api.vendor.example/v2/releases and summarise them")
			l.tool("PostToolUseFailure", "WebFetch", `{"url":"https://api.vendor.example/v2/releases"}`, `"Request failed with status code 401"`)
		}, claim("blocked", "ladder_exhaustion_proof", map[string]string{}), "FAIL", "not attempted", "search"},
		// Printing a hop's URL or command is not attempting it.
		{"blocked fail echoed hops", func(l *ledger) {
			l.prompt("Fetch the release notes from https://api.vendor.example/v2/releases and summarise them")
			l.bashFail("echo curl https://api.vendor.example/v2/releases; exit 1", "Exit code 1\ncurl https://api.vendor.example/v2/releases")
			l.tool("PostToolUse", "WebSearch", `{"query":"vendor release notes"}`, `"results: none"`)
		}, claim("blocked", "ladder_exhaustion_proof", map[string]string{}), "FAIL", "not attempted", "fetch https://api.vendor.example/v2/releases"},
		{"blocked pass curl hop", func(l *ledger) {
			l.prompt("Fetch the release notes from https://api.vendor.example/v2/releases and summarise them")
			l.bashFail("curl -sSf https://api.vendor.example/v2/releases", "Exit code 22\ncurl: (22) The requested URL returned error: 401")
			l.tool("PostToolUse", "WebSearch", `{"query":"vendor release notes"}`, `"results: none"`)
		}, claim("blocked", "ladder_exhaustion_proof", map[string]string{}), "PASS", "", ""},
		{"blocked fail nothing failed", func(l *ledger) {
			l.prompt("Fetch the release notes from https://api.vendor.example/v2/releases and summarise them")
			l.tool("PostToolUse", "WebFetch", `{"url":"https://api.vendor.example/v2/releases"}`, `{"code":200,"result":"notes"}`)
			l.tool("PostToolUse", "WebSearch", `{"query":"vendor release notes"}`, `"results: 3"`)
		}, claim("blocked", "ladder_exhaustion_proof", map[string]string{}), "FAIL", "none failed", ""},
		// refusals that do not depend on the validator
		{"no contract", func(l *ledger) {
			l.add(schemas.EntryEvent, "UserPromptSubmit", "", `{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"what is this?"}`)
			l.bash("npm test", jestPass)
		}, claim("done", "test_pass", map[string]any{"command_substring": "npm test"}), "REFUSED", "no contract", "actionable prompt"},
		{"unknown validator", func(l *ledger) { l.prompt(prompt) }, claim("done", "vibes", map[string]string{}), "REFUSED", "unknown validator", ""},
		{"unknown claim", func(l *ledger) { l.prompt(prompt) }, claim("finished", "test_pass", map[string]string{}), "REFUSED", "unknown claim type", ""},
		{"bad args", func(l *ledger) { l.prompt(prompt) }, schemas.Claim{Claim: "done", Validator: "test_pass", Args: []byte(`{"command_substring":"npm test","command_substring":"x"}`)}, "REFUSED", "invalid arguments", ""},
		{"evidence before the prompt does not count", func(l *ledger) {
			l.bash("npm test", jestPass)
			l.prompt(prompt)
		}, claim("done", "test_pass", map[string]any{"command_substring": "npm test"}), "FAIL", "none found", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l ledger
			tt.build(&l)
			r := Evaluate(Input{Entries: l.entries, Claim: tt.claim, Policy: p})
			if r.Verdict != tt.verdict {
				t.Fatalf("verdict %s, want %s; reasons %q", r.Verdict, tt.verdict, r.Reasons)
			}
			all := strings.Join(r.Reasons, " | ")
			if !strings.Contains(all, tt.reason) {
				t.Errorf("reasons %q do not mention %q", all, tt.reason)
			}
			if !strings.Contains(r.NextStep, tt.next) {
				t.Errorf("next step %q does not mention %q", r.NextStep, tt.next)
			}
			if r.Verdict == schemas.Pass && len(r.Matched) == 0 {
				t.Error("PASS without matched entries")
			}
			if r.Verdict != schemas.Pass && len(r.Reasons) == 0 {
				t.Error("no reasons")
			}
		})
	}
}

// TestSeedBypassesAreRefused: the bypasses the seed's v3 rules closed.
func TestSeedBypassesAreRefused(t *testing.T) {
	p := defaultPolicy(t)
	var l ledger
	l.prompt("Refactor utils/parsing.py to use dataclasses and run pytest tests/test_parsing.py -q")
	l.bash("echo parsing dataclasses", "parsing dataclasses")
	l.edit("/repo/docs/notes.md")
	cases := []schemas.Claim{
		// a command that only shares a keyword with the objective
		claim("done", "command_zero_exit", map[string]string{"command_substring": "echo parsing dataclasses"}),
		// a path that is not among the target paths
		claim("done", "file_diff_present", map[string]string{"path": "docs/notes.md"}),
		// bag-of-words: a keyword as the whole argument, with target fields present
		claim("done", "test_pass", map[string]any{"command_substring": "parsing"}),
	}
	for _, c := range cases {
		r := Evaluate(Input{Entries: l.entries, Claim: c, Policy: p})
		if r.Verdict != schemas.Refused {
			t.Errorf("%s %s: %s %q, want REFUSED", c.Validator, c.Args, r.Verdict, r.Reasons)
		}
	}
}

// TestRunsWithoutTestsDoNotCount: a test runner invoked so that it runs no
// test (listing, compile-only, dry run, a filter that selects nothing) is no
// evidence, whatever its output says; the reason names the option.
func TestRunsWithoutTestsDoNotCount(t *testing.T) {
	p := defaultPolicy(t)
	const goPrompt = "Fix the bug in `calc.go` and run `go test ./...` to check it."
	const goOK = "ok  \texample.com/calc\t0.004s\n"
	goTest := map[string]any{"command_substring": "go test"}
	for _, tc := range []struct {
		name, line, output, validator, verdict, reason string
	}{
		{"a real run", "go test ./...", goOK, "test_pass", "PASS", ""},
		{"listing", "go test -list . ./...", "TestAdd\nTestSub\n" + goOK, "test_pass", "FAIL", "n=3: `-list` only lists the tests"},
		{"benchmarks only", "go test -run '^$' -bench . ./...", "BenchmarkAdd-2\t1000000000\t0.3 ns/op\nPASS\n" + goOK, "test_pass", "FAIL",
			"selects no test"},
		{"compile only, exit 0", "go test -c -o /dev/null ./...", "", "command_zero_exit", "FAIL", "`-c` only compiles"},
		{"dry run, exit 0", "go test -n ./...", "mkdir -p $WORK/b001/\n", "command_zero_exit", "FAIL", "dry run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l ledger
			l.prompt(goPrompt)
			l.bash(tc.line, tc.output)
			r := Evaluate(Input{Entries: l.entries, Claim: claim("done", tc.validator, goTest), Policy: p})
			if r.Verdict != tc.verdict || !strings.Contains(strings.Join(r.Reasons, " | "), tc.reason) {
				t.Fatalf("%s %q, want %s naming %q", r.Verdict, r.Reasons, tc.verdict, tc.reason)
			}
			if r.Verdict == schemas.Fail && !strings.Contains(r.NextStep, "so that it runs the tests") {
				t.Errorf("next step %q names no way out", r.NextStep)
			}
		})
	}
}

// TestFixturesAreClientShaped: the payloads these tests build use only
// fields the real Claude Code sends, in its types (pkg/clientcontract).
func TestFixturesAreClientShaped(t *testing.T) {
	var l ledger
	l.prompt("Fix the bug in `calc.go` and run `go test ./...` to check it.")
	l.bash("go test ./...", "ok  \texample.com/calc\t0.004s\n")
	l.bashFail("go test ./...", "Exit code 1\nFAIL")
	l.edit("/repo/calc.go")
	l.tool("PostToolUse", "WebFetch", `{"url":"https://app.example.com/healthz","prompt":"status?"}`, `{"code":200,"codeText":"OK","result":"ok"}`)
	l.tool("PostToolUseFailure", "WebFetch", `{"url":"https://app.example.com/healthz","prompt":"status?"}`, `"Request failed with status code 503"`)
	if len(l.payloads) != 6 {
		t.Fatalf("%d payloads", len(l.payloads))
	}
	for _, p := range l.payloads {
		clientcontract.Fields(t, []byte(p))
	}
}

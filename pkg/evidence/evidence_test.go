package evidence

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/claimcheck/claimcheck/pkg/command"
	"github.com/claimcheck/claimcheck/schemas"
)

// summarizeCases are runner outputs with what Summarize must read from them.
var summarizeCases = []struct {
	name, out  string
	pass, fail int
	ok         bool
}{
	{"pytest pass", "collected 3 items\n\ntests/test_x.py ...\n\n============ 3 passed in 0.12s ============\n", 3, 0, true},
	{"pytest fail", "===== 1 failed, 2 passed, 1 warning in 0.30s =====", 2, 1, true},
	{"pytest -q", "...\n3 passed in 0.01s\n", 3, 0, true},
	{"go test", "ok  \tgithub.com/acme/app/store\t0.412s\nok  \tgithub.com/acme/app/cmd\t(cached)\n?   \tgithub.com/acme/app/doc\t[no test files]\n", 2, 0, true},
	{"go test fail", "--- FAIL: TestX (0.00s)\n    x_test.go:9: boom\nFAIL\nFAIL\tgithub.com/acme/app\t0.01s\n", 0, 3, true},
	// go test -run with a pattern that matches no test: recognised, nothing passed.
	{"go test no tests to run", "ok  \tgithub.com/acme/app/store\t0.011s [no tests to run]\nok  \tgithub.com/acme/app/cmd\t(cached) [no tests to run]\n", 0, 0, true},
	{"go test one package no tests", "testing: warning: no tests to run\nPASS\nok  \tgithub.com/acme/app\t0.01s [no tests to run]\n", 0, 0, true},
	{"go test -v some ran", "=== RUN   TestA\n--- PASS: TestA (0.00s)\nPASS\nok  \tgithub.com/acme/app\t0.01s\nok  \tgithub.com/acme/b\t0.01s [no tests to run]\n", 3, 0, true},
	{"cargo", "running 5 tests\ntest result: ok. 5 passed; 0 failed; 0 ignored\n\ntest result: ok. 2 passed; 0 failed;", 7, 0, true},
	{"cargo fail", "test result: FAILED. 4 passed; 1 failed; 0 ignored", 4, 1, true},
	{"jest", "PASS src/app.test.ts\nTests:       12 passed, 12 total\nSnapshots:   0 total\n", 12, 0, true},
	{"jest fail", "Tests:       1 failed, 11 passed, 12 total", 11, 1, true},
	{"vitest", " Test Files  2 passed (2)\n      Tests  14 passed (14)\n", 14, 0, true},
	{"mocha", "  12 passing (40ms)\n  1 failing\n", 12, 1, true},
	{"surefire", "[INFO] Tests run: 10, Failures: 0, Errors: 0, Skipped: 1\n[INFO] BUILD SUCCESS", 9, 0, true},
	{"surefire fail", "[ERROR] Tests run: 10, Failures: 2, Errors: 1, Skipped: 0\n[INFO] BUILD FAILURE", 7, 3, true},
	{"nothing", "all good!\n", 0, 0, false},
	{"fake echo", "Tests passed", 0, 0, false},
}

func TestSummarize(t *testing.T) {
	for _, tt := range summarizeCases {
		s := Summarize(tt.out)
		if s.Recognized != tt.ok || s.Passed != tt.pass || s.Failed != tt.fail {
			t.Errorf("%s: %+v, want passed=%d failed=%d recognized=%v", tt.name, s, tt.pass, tt.fail, tt.ok)
		}
	}
}

// Calls parses a Bash entry's command once, for every copy of the entry.
func TestCallsAreParsedOnceAndShared(t *testing.T) {
	payload := `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"cd web && CI=1 npm test"},"tool_response":{"stdout":"ok","stderr":""}}`
	e := Decode(schemas.Entry{N: 1, Kind: schemas.EntryEvent, HookEvent: "PostToolUse", ToolName: "Bash", Payload: &payload})
	if e.Command != "cd web && CI=1 npm test" {
		t.Fatalf("command %q", e.Command)
	}
	cp := e
	first := e.Calls()
	if len(first) != 2 || first[1].Argv[0] != "npm" {
		t.Fatalf("calls %+v", first)
	}
	if again := cp.Calls(); &again[0] != &first[0] {
		t.Error("a copy of the entry parsed the command again")
	}
	// An entry not made by Decode still answers.
	if c := (Entry{Command: "make test"}).Calls(); len(c) != 1 || c[0].Argv[1] != "test" {
		t.Fatalf("calls of a literal entry: %+v", c)
	}
	if c := (Entry{}).Calls(); len(c) != 0 {
		t.Fatalf("calls of no command: %+v", c)
	}
}

// The prefilters only skip expressions that cannot match: Summarize reads
// the same as running every expression, on every runner's output, on the
// outputs mixed and cut, and on text that holds a prefilter's literal but
// no summary.
func TestSummarizePrefiltersChangeNothing(t *testing.T) {
	outs := []string{"", "ok", "FAIL", "PASS", "Tests", "Tests:", " in ", "passing", "Tests run: ", "test result: ",
		"look: ok\tnot go\n", "panic: x\n", "PASSED in 3s", "=== 3 passed in", "Tests  3 passed (3)"}
	for _, a := range summarizeCases {
		outs = append(outs, a.out, a.out[:len(a.out)/2], a.out[len(a.out)/2:])
		for _, b := range summarizeCases {
			outs = append(outs, a.out+"\n"+b.out)
		}
	}
	for _, out := range outs {
		if got, want := summarize(out, true), summarize(out, false); got != want {
			t.Errorf("Summarize(%q) = %+v with prefilters, %+v without", out, got, want)
		}
	}
}

func FuzzSummarize(f *testing.F) {
	for _, c := range summarizeCases {
		f.Add(c.out)
	}
	f.Fuzz(func(t *testing.T, out string) {
		if got, want := summarize(out, true), summarize(out, false); got != want {
			t.Errorf("Summarize(%q) = %+v with prefilters, %+v without", out, got, want)
		}
	})
}

// TestDecodeCwdAndContents: the payload's cwd, a whole Read's content and
// an edit's originalFile reach the entry; a partial Read's does not.
func TestDecodeCwdAndContents(t *testing.T) {
	for _, tt := range []struct {
		name, hook, tool, payload string
		want                      Entry
	}{
		{"prompt", "UserPromptSubmit", "", `{"session_id":"s","cwd":"/repo","hook_event_name":"UserPromptSubmit","prompt":"fix it"}`,
			Entry{Cwd: "/repo"}},
		{"pre", "PreToolUse", "Bash", `{"session_id":"s","cwd":"/repo/a","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`,
			Entry{Cwd: "/repo/a", Input: `{"command":"ls"}`}},
		{"read", "PostToolUse", "Read", `{"cwd":"/repo","hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{"file_path":"/repo/a_test.go"},` +
			`"tool_response":{"type":"text","file":{"filePath":"/repo/a_test.go","content":"package a\n","numLines":2,"startLine":1,"totalLines":2}}}`,
			Entry{Cwd: "/repo", Done: true, FilePath: "/repo/a_test.go", Input: `{"file_path":"/repo/a_test.go"}`, Output: "package a\n"}},
		{"partial read", "PostToolUse", "Read", `{"cwd":"/repo","hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{"file_path":"/repo/a_test.go","offset":5},` +
			`"tool_response":{"type":"text","file":{"filePath":"/repo/a_test.go","content":"x\n","numLines":1,"startLine":5,"totalLines":9}}}`,
			Entry{Cwd: "/repo", Done: true, FilePath: "/repo/a_test.go", Input: `{"file_path":"/repo/a_test.go","offset":5}`}},
		{"edit", "PostToolUse", "Edit", `{"cwd":"/repo","hook_event_name":"PostToolUse","tool_name":"Edit",` +
			`"tool_input":{"file_path":"/repo/a.go","old_string":"a","new_string":"b","replace_all":false},` +
			`"tool_response":{"filePath":"/repo/a.go","oldString":"a","newString":"b","originalFile":"a\n","structuredPatch":[]}}`,
			Entry{Cwd: "/repo", Done: true, FilePath: "/repo/a.go", Before: "a\n",
				Input: `{"file_path":"/repo/a.go","old_string":"a","new_string":"b","replace_all":false}`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.payload
			got := Decode(schemas.Entry{Kind: schemas.EntryEvent, HookEvent: tt.hook, ToolName: tt.tool, Payload: &p})
			tt.want.Kind, tt.want.HookEvent, tt.want.Tool = schemas.EntryEvent, tt.hook, tt.tool
			if d := cmp.Diff(tt.want, got, cmpopts.IgnoreUnexported(Entry{})); d != "" {
				t.Errorf("entry (-want +got):\n%s", d)
			}
		})
	}
}

func TestFailedTests(t *testing.T) {
	type id = command.TestID
	for _, tt := range []struct {
		name, out string
		want      []id
	}{
		{"go", "=== RUN   TestAdd\n--- FAIL: TestAdd (0.00s)\n    --- FAIL: TestAdd/zero (0.00s)\n--- FAIL: TestSub (0.00s)\nFAIL\n",
			[]id{{Runner: "go", Name: "TestAdd"}, {Runner: "go", Name: "TestSub"}}},
		{"pytest", "FAILED tests/test_x.py::test_parse - AssertionError: 1 != 2\nFAILED tests/test_y.py::test_b\n=== 2 failed in 0.1s ===",
			[]id{{Runner: "pytest", File: "tests/test_x.py", Name: "test_parse"}, {Runner: "pytest", File: "tests/test_y.py", Name: "test_b"}}},
		{"pytest class", "FAILED tests/test_x.py::TestP::test_a[1-2] - assert 0\n", []id{{Runner: "pytest", File: "tests/test_x.py", Name: "TestP::test_a[1-2]"}}},
		{"cargo", "test parser::tests::empty ... FAILED\ntest parser::tests::one ... ok\n", []id{{Runner: "cargo", Name: "parser::tests::empty"}}},
		{"jest", "PASS src/a.test.js\nFAIL src/sum.test.js\n  math\n    ✕ adds (3 ms)\n\n  ● math › adds\n\n    expect(received).toBe(expected)\n\n" +
			"  ● subtracts\n\nFAIL src/b.test.js\n  ● Test suite failed to run\n\nSummary of all failing tests\nFAIL src/sum.test.js\n  ● math › adds\n\n" +
			"Tests:       2 failed, 1 passed, 3 total\n",
			[]id{{Runner: "jest", File: "src/sum.test.js", Name: "math adds"}, {Runner: "jest", File: "src/sum.test.js", Name: "subtracts"}}},
		{"vitest", " ❯ src/sum.test.ts (2 tests | 1 failed) 4ms\n   × math > adds 3ms\n\n⎯⎯ Failed Tests 1 ⎯⎯\n\n FAIL  src/sum.test.ts > math > adds\n" +
			"AssertionError: expected 4 to be 3\n FAIL  |unit| src/x.test.ts > parses\n",
			[]id{{Runner: "vitest", File: "src/sum.test.ts", Name: "math adds"}, {Runner: "vitest", File: "src/x.test.ts", Name: "parses"}}},
		{"maven 3", "[ERROR] Tests run: 2, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.05 s <<< FAILURE! -- in com.example.CalcTest\n" +
			"[ERROR] com.example.CalcTest.testAdd -- Time elapsed: 0.005 s <<< FAILURE!\norg.opentest4j.AssertionFailedError: expected: <3> but was: <4>\n" +
			"[ERROR] Failures: \n[ERROR]   CalcTest.testAdd:12 expected: <3> but was: <4>\n[ERROR]   OtherTest.testB:7 boom\n" +
			"[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:3.2.5:test (default-test) on project calc: There are test failures.\n",
			[]id{{Runner: "maven", Name: "com.example.CalcTest.testAdd"}, {Runner: "maven", Name: "OtherTest.testB"}}},
		{"maven 2", "testAdd(com.example.CalcTest)  Time elapsed: 0.01 sec  <<< FAILURE!\njava.lang.AssertionError\n",
			[]id{{Runner: "maven", Name: "com.example.CalcTest.testAdd"}}},
		{"gradle", "> Task :test FAILED\n\ncom.example.CalcTest > testAdd() FAILED\n    org.opentest4j.AssertionFailedError at CalcTest.java:9\n\n" +
			"CalcSpec > adds two numbers FAILED\n\n2 tests completed, 1 failed\n\nFAILURE: Build failed with an exception.\n",
			[]id{{Runner: "gradle", Name: "com.example.CalcTest.testAdd"}}},
		{"go fail line is no jest file", "FAIL\texample.com/add\t0.01s\n  ● not a jest name\n", nil},
		{"none", "ok  \texample.com/add\t0.01s\n", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, FailedTests(tt.out)); d != "" {
				t.Errorf("failed (-want +got):\n%s", d)
			}
		})
	}
	if d := cmp.Diff([]command.TestID{{Name: "TestAdd"}, {Name: "test_parse"}, {Name: "tests/test_x.py::test_b"}},
		TestNames([]string{"TestAdd", "add.go", "test_parse", "tests/test_x.py::test_b", "Testing", "go test ./..."})); d != "" {
		t.Errorf("names (-want +got):\n%s", d)
	}
}

func FuzzFailedTests(f *testing.F) {
	for _, s := range []string{"--- FAIL: TestA (0.00s)\n", "FAIL src/a.test.js\n  ● a › b\n", " FAIL  a.test.ts > b > c\n",
		"[ERROR] a.B.c -- Time elapsed: 1 s <<< FAILURE!\n", "a.B > c() FAILED\n", "test a::b ... FAILED\n", "FAILED a.py::b - x\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, out string) {
		seen := map[command.TestID]bool{}
		for _, id := range FailedTests(out) {
			if id.Name == "" || id.Runner == "" {
				t.Fatalf("%q: a failure without a name or runner: %+v", out, id)
			}
			if seen[id] {
				t.Fatalf("%q: %+v reported twice", out, id)
			}
			seen[id] = true
		}
	})
}

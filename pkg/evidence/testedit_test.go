package evidence

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"

	"github.com/claimcheck/claimcheck/schemas"
)

func TestTestFileKind(t *testing.T) {
	for p, want := range map[string]string{
		"/repo/add_test.go": TestFile, "/repo/add.go": "", "tests/test_x.py": TestFile, "pkg/x_test.py": TestFile, "pkg/x.py": "",
		"src/app.test.ts": TestFile, "src/app.spec.jsx": TestFile, "src/__tests__/app.js": TestFile, "src/app.ts": "",
		"tests/integration.rs": TestFile, "src/lib.rs": "", "svc/src/test/java/AppTest.java": TestFile, "svc/src/main/java/App.java": "",
		"Makefile": RunnerFile, "web/package.json": RunnerFile, "pytest.ini": RunnerFile, "pyproject.toml": RunnerFile,
		"jest.config.ts": RunnerFile, "vitest.config.mts": RunnerFile, "conftest.py": RunnerFile, "README.md": "",
	} {
		if got := TestFileKind(p); got != want {
			t.Errorf("%s: %q, want %q", p, got, want)
		}
	}
}

const addTest = "package add\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Errorf(\"Add(1, 2) = %d\", Add(1, 2))\n\t}\n}\n"

// toolEntry decodes a PostToolUse of tool with input and response.
func toolEntry(n uint64, tool string, input, response any) Entry {
	in, _ := json.Marshal(input)
	out, _ := json.Marshal(response)
	p := fmt.Sprintf(`{"session_id":"s","cwd":"/repo","hook_event_name":"PostToolUse","tool_name":%q,"tool_input":%s,"tool_response":%s,"tool_use_id":"t%d"}`,
		tool, in, out, n)
	return Decode(schemas.Entry{N: n, Kind: schemas.EntryEvent, HookEvent: "PostToolUse", ToolName: tool, Payload: &p})
}

func edit(n uint64, file, before, old, new string) Entry {
	return toolEntry(n, "Edit", map[string]any{"file_path": file, "old_string": old, "new_string": new, "replace_all": false},
		map[string]any{"filePath": file, "oldString": old, "newString": new, "originalFile": before})
}

func bash(n uint64, cmd string) Entry {
	return toolEntry(n, "Bash", map[string]any{"command": cmd}, map[string]any{"stdout": "", "stderr": "", "interrupted": false})
}

func TestTestChanges(t *testing.T) {
	const pkgJSON = "{\n  \"scripts\": {\n    \"test\": \"jest\"\n  }\n}\n"
	for _, tt := range []struct {
		name    string
		entries []Entry
		want    []string // TestChange.String()
	}{
		{"skip added", []Entry{edit(3, "/repo/add_test.go", addTest, "\tif Add", "\tt.Skip(\"flaky\")\n\tif Add")},
			[]string{"n=3: /repo/add_test.go (test) adds t.Skip"}},
		{"short guard", []Entry{edit(3, "/repo/add_test.go", addTest, "\tif Add", "\tif testing.Short() {\n\t\treturn\n\t}\n\tif Add")},
			[]string{"n=3: /repo/add_test.go (test) adds a testing.Short() guard"}},
		{"assertion made a log", []Entry{edit(3, "/repo/add_test.go", addTest, "t.Errorf", "t.Logf")},
			[]string{"n=3: /repo/add_test.go (test) turns an assertion into a log (t.Log)"}},
		{"assertion removed", []Entry{edit(3, "/repo/add_test.go", addTest, "\tif Add(1, 2) != 3 {\n\t\tt.Errorf(\"Add(1, 2) = %d\", Add(1, 2))\n\t}\n", "")},
			[]string{"n=3: /repo/add_test.go (test) removes 1 assertion(s)"}},
		{"return at the start", []Entry{edit(3, "/repo/add_test.go", addTest, "{\n\tif Add", "{\n\treturn\n\tif Add")},
			[]string{"n=3: /repo/add_test.go (test) makes a test unable to fail (return or if false at its start)"}},
		{"test renamed", []Entry{edit(3, "/repo/add_test.go", addTest, "func TestAdd", "func testAdd")},
			[]string{"n=3: /repo/add_test.go (test) removes or renames TestAdd"}},
		{"test added", []Entry{edit(3, "/repo/add_test.go", addTest, "}\n}\n",
			"}\n}\n\nfunc TestSub(t *testing.T) {\n\tif Sub(3, 2) != 1 {\n\t\tt.Error(\"Sub\")\n\t}\n}\n")},
			[]string{"n=3: /repo/add_test.go (test) adds 1 assertion(s), adds TestSub"}},
		{"fixture changed", []Entry{edit(3, "/repo/add_test.go", addTest, "Add(1, 2) != 3", "Add(2, 2) != 4")},
			[]string{"n=3: /repo/add_test.go (test) changes it"}},
		{"code is not a test", []Entry{edit(3, "/repo/add.go", "package add\n", "package add", "package add\n")}, nil},
		{"pytest skip", []Entry{edit(3, "/repo/tests/test_x.py", "def test_x():\n    assert f() == 1\n", "def test_x", "@pytest.mark.skip\ndef test_x")},
			[]string{"n=3: /repo/tests/test_x.py (test) adds @pytest.mark.skip"}},
		{"jest only", []Entry{edit(3, "/repo/a.test.ts", "it('a', () => { expect(1).toBe(1) })\nit('b', () => {})\n", "it('a'", "it.only('a'")},
			[]string{"n=3: /repo/a.test.ts (test) adds .only( (the other tests do not run)"}},
		{"rust ignore", []Entry{edit(3, "/repo/tests/t.rs", "#[test]\nfn a() { assert!(true) }\n", "#[test]\n", "#[test]\n#[ignore]\n")},
			[]string{"n=3: /repo/tests/t.rs (test) adds #[ignore]"}},
		{"java disabled", []Entry{edit(3, "/repo/src/test/java/AT.java", "@Test\nvoid a() { assertEquals(1, 1); }\n", "@Test\n", "@Test\n@Disabled\n")},
			[]string{"n=3: /repo/src/test/java/AT.java (test) adds @Disabled"}},
		{"test script replaced", []Entry{edit(3, "/repo/package.json", pkgJSON, `"test": "jest"`, `"test": "true"`)},
			[]string{"n=3: /repo/package.json (runner) replaces the test command with `\"test\": \"true\"`"}},
		{"test script narrowed", []Entry{edit(3, "/repo/package.json", pkgJSON, `"test": "jest"`, `"test": "jest --testPathIgnorePatterns add"`)},
			[]string{"n=3: /repo/package.json (runner) narrows what the runner runs (--testPathIgnorePatterns)"}},
		{"makefile -run", []Entry{edit(3, "/repo/Makefile", "test:\n\tgo test ./...\n", "go test ./...", "go test -run TestSub ./...")},
			[]string{"n=3: /repo/Makefile (runner) narrows what the runner runs (-run)"}},
		{"makefile build edit", []Entry{edit(3, "/repo/Makefile", "build:\n\tgo build\n", "go build", "go build -v")}, nil},
		{"pytest addopts", []Entry{edit(3, "/repo/pytest.ini", "[pytest]\naddopts = -q\n", "addopts = -q", "addopts = -q --deselect tests/test_x.py::test_x")},
			[]string{"n=3: /repo/pytest.ini (runner) narrows what the runner runs (--deselect)"}},
		{"write compared with the read", []Entry{
			toolEntry(3, "Read", map[string]any{"file_path": "/repo/add_test.go"},
				map[string]any{"type": "text", "file": map[string]any{"filePath": "/repo/add_test.go", "content": addTest, "numLines": 10, "startLine": 1, "totalLines": 10}}),
			toolEntry(4, "Write", map[string]any{"file_path": "/repo/add_test.go", "content": strings.Replace(addTest, "t.Errorf", "t.Logf", 1)},
				map[string]any{"type": "update", "filePath": "/repo/add_test.go"}),
		}, []string{"n=4: /repo/add_test.go (test) turns an assertion into a log (t.Log)"}},
		{"write, earlier content unknown", []Entry{
			toolEntry(4, "Write", map[string]any{"file_path": "/repo/add_test.go", "content": addTest}, map[string]any{"type": "create", "filePath": "/repo/add_test.go"}),
		}, []string{"n=4: /repo/add_test.go (test) writes it (its earlier content unknown)"}},
		{"write with a skip, earlier content unknown", []Entry{
			toolEntry(4, "Write", map[string]any{"file_path": "/repo/add_test.go", "content": strings.Replace(addTest, "\tif Add", "\tt.Skip()\n\tif Add", 1)},
				map[string]any{"type": "create", "filePath": "/repo/add_test.go"}),
		}, []string{"n=4: /repo/add_test.go (test) adds t.Skip"}},
		{"sed inserts a skip", []Entry{bash(5, `sed -i '/func TestAdd/a\	t.Skip("flaky")' add_test.go`)},
			[]string{"n=5: add_test.go (test) adds t.Skip"}},
		{"sed made a log", []Entry{bash(5, "sed -i 's/t.Errorf/t.Logf/' add_test.go")},
			[]string{"n=5: add_test.go (test) turns an assertion into a log (t.Log)"}},
		{"sed renamed", []Entry{bash(5, "sed -i 's/^func TestAdd/func testAdd/' add_test.go")},
			[]string{"n=5: add_test.go (test) removes or renames TestAdd"}},
		{"sed unreadable", []Entry{bash(5, "sed -i 3d add_test.go")},
			[]string{"n=5: add_test.go (test) writes it with a shell command whose effect claimcheck cannot read (`sed -i 3d add_test.go`)"}},
		{"heredoc compared with the read", []Entry{
			toolEntry(3, "Read", map[string]any{"file_path": "/repo/add_test.go"},
				map[string]any{"type": "text", "file": map[string]any{"filePath": "/repo/add_test.go", "content": addTest, "numLines": 10, "startLine": 1, "totalLines": 10}}),
			bash(5, "cat > add_test.go <<'EOF'\npackage add\nEOF"),
		}, []string{"n=5: add_test.go (test) removes 1 assertion(s), removes or renames TestAdd"}},
		{"python inline write", []Entry{bash(5, `python3 -c "open('tests/test_x.py','w').write('')"`)}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, c := range TestChanges(tt.entries) {
				got = append(got, c.String())
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("changes (-want +got):\n%s", d)
			}
		})
	}
}

func FuzzTestChanges(f *testing.F) {
	f.Add("/repo/add_test.go", addTest, "t.Errorf", "t.Logf", "sed -i 's/t.Errorf/t.Logf/' add_test.go")
	f.Add("package.json", `{"scripts":{"test":"jest"}}`, `"jest"`, `"true"`, "cat > Makefile <<EOF\ntest:\n\ttrue\nEOF")
	f.Fuzz(func(t *testing.T, file, before, old, new, line string) {
		entries := []Entry{edit(1, file, before, old, new), bash(2, line),
			toolEntry(3, "Write", map[string]any{"file_path": file, "content": new}, map[string]any{"type": "update"})}
		for _, c := range TestChanges(entries) {
			if c.Kind != TestFile && c.Kind != RunnerFile {
				t.Fatalf("change of kind %q", c.Kind)
			}
			if len(c.What)+len(c.Weakens) == 0 {
				t.Fatalf("a change that says nothing: %+v", c)
			}
		}
	})
}

package command

import "testing"

// runsTests are TestRuns's cases; the golden table reads their lines and
// wants too.
var runsTests = []struct {
	line, want string
	runs       bool
}{
	{"npm test", "npm test", true},
	{"npm test -- --coverage", "npm test", true},
	{"cd web && CI=1 npm test", "npm test", true},
	{"echo npm test", "npm test", false},
	{"echo 'npm test' | sh", "npm test", false},
	{"npm run test", "npm test", false},
	{"go test ./... -count=1", "go test ./...", true},
	{"go test ./pkg/...", "go test ./...", false},
	{"/usr/local/go/bin/go test ./...", "go test ./...", true},
	{"python -m pytest tests/test_x.py -q", "pytest tests/test_x.py", true},
	{"uv run pytest", "pytest", true},
	{"timeout 300 make test", "make test", true},
	{"sudo -E env FOO=1 make test", "make test", true},
	{"(cd a; make test) 2>&1 | tee log", "make test", true},
	{"make testing", "make test", false},
	{"git commit -m 'run make test later'", "make test", false},
	{"bash -c 'make test'", "make test", false},
	{"if true; then cargo test --workspace; fi", "cargo test", true},
	{"cargo test", "cargo test --workspace", false},
	{"", "npm test", false},
	{"npm test", "", false},
	{"npm test", "a; b", false},
	{"unbalanced 'quote", "unbalanced", true},
}

func TestRuns(t *testing.T) {
	for _, tt := range runsTests {
		if got := Runs(tt.line, tt.want); got != tt.runs {
			t.Errorf("Runs(%q, %q) = %v, want %v", tt.line, tt.want, got, tt.runs)
		}
		// The parsed form answers the same.
		w, ok := Want(tt.want)
		if got := ok && RunsParsed(Parse(tt.line), w); got != tt.runs {
			t.Errorf("RunsParsed(Parse(%q), Want(%q)) = %v, want %v", tt.line, tt.want, got, tt.runs)
		}
	}
	if RunsParsed(Parse("npm test"), nil) {
		t.Error("an empty want matched")
	}
}

// Wrappers are read by their options (shell.Unwrap): an option's value is
// not the program, and a wrapper that runs nothing runs nothing.
func TestRunsThroughWrappers(t *testing.T) {
	for _, tt := range []struct {
		line, want string
		runs       bool
	}{
		{"sudo -u root make test", "make test", true},
		{"nice -n 10 make test", "make test", true},
		{"timeout -s KILL 10s make test", "make test", true},
		{"env -C web make test", "make test", true},
		{"doas make test", "make test", true},
		{"flock /tmp/lock make test", "make test", true},
		{"echo x | xargs -I {} make test", "make test", true},
		{"python3.12 -m pytest", "pytest", true},
		{"command -v make", "make", false},
		{"ionice -p 1234", "1234", false},
		{"watch make test", "make test", false}, // a script, like bash -c
		{"env -S 'make test'", "make test", false},
	} {
		if got := Runs(tt.line, tt.want); got != tt.runs {
			t.Errorf("Runs(%q, %q) = %v, want %v", tt.line, tt.want, got, tt.runs)
		}
	}
}

var programTests = map[string]string{"timeout 5 curl -sS https://x": "curl", "python -m pytest": "pytest", "FOO=1 wget x": "wget", "": ""}

var mentionsTests = []struct {
	line, token string
	mentions    bool
}{
	{"pytest tests/test_x.py -q", "tests/test_x.py", true},
	{"cat ./src/app.ts", "src/app.ts", true},
	{"vim /repo/src/app.ts", "src/app.ts", true},
	{"echo src/app.tsx", "src/app.ts", false}, // a different path
	{"src/app.ts", "src/app.ts", false},       // the program itself
}

func TestMentionsAndProgram(t *testing.T) {
	for _, tt := range mentionsTests {
		if got := Mentions(tt.line, tt.token); got != tt.mentions {
			t.Errorf("Mentions(%q, %q) = %v, want %v", tt.line, tt.token, got, tt.mentions)
		}
	}
	for line, want := range programTests {
		if got := Program(line); got != want {
			t.Errorf("Program(%q) = %q, want %q", line, got, want)
		}
	}
}

var parseSeeds = []string{"a && b || c", "$(x) `y` ${z:-w}", "cat <<EOF\nhi\nEOF", "((1+2))", "a | b &", "'unterminated"}

func FuzzParse(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		for _, c := range Parse(line) {
			_ = c.Programs()
		}
		_ = Runs(line, "make test")
		_ = Mentions(line, "a/b")
		_ = Program(line)
	})
}

// BenchmarkParse: a short test command, the shape validators parse most.
func BenchmarkParse(b *testing.B) {
	for b.Loop() {
		if c := Parse("cd web && CI=1 go test ./... -run TestStore"); len(c) != 2 {
			b.Fatalf("%d calls", len(c))
		}
	}
}

package command

import (
	"strings"
	"testing"
)

// TestNoTests: each way of invoking a test runner without running a test
// is named; the ordinary invocations, and programs that are not test
// runners, are not.
func TestNoTests(t *testing.T) {
	for _, tc := range []struct {
		line, want string // want: a part of the reason, "" for none
	}{
		{"go test ./...", ""},
		{"go test -v -run TestAdd ./...", ""},
		{"go test -list . ./...", "`-list`"},
		{"go test -list=. ./...", "`-list`"},
		{"go test --list .", "`-list`"},
		{"go test -c ./pkg", "`-c`"},
		{"go test -n ./...", "`-n`"},
		{"go test -run '^$' -bench . ./...", "selects no test"},
		{"go test -run=^$ ./...", "selects no test"},
		{"go test ./... -args -list", ""}, // -args: the test binary's own flags
		{"go build ./...", ""},
		{"pytest -q", ""},
		{"pytest --collect-only -q", "`--collect-only`"},
		{"python -m pytest --co", "`--co`"},
		{"uv run pytest --setup-plan", "`--setup-plan`"},
		{"npx jest --listTests", "`--listTests`"},
		{"jest --ci", ""},
		{"npx vitest list", "`vitest list`"},
		{"npx vitest run", ""},
		{"cargo test", ""},
		{"cargo test --no-run", "`--no-run`"},
		{"cargo test -- --list", "`--list`"},
		{"cargo nextest list", "`cargo nextest list`"},
		{"mvn test", ""},
		{"mvn -DskipTests verify", "skips the tests"},
		{"mvn -Dmaven.test.skip=true package", "skips the tests"},
		{"./gradlew build -x test", "excludes the tests"},
		{"gradle test --dry-run", "dry run"},
		{"make test", ""},
		{"make -n test", "dry run"},
		{"just --dry-run test", "dry run"},
		{"npm test", ""},
		{"npm test -- --listTests", "`--listTests`"},
		{"pnpm test -- --collect-only", "`--collect-only`"},
		{"npm test --listTests", ""}, // npm's own option, not the runner's
		{"sudo -u ci go test -list . ./...", "`-list`"},
		{"echo go test -list", ""},
	} {
		var got string
		for _, c := range Parse(tc.line) {
			for _, p := range c.Programs() {
				if why := NoTests(p); why != "" && got == "" {
					got = why
				}
			}
		}
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.line, got, tc.want)
		}
	}
}

// TestNoTestsParsed: the reason is the one of the run of want.
func TestNoTestsParsed(t *testing.T) {
	want, _ := Want("go test")
	if why := NoTestsParsed(Parse("go vet ./... && go test -list . ./..."), want); !strings.Contains(why, "-list") {
		t.Fatalf("%q", why)
	}
	if why := NoTestsParsed(Parse("pytest --co && go test ./..."), want); why != "" {
		t.Fatalf("another runner's listing counted: %q", why)
	}
}

// FuzzNoTests: any line is read without panicking, and a reason is only
// given for a line that parses to some program.
func FuzzNoTests(f *testing.F) {
	for _, s := range []string{"go test -list .", "cargo test -- --list", "npm test -- --listTests", "mvn -DskipTests", "go test -run"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		for _, c := range Parse(line) {
			for _, p := range c.Programs() {
				if why := NoTests(p); why != "" && len(p) < 2 {
					t.Fatalf("%q: a reason (%q) for a program without arguments", line, why)
				}
			}
		}
	})
}

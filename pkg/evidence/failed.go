package evidence

import (
	"regexp"
	"slices"
	"strings"

	"github.com/claimcheck/claimcheck/pkg/command"
)

var (
	vitestFailRE = regexp.MustCompile(`^\s*FAIL\s+(?:\|[^|]*\|\s+)?(\S+)\s+>\s+(.+?)\s*$`)
	jestFileRE   = regexp.MustCompile(`^ *FAIL +(\S+)(?: \([^)]*\))? *$`)
	// surefire 3: com.x.CalcTest.testAdd -- Time elapsed: … <<< FAILURE!
	surefire3RE = regexp.MustCompile(`^(?:\[ERROR\]\s+)?([\w$]+(?:\.[\w$]+)*)\.(\w+)(?:\([^)]*\))?(?:\[\d+\])?` +
		`\s+--\s+Time elapsed.*<<< (?:FAILURE|ERROR)!`)
	// surefire 2: testAdd(com.x.CalcTest)  Time elapsed: … <<< FAILURE!
	surefire2RE = regexp.MustCompile(`^(?:\[ERROR\]\s+)?(\w+)\(([\w$]+(?:\.[\w$]+)*)\)\s+Time elapsed.*<<< (?:FAILURE|ERROR)!`)
	// surefire's summary: [ERROR]   CalcTest.testAdd:12 expected …
	surefireSumRE = regexp.MustCompile(`^\[ERROR\]\s+([\w$]+(?:\.[\w$]+)*)\.(\w+):\d+`)
	// gradle: com.x.CalcTest > testAdd() FAILED
	gradleRE = regexp.MustCompile(`^([\w$]+(?:\.[\w$]+)*) > (.+?) FAILED\s*$`)
)

// FailedTests returns the tests a runner's output reports failing, once
// each, in order: go test's `--- FAIL: TestX` (the top-level test of a
// subtest), pytest's `FAILED path::name`, cargo's `test name ... FAILED`,
// jest's `FAIL file` and `● describe › test`, vitest's `FAIL file >
// describe > test`, maven surefire's `Class.method … <<< FAILURE!` (and
// its summary's `Class.method:line`), gradle's `Class > method() FAILED`.
func FailedTests(output string) []command.TestID {
	if !has(output, "FAIL") {
		return nil
	}
	var out []command.TestID
	add := func(t command.TestID) {
		if t.Name == "" || slices.ContainsFunc(out, func(o command.TestID) bool { return sameTest(o, t) }) {
			return
		}
		out = append(out, t)
	}
	jestFile := ""
	for line := range strings.Lines(output) {
		line = strings.TrimRight(line, "\r\n")
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "--- FAIL: "):
			name, _, _ := strings.Cut(strings.TrimPrefix(trimmed, "--- FAIL: "), " ")
			name, _, _ = strings.Cut(name, "/")
			add(command.TestID{Runner: command.RunnerGo, Name: name})
		case strings.HasPrefix(line, "FAILED "):
			node, _, _ := strings.Cut(strings.TrimPrefix(line, "FAILED "), " ")
			if file, name, ok := strings.Cut(node, "::"); ok {
				add(command.TestID{Runner: command.RunnerPytest, File: file, Name: name})
			}
		case strings.HasPrefix(line, "test ") && strings.HasSuffix(trimmed, " ... FAILED"):
			name := strings.TrimSuffix(strings.TrimPrefix(trimmed, "test "), " ... FAILED")
			if !strings.Contains(name, " ") {
				add(command.TestID{Runner: command.RunnerCargo, Name: name})
			}
		case strings.HasPrefix(trimmed, "FAIL"):
			if m := vitestFailRE.FindStringSubmatch(line); m != nil {
				add(command.TestID{Runner: command.RunnerVitest, File: m[1], Name: strings.Join(strings.Split(m[2], " > "), " ")})
			} else if m := jestFileRE.FindStringSubmatch(line); m != nil {
				jestFile = m[1]
			}
		case strings.HasPrefix(trimmed, "● ") && jestFile != "":
			if name := strings.TrimPrefix(trimmed, "● "); name != "Test suite failed to run" {
				add(command.TestID{Runner: command.RunnerJest, File: jestFile, Name: strings.ReplaceAll(name, " › ", " ")})
			}
		case strings.Contains(line, "<<< "):
			if m := surefire3RE.FindStringSubmatch(line); m != nil {
				add(command.TestID{Runner: command.RunnerMaven, Name: m[1] + "." + m[2]})
			} else if m := surefire2RE.FindStringSubmatch(line); m != nil {
				add(command.TestID{Runner: command.RunnerMaven, Name: m[2] + "." + m[1]})
			}
		case strings.HasPrefix(line, "[ERROR] "):
			if m := surefireSumRE.FindStringSubmatch(line); m != nil {
				add(command.TestID{Runner: command.RunnerMaven, Name: m[1] + "." + m[2]})
			}
		case strings.HasSuffix(trimmed, " FAILED") && strings.Contains(line, " > "):
			if m := gradleRE.FindStringSubmatch(line); m != nil {
				method, _, _ := strings.Cut(m[2], "(")
				if !strings.Contains(method, " ") {
					add(command.TestID{Runner: command.RunnerGradle, Name: m[1] + "." + method})
				}
			}
		}
	}
	return out
}

// sameTest: one test reported twice, once with its class qualified
// (surefire's failure line) and once not (its summary).
func sameTest(a, b command.TestID) bool {
	if a.Runner != b.Runner || a.File != b.File {
		return false
	}
	if a.Name == b.Name {
		return true
	}
	return (a.Runner == command.RunnerMaven || a.Runner == command.RunnerGradle) &&
		(strings.HasSuffix(a.Name, "."+b.Name) || strings.HasSuffix(b.Name, "."+a.Name))
}

var testNameRE = regexp.MustCompile(`^(?:Test[A-Z0-9_]\w*|test_\w+|[\w./-]+\.py::\w+(?:::\w+)?)$`)

// TestNames are the tokens that name a test: TestXxx, test_xxx,
// path.py::name. Their runner is not known (TestID.Runner "").
func TestNames(tokens []string) []command.TestID {
	var out []command.TestID
	for _, t := range tokens {
		id := command.TestID{Name: t}
		// The shapes' fixed parts first: most tokens are none, and the
		// expression costs more than the whole scope of a claim.
		if (strings.HasPrefix(t, "Test") || strings.HasPrefix(t, "test_") || strings.Contains(t, ".py::")) &&
			testNameRE.MatchString(t) && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

package command

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/claimcheck/claimcheck/pkg/golden"
)

var update = flag.Bool("update", false, "rewrite the golden tables in testdata from the current code")

// TestGolden records what the package answers for every line of the tests
// and fuzz seeds — Parse, Programs, Program, Writes, and Runs, Observe and
// Mentions against every want and token the tests use — and compares it
// with testdata/command.golden (-update rewrites it).
func TestGolden(t *testing.T) {
	var lines, wants, tokens []string
	add := func(list *[]string, s ...string) {
		for _, x := range s {
			if !slices.Contains(*list, x) {
				*list = append(*list, x)
			}
		}
	}
	for _, tt := range runsTests {
		add(&lines, tt.line, tt.want)
		add(&wants, tt.want)
	}
	programLines := make([]string, 0, len(programTests))
	for line := range programTests {
		programLines = append(programLines, line)
	}
	slices.Sort(programLines)
	for _, line := range programLines {
		add(&lines, line)
		add(&wants, programTests[line])
	}
	for _, tt := range mentionsTests {
		add(&lines, tt.line)
		add(&tokens, tt.token)
	}
	for _, tt := range observeTests {
		add(&lines, tt.line, tt.want)
		add(&wants, tt.want)
	}
	for _, tt := range writesTests {
		add(&lines, tt.line)
	}
	add(&lines, parseSeeds...)
	add(&lines, observeSeeds...)
	add(&lines, writesSeeds...)
	add(&wants, "make test", "go test")
	add(&tokens, "a/b")
	compareGolden(t, "testdata/command.golden", describe(lines, wants, tokens))
}

// describe writes the answers for each line.
func describe(lines, wants, tokens []string) []byte {
	var b bytes.Buffer
	b.WriteString("# What package command answers for each line: go test -run TestGolden -update rewrites it.\n")
	for _, w := range wants {
		argv, ok := Want(w)
		fmt.Fprintf(&b, "want %q: %q %v\n", w, argv, ok)
	}
	for _, line := range lines {
		fmt.Fprintf(&b, "line %q\n", line)
		calls := Parse(line)
		for _, c := range calls {
			name, argv := c.Program()
			fmt.Fprintf(&b, "\tcall %q dynamic=%v programs=%q program=%q %q\n", c.Argv, c.Dynamic, c.Programs(), name, argv)
		}
		fmt.Fprintf(&b, "\tprogram %q\n", Program(line))
		paths, unknown := Writes(line)
		fmt.Fprintf(&b, "\twrites %q unknown=%v\n", paths, unknown)
		for _, w := range wants {
			argv, _ := Want(w)
			runs, parsed := Runs(line, w), RunsParsed(calls, argv)
			o := Observe(line, argv)
			if !runs && !parsed && o == (Observation{}) {
				continue
			}
			fmt.Fprintf(&b, "\truns %q %v %v observe %+v\n", w, runs, parsed, o)
		}
		for _, tok := range tokens {
			if Mentions(line, tok) || MentionsParsed(calls, tok) {
				fmt.Fprintf(&b, "\tmentions %q %v %v\n", tok, Mentions(line, tok), MentionsParsed(calls, tok))
			}
		}
	}
	return b.Bytes()
}

// compareGolden compares got with the golden file, or rewrites it under
// -update.
func compareGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Compare(t, name, got, *update)
}

// readLines reads a file of command lines, one a line (go: starts a
// Go-quoted one; # a comment).
func readLines(t *testing.T, name string) []string {
	t.Helper()
	raw, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i, line := range strings.Split(string(raw), "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if q, ok := strings.CutPrefix(line, "go:"); ok {
			if line, err = strconv.Unquote(q); err != nil {
				t.Fatalf("%s:%d: %v", name, i+1, err)
			}
		}
		out = append(out, line)
	}
	return out
}

// TestWrappersGolden records the answers for testdata/wrappers.txt: lines
// that run programs behind wrappers and runners.
func TestWrappersGolden(t *testing.T) {
	wants := []string{"make test", "go test ./...", "pytest", "jest", "rspec", "vitest", "make", "rm", "curl", "tee"}
	compareGolden(t, "testdata/wrappers.golden", describe(readLines(t, "testdata/wrappers.txt"), wants, []string{"x.go", "out.txt"}))
}

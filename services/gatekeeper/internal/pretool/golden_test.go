package pretool

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/claimcheck/claimcheck/pkg/golden"
)

var update = flag.Bool("update", false, "rewrite testdata/decisions.golden from the current code")

// TestGolden records every decision of the corpora (commands.txt,
// coverage.txt, urls.txt, the fuzz seeds and corpus, the tools tests'
// calls) with its rule and its
// reason, and compares them with testdata/decisions.golden: a change of
// wording, not only of outcome, shows. Shell commands are decided twice,
// with the corpus runtime and with none (home unknown).
func TestGolden(t *testing.T) {
	p := defaultPolicy(t)
	var b bytes.Buffer
	b.WriteString("# Decisions of the pretool corpora: <source> <runtime> <input>, then the\n# decision, rule and reason. go test -run TestGolden -update rewrites it.\n")
	shell := func(source, cmd string) {
		record(&b, source, "home", cmd, p.Decide(bash(cmd), corpusRuntime))
		record(&b, source, "nohome", cmd, p.Decide(bash(cmd), Runtime{}))
	}
	for _, c := range readCorpus(t, "testdata/commands.txt") {
		shell("commands.txt:"+strconv.Itoa(c.line), c.input)
	}
	for _, c := range readCommands(t, "testdata/coverage.txt") {
		shell("coverage.txt:"+strconv.Itoa(c.line), c.input)
	}
	for i, s := range shellSeeds {
		shell("FuzzDecideShell seed "+strconv.Itoa(i), s)
	}
	for _, f := range fuzzCorpus(t, "FuzzDecideShell") {
		shell(f.name, f.value)
	}
	for _, c := range readCorpus(t, "testdata/urls.txt") {
		record(&b, "urls.txt:"+strconv.Itoa(c.line), "home", c.input, p.Decide(fetch(c.input), corpusRuntime))
	}
	for i, s := range urlSeeds {
		record(&b, "FuzzDecideURL seed "+strconv.Itoa(i), "home", s, p.Decide(fetch(s), corpusRuntime))
	}
	for _, f := range fuzzCorpus(t, "FuzzDecideURL") {
		record(&b, f.name, "home", f.value, p.Decide(fetch(f.value), corpusRuntime))
	}
	groups := toolCases(t)
	names := make([]string, 0, len(groups))
	for n := range groups {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		for _, c := range groups[n] {
			rt := "home"
			if c.rt.Home == "" {
				rt = "nohome"
			}
			record(&b, n, rt, c.name, c.p.Decide(c.in, c.rt))
		}
	}
	compareGolden(t, "testdata/decisions.golden", b.Bytes())
}

// record writes one decision: the input on one line, the answer on the
// next. Long inputs are cut (the source names them).
func record(b *bytes.Buffer, source, rt, input string, d Decision) {
	if len(input) > 200 {
		input = input[:200] + "…"
	}
	// The JSON library words its errors with "cannot" or "unable to",
	// chosen at random once per process: record one of them.
	reason := strings.ReplaceAll(d.Reason, "unable to unmarshal", "cannot unmarshal")
	fmt.Fprintf(b, "%s %s %q\n\t%s %s %q\n", source, rt, input, d.Decision, d.Rule, reason)
}

// readCommands reads a file of commands, one a line (go: starts a
// Go-quoted one), without expected answers.
func readCommands(t *testing.T, name string) []corpusCase {
	t.Helper()
	raw, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var out []corpusCase
	for i, line := range strings.Split(string(raw), "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if q, ok := strings.CutPrefix(line, "go:"); ok {
			if line, err = strconv.Unquote(q); err != nil {
				t.Fatalf("%s:%d: %v", name, i+1, err)
			}
		}
		out = append(out, corpusCase{line: i + 1, input: line})
	}
	return out
}

type fuzzInput struct{ name, value string }

// fuzzCorpus reads the string inputs of a fuzz target's committed corpus.
func fuzzCorpus(t *testing.T, target string) []fuzzInput {
	t.Helper()
	dir := filepath.Join("testdata", "fuzz", target)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []fuzzInput
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		_, body, _ := strings.Cut(string(raw), "\n")
		body = strings.TrimSpace(body)
		q, ok := strings.CutPrefix(body, "string(")
		q, ok2 := strings.CutSuffix(q, ")")
		v, err := strconv.Unquote(q)
		if !ok || !ok2 || err != nil {
			t.Fatalf("%s/%s: not a string input: %q", dir, e.Name(), body)
		}
		out = append(out, fuzzInput{"fuzz/" + target + "/" + e.Name(), v})
	}
	return out
}

// compareGolden compares got with the golden file, or rewrites it under
// -update.
func compareGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Compare(t, name, got, *update)
}

package inject

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// A corpus case: a tool result and whether Scan must flag it (and by which
// rule) or leave it clean.
type corpusCase struct {
	file, name string
	rule       string // "" for a clean case
	text       string
}

// directive expands the corpus's notation for bytes that cannot be typed:
// {U+XXXX}, {TAGS:…}, {B64:…}, {HEX:…}, {PCT:…} and {XESC:…} (\xNN escapes);
// innermost first, so they nest.
var directiveRE = regexp.MustCompile(`\{(U\+[0-9A-F]{4,5}|TAGS:[^{}]*|B64:[^{}]*|HEX:[^{}]*|PCT:[^{}]*|XESC:[^{}]*)\}`)

func expand(s string) (string, error) {
	var err error
	for {
		out := directiveRE.ReplaceAllStringFunc(s, func(m string) string {
			kind, arg, _ := strings.Cut(m[1:len(m)-1], ":")
			switch {
			case strings.HasPrefix(kind, "U+"):
				v, e := strconv.ParseUint(kind[2:], 16, 32)
				if e != nil {
					err = e
				}
				return string(rune(v))
			case kind == "TAGS":
				var b strings.Builder
				for _, c := range arg {
					b.WriteRune(0xE0000 + c)
				}
				return b.String()
			case kind == "B64":
				return base64.StdEncoding.EncodeToString([]byte(arg))
			case kind == "HEX":
				return hex.EncodeToString([]byte(arg))
			case kind == "PCT", kind == "XESC":
				var b strings.Builder
				for i := 0; i < len(arg); i++ {
					if kind == "PCT" {
						fmt.Fprintf(&b, "%%%02X", arg[i])
					} else {
						fmt.Fprintf(&b, `\x%02x`, arg[i])
					}
				}
				return b.String()
			}
			err = fmt.Errorf("unknown directive %s", m)
			return m
		})
		if out == s || err != nil {
			return out, err
		}
		s = out
	}
}

func loadCorpus(t *testing.T, dir string) []corpusCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	var cases []corpusCase
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		parts := strings.Split("\n"+string(b), "\n%%% ")
		for _, p := range parts[1:] {
			head, text, ok := strings.Cut(p, "\n--\n")
			if !ok {
				t.Fatalf("%s: case without text: %.40q", f, p)
			}
			name, expect, ok := strings.Cut(head, "\nexpect: ")
			if !ok {
				t.Fatalf("%s: case %q without expect", f, name)
			}
			c := corpusCase{file: filepath.Base(f), name: name, rule: strings.TrimSpace(expect)}
			if c.rule == "clean" {
				c.rule = ""
			}
			if c.text, err = expand(text); err != nil {
				t.Fatalf("%s: %s: %v", f, name, err)
			}
			cases = append(cases, c)
		}
	}
	return cases
}

// TestCorpus measures Scan on the corpus: recall on the injected cases (a
// case counts when the result is flagged and a finding of its expected rule
// reaches Flag) and the share of clean cases flagged. It fails below 95%
// recall or above 2% false positives.
func TestCorpus(t *testing.T) {
	inj, clean, hit, fp := measure(t, loadCorpus(t, "testdata/corpus"))
	if inj < 100 || clean < 100 {
		t.Fatalf("corpus has %d injected and %d clean cases, want at least 100 of each", inj, clean)
	}
	if recall := float64(hit) / float64(inj); recall < 0.95 {
		t.Errorf("recall %.1f%%, want >= 95%%", 100*recall)
	}
	if fpr := float64(fp) / float64(clean); fpr > 0.02 {
		t.Errorf("false positives %.1f%%, want <= 2%%", 100*fpr)
	}
}

// TestHeldOut measures Scan on cases written after the rules were frozen
// and never tuned on; it asserts the figures measured when they were
// added (see docs/firewall.md), so that a change can only keep or better them.
func TestHeldOut(t *testing.T) {
	inj, clean, hit, fp := measure(t, loadCorpus(t, "testdata/heldout"))
	if hit < heldOutHits || fp > heldOutFalse {
		t.Errorf("held out: %d/%d injected found (floor %d), %d/%d clean flagged (ceiling %d)",
			hit, inj, heldOutHits, fp, clean, heldOutFalse)
	}
}

// The held-out figures measured when the set was added.
const (
	heldOutHits  = 9
	heldOutFalse = 0
)

func measure(t *testing.T, cases []corpusCase) (inj, clean, hit, fp int) {
	t.Helper()
	var flaggedInj int
	for _, c := range cases {
		r := Scan(c.text)
		if c.rule == "" {
			clean++
			if r.Flagged() {
				fp++
				t.Logf("false positive: %s/%s: %v", c.file, c.name, describe(c.text, r))
			}
			continue
		}
		inj++
		if r.Flagged() {
			flaggedInj++
		}
		ok := false
		for _, f := range r.Findings {
			if f.Rule == c.rule && f.Confidence >= Flag {
				ok = true
			}
		}
		if ok {
			hit++
		} else {
			t.Logf("missed: %s/%s (want %s): %v", c.file, c.name, c.rule, describe(c.text, r))
		}
	}
	recall := float64(hit) / float64(inj)
	fpr := float64(fp) / float64(clean)
	precision := float64(flaggedInj) / float64(flaggedInj+fp)
	t.Logf("corpus: %d injected, %d clean; recall %.1f%% (%d/%d with the expected rule; %d flagged at all), "+
		"precision %.1f%%, false positives %.1f%% (%d/%d)",
		inj, clean, 100*recall, hit, inj, flaggedInj, 100*precision, 100*fpr, fp, clean)
	return inj, clean, hit, fp
}

func describe(text string, r Result) string {
	var b strings.Builder
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "[%s %s %q] ", f.Rule, f.Confidence, text[f.Start:min(f.End, f.Start+60)])
	}
	return b.String()
}

package inject

import (
	"bufio"
	"encoding/base64"
	"encoding/hex"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimcheck/claimcheck/pkg/digest"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden.txt from the current Scan")

// goldenFile holds, for every input of goldenInputs, the findings (rule,
// confidence, offsets) that Scan returned for it when the file was written.
// It was written by the scanner as it was before its speed-ups (commit
// 053764d), so that a faster Scan is held to finding exactly the same.
const goldenFile = "testdata/golden.txt"

// goldenInputs are the corpus and held-out cases, the dense benchmark text,
// and pseudo-random texts built from them with a fixed seed: splices,
// invisible characters, encodings, hidden markup, JSON escapes, case flips,
// and texts long enough to be scanned in two windows.
func goldenInputs(t *testing.T) []string {
	t.Helper()
	var in []string
	cases := append(loadCorpus(t, "testdata/corpus"), loadCorpus(t, "testdata/heldout")...)
	for _, c := range cases {
		in = append(in, c.text)
	}
	var dense strings.Builder
	for dense.Len() < 64<<10 {
		for _, f := range []string{"testdata/corpus/benign_files.txt", "testdata/corpus/benign_remote.txt"} {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			dense.Write(b)
		}
	}
	in = append(in, dense.String()[:64<<10])

	rng := rand.New(rand.NewPCG(20, 2026))
	piece := func() string {
		s := cases[rng.IntN(len(cases))].text
		if len(s) < 2 {
			return s
		}
		i := rng.IntN(len(s))
		j := i + rng.IntN(min(len(s)-i, 400)+1)
		return s[i:j]
	}
	invisibles := []string{"\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u202e", "\u2066", "\u180e",
		"\U000E0041", "\U000E0069\U000E0067", "\U000E007F", "\U0001F3F4", "é", "\xff", "\u201c", "\u201d", "«", "»"}
	markup := []string{"<!-- ", " -->", "<span style=\"display:none\">", "<p style='color: #fff'>", "</span>", "</p>",
		"<img alt=\"", "\" title=\"", "\" data-x=\"", "\">", "![", "](http://x.top/a.png \"", "\")", "\n[//]: # (",
		")\n", "```\n", "\n```", "`", "\"", "'", "\\n", "\\t", "<|im_start|>", "[INST]", "### System:", "<tool_call>"}
	mutate := func(s string) string {
		var b strings.Builder
		for k, n := 0, 1+rng.IntN(6); k < n; k++ {
			sep := []string{"", " ", "\n", "\"", "="}[rng.IntN(5)]
			b.WriteString(sep)
			switch rng.IntN(9) {
			case 0:
				p := piece()
				b.WriteString(base64.StdEncoding.EncodeToString([]byte(p)))
			case 1:
				b.WriteString(hex.EncodeToString([]byte(piece())))
			case 2:
				b.WriteString(url.PathEscape(piece()))
			case 3:
				for _, c := range []byte(piece()) {
					fmt.Fprintf(&b, `\x%02x`, c)
				}
			case 4:
				p := piece()
				for len(p) > 0 {
					i := rng.IntN(len(p) + 1)
					b.WriteString(p[:i])
					b.WriteString(invisibles[rng.IntN(len(invisibles))])
					p = p[i:]
					if rng.IntN(3) == 0 {
						b.WriteString(p)
						break
					}
				}
			case 5:
				b.WriteString(markup[rng.IntN(len(markup))])
				b.WriteString(piece())
				b.WriteString(markup[rng.IntN(len(markup))])
			case 6:
				p := []byte(piece())
				for i := range p {
					if rng.IntN(4) == 0 && 'a' <= p[i] && p[i] <= 'z' {
						p[i] -= 'a' - 'A'
					}
				}
				b.Write(p)
			case 7:
				b.WriteString(base64.RawURLEncoding.EncodeToString([]byte(mutateOnce(rng, piece()))))
			default:
				b.WriteString(piece())
			}
			b.WriteString(sep)
			if rng.IntN(2) == 0 {
				b.WriteString(s)
			}
		}
		return b.String()
	}
	for range 2500 {
		in = append(in, mutate(piece()))
	}
	// texts longer than one window
	for range 4 {
		var b strings.Builder
		for b.Len() < Head+Tail+rng.IntN(4<<10) {
			b.WriteString(mutate(piece()))
		}
		in = append(in, b.String())
	}
	return in
}

// mutateOnce hides a phrase in s once more: a zero-width space inside it
// and a base64 encoding around it.
func mutateOnce(rng *rand.Rand, s string) string {
	if len(s) < 2 {
		return s
	}
	i := rng.IntN(len(s))
	return base64.StdEncoding.EncodeToString([]byte(s[:i] + "\u200b" + s[i:]))
}

// goldenLine renders a result: its findings (rule, confidence, offsets),
// its bounds, and a digest of the input.
func goldenLine(text string, r Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%.12s %d %v", digest.SHA256([]byte(text))[len("sha256:"):], r.Scanned, r.Truncated)
	for _, f := range r.Findings {
		fmt.Fprintf(&b, " %s/%d/%d-%d", f.Rule, f.Confidence, f.Start, f.End)
	}
	return b.String()
}

// TestGolden checks that Scan finds exactly what the golden file says, on
// every golden input: the speed-ups changed how Scan finds, not what.
func TestGolden(t *testing.T) {
	in := goldenInputs(t)
	if *updateGolden {
		f, err := os.Create(filepath.FromSlash(goldenFile))
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(f)
		for _, s := range in {
			fmt.Fprintln(w, goldenLine(s, Scan(s)))
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(filepath.FromSlash(goldenFile))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(want) != len(in) {
		t.Fatalf("%d golden lines for %d inputs", len(want), len(in))
	}
	bad := 0
	for i, s := range in {
		r := Scan(s)
		checkResult(t, s, r)
		if got := goldenLine(s, r); got != want[i] {
			bad++
			if bad <= 5 {
				t.Errorf("input %d (%d bytes, %.80q):\n got %s\nwant %s", i, len(s), s, got, want[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d inputs differ from %s", bad, len(in), goldenFile)
	}
}

// TestScanConcurrent scans the golden inputs from several goroutines at
// once: the phrase prefilters share their DFA caches, built as texts need
// them, and each goroutine must still get the golden findings (run it
// alone and with -race to have the caches built concurrently).
func TestScanConcurrent(t *testing.T) {
	in := goldenInputs(t)
	b, err := os.ReadFile(filepath.FromSlash(goldenFile))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(want) != len(in) {
		t.Fatalf("%d golden lines for %d inputs", len(want), len(in))
	}
	const workers = 4
	errs := make(chan string, workers)
	for g := range workers {
		go func() {
			bad := ""
			for k := range in {
				i := (k + g*len(in)/workers) % len(in) // each goroutine from its own place
				if got := goldenLine(in[i], Scan(in[i])); got != want[i] && bad == "" {
					bad = fmt.Sprintf("input %d: got %s, want %s", i, got, want[i])
				}
			}
			errs <- bad
		}()
	}
	for range workers {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
}

package scrub

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/zricethezav/gitleaks/v8/detect"
)

// fullScan is gitleaks run the plain way: every rule over the whole text.
func fullScan(t testing.TB) func(string) map[string]bool {
	t.Helper()
	d, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		t.Fatal(err)
	}
	d.IgnoreGitleaksAllow, d.MaxDecodeDepth = true, 0
	return func(text string) map[string]bool {
		out := map[string]bool{}
		for _, f := range d.DetectString(text) {
			if f.Secret != "" {
				out[f.Secret] = true
			}
		}
		return out
	}
}

// genericDoc builds text where generic-api-key has work: keywords in any
// case with prefixes up to 60 characters, every separator the rule knows,
// quoted and bare values of every length class, base64 runs, escaped
// newlines, and noise between them.
func genericDoc(r *rand.Rand) string {
	kws := []string{"key", "token", "auth", "access", "api", "API", "Api", "secret", "password", "passwd", "credential", "creds", "KEY", "Token", "AccessKey"}
	seps := []string{"=", ":", "=>", ":=", "::=", "||", ",", "?=", " = ", `": "`, `":"`, "\t:\t", ">"}
	noise := []string{"ok  github.com/acme/app 0.412s", "the session", "\\n", "\\t", " ", "build finished", "--", "x.y-z_w", `\"`, "lorem ipsum dolor"}
	alnum := "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	val := func() string {
		n := []int{4, 9, 10, 11, 12, 20, 40, 149, 150, 151, 300}[r.IntN(11)]
		cs := alnum
		switch r.IntN(3) {
		case 1:
			cs += "+/"
		case 2:
			cs += "_.=-"
		}
		var b strings.Builder
		for range n {
			b.WriteByte(cs[r.IntN(len(cs))])
		}
		if r.IntN(4) == 0 {
			b.WriteString("==")
		}
		return b.String()
	}
	var b strings.Builder
	for range 1 + r.IntN(6) {
		b.WriteString(noise[r.IntN(len(noise))])
		if r.IntN(3) == 0 {
			b.WriteString(strings.Repeat("a", r.IntN(62)))
		}
		b.WriteString(kws[r.IntN(len(kws))])
		if r.IntN(3) == 0 {
			b.WriteString(strings.Repeat("_x", r.IntN(12)))
		}
		b.WriteString(seps[r.IntN(len(seps))])
		if r.IntN(2) == 0 {
			b.WriteString(`"`)
		}
		b.WriteString(val())
		b.WriteString([]string{`"`, " ", "\\n", ";", "", "`", "\\r"}[r.IntN(7)])
		b.WriteString(noise[r.IntN(len(noise))])
	}
	return b.String()
}

// Scanning windows around generic-api-key's keywords finds every secret a
// whole-text scan finds (it may find more where matches overlap).
func TestWindowedGenericFindsWhatAFullScanFinds(t *testing.T) {
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	full := fullScan(t)
	r := rand.New(rand.NewPCG(1, 2))
	found, extra := 0, 0
	for i := range 500 {
		doc := genericDoc(r)
		if i%2 == 0 {
			doc = `{"tool_response":{"stdout":"` + doc + `"}}`
		}
		want := full(doc)
		got := map[string]bool{}
		for _, f := range s.find(doc) {
			got[f.secret] = true
		}
		for sec := range want {
			if !got[sec] {
				t.Fatalf("doc %d: a whole-text scan finds %q, the windows do not\n%s", i, sec, doc)
			}
		}
		found += len(want)
		extra += len(got) - len(want)
	}
	if found < 250 {
		t.Fatalf("the generated documents hold only %d secrets: the test does not exercise the rule", found)
	}
	t.Logf("%d secrets found by both; %d more by the windows", found, extra)
}

func FuzzWindowedGeneric(f *testing.F) {
	s, err := New()
	if err != nil {
		f.Fatal(err)
	}
	full := fullScan(f)
	r := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		f.Add(genericDoc(r))
	}
	f.Add("api_key = 'AbCdEf0123456789xyzXYZ'")
	f.Fuzz(func(t *testing.T, doc string) {
		got := map[string]bool{}
		for _, fd := range s.find(doc) {
			got[fd.secret] = true
		}
		for sec := range full(doc) {
			if !got[sec] {
				t.Fatalf("a whole-text scan finds %q, the windows do not", sec)
			}
		}
	})
}

// afterGenericKeyword is derived from generic-api-key's expression as the
// pinned gitleaks has it; a new gitleaks with another expression must be
// derived again.
func TestGenericExpressionIsTheOneTheFilterWasDerivedFrom(t *testing.T) {
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if got := s.generic.Config.Rules[genericRule].Regex.String(); got != genericExpr {
		t.Fatalf("gitleaks' generic-api-key is now\n%s\nnot\n%s\nderive afterGenericKeyword again", got, genericExpr)
	}
}

// assignmentTexts are texts that follow a keyword: assignments in the
// forms generic-api-key reads, and prose, with bytes the prefilter treats
// apart (operators, quotes, blanks, multi-byte characters) mixed in.
func assignmentTexts(r *rand.Rand, n int) []string {
	parts := []string{"_id", "-key", ".v2", " ", "\t", "\n", "'", `"`, "`", "=", ":", "::=", ":=", "=>", "||", "?=", ",", ">", ";", "(",
		"\u212a", "\u017f", "é", "AbCdEf0123456789", "abcdefghijkl", "x/y+z==", " refreshed", " is", "  ", "ok"}
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		for range 1 + r.IntN(8) {
			b.WriteString(parts[r.IntN(len(parts))])
		}
		out[i] = b.String()
	}
	return out
}

// mayAssign never rules out a text afterGenericKeyword matches, and rules
// out prose: a prefilter that said yes to everything, or one that skipped
// a match, fails here.
func TestMayAssignKeepsEveryMatch(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	matched, ruledOut := 0, 0
	for _, s := range assignmentTexts(r, 20000) {
		s = s[:min(len(s), afterGenericSpan)]
		m := afterGenericKeyword.MatchString(s)
		if m && !mayAssign(s) {
			t.Fatalf("mayAssign(%q) = false, but afterGenericKeyword matches it", s)
		}
		if m {
			matched++
		} else if !mayAssign(s) {
			ruledOut++
		}
	}
	if matched < 500 || ruledOut < 4000 {
		t.Fatalf("of 20,000 texts %d matched and %d were ruled out: the texts do not exercise the prefilter", matched, ruledOut)
	}
	for _, s := range []string{"; see the changelog", " refreshed every hour in the background", "(see below)", "`rules` key"} {
		if mayAssign(s) {
			t.Errorf("mayAssign(%q) = true: prose after a keyword is not ruled out", s)
		}
	}
	t.Logf("%d matched; %d of the others ruled out without the expression", matched, ruledOut)
}

func FuzzMayAssign(f *testing.F) {
	for _, s := range assignmentTexts(rand.New(rand.NewPCG(7, 8)), 20) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if afterGenericKeyword.MatchString(s) && !mayAssign(s) {
			t.Fatalf("mayAssign(%q) = false, but afterGenericKeyword matches it", s)
		}
	})
}

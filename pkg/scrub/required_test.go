package scrub

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
)

func mustRequire(t testing.TB, pattern string) requirement {
	t.Helper()
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		t.Fatal(err)
	}
	return required(re)
}

func TestRequired(t *testing.T) {
	tests := []struct {
		pattern string
		want    string // fmt of the requirement
	}{
		{`curl`, `[[curl]]`},
		{`(?i)CuRl`, `[[curl]]`},
		{`\bcurl\b.*[ \t](?:-H|--header)`, `[[curl] [	--header 	-h  --header  -h]]`},
		{`a|b`, `[[a b]]`},
		{`a|b*`, `[]`},           // b* matches the empty string
		{`x?`, `[]`},             // so does x?
		{`(?:ab){2,}`, `[[ab]]`}, // at least one ab
		{`(?:ab){0,3}`, `[]`},    // maybe none
		{`[a-z]+key`, `[[key]]`}, // a wide class requires nothing, key does
		{`é+token`, `[[token]]`}, // non-ASCII requires nothing (case folding)
		{`.*`, `[]`},             //
		{`(foo|bar)baz`, `[[barbaz foobaz]]`},
		{`(?:[0-9]{3}|x)y`, `[[0 1 2 3 4 5 6 7 8 9 x] [y]]`}, // at least one digit or x
	}
	for _, tt := range tests {
		if got := fmt.Sprint(mustRequire(t, tt.pattern)); got != tt.want {
			t.Errorf("required(%q) = %s, want %s", tt.pattern, got, tt.want)
		}
	}
}

// The rules gated by a requirement are the expensive ones named in the
// comment on gate; a new gitleaks release that changes them shows here.
func TestGatedRules(t *testing.T) {
	s := newScrubber(t)
	var ids []string
	for _, g := range s.gated {
		ids = append(ids, g.id)
		if len(g.req) == 0 {
			t.Errorf("rule %s gated by an empty requirement", g.id)
		}
	}
	for _, want := range []string{"curl-auth-header", "curl-auth-user"} {
		if !slices.Contains(ids, want) {
			t.Errorf("rule %s is not gated (gated: %v)", want, ids)
		}
	}
	// A verbose curl output holds "curl" (the rules' keyword) but not
	// what they require, so neither runs on it.
	out := strings.ToLower("curl -sv https://status.example.com/v1/builds\n> User-Agent: curl/8.5.0\n< HTTP/1.1 200 OK\n")
	for _, g := range s.gated {
		if strings.HasPrefix(g.id, "curl-") && g.req.holds(out) {
			t.Errorf("rule %s would run on a plain verbose curl output (requirement %q)", g.id, g.req)
		}
	}
}

// Soundness: a text the expression matches in always meets the
// requirement (otherwise gating would hide a secret).
func FuzzRequired(f *testing.F) {
	s := newScrubber(f)
	for _, g := range s.gated {
		r := g.d.Config.Rules[g.id]
		f.Add(r.Regex.String(), "curl -s -H 'Authorization: Bearer Zk3pQ9vX2mL7nR4tW8yB1cF6' https://x")
		f.Add(r.Regex.String(), "curl --user deploy:Zk3pQ9vX2mL7nR4tW8yB1cF6 https://x")
	}
	f.Add(`(?i)(foo|ba[rz]){1,3}\bqu+x`, "FOObazBARQUUX")
	f.Add(`a(?:b|c?)d`, "ad")
	f.Fuzz(func(t *testing.T, pattern, text string) {
		re, err := regexp.Compile(pattern)
		if err != nil || !isASCII(text) || !re.MatchString(text) {
			return
		}
		req := mustRequire(t, pattern)
		if !req.holds(strings.ToLower(text)) {
			t.Fatalf("%q matches %q, which lacks its requirement %q", pattern, text, req)
		}
	})
}

package scrub

import (
	"strings"
	"testing"

	"github.com/claimcheck/claimcheck/pkg/digest"
)

func TestSecretsAreLocatedNotCopied(t *testing.T) {
	s := newScrubber(t)
	text := "$ env\nAWS_ACCESS_KEY_ID=" + awsKey + "\nGH=" + ghToken + "\n" + pemKey + "\nagain: " + awsKey + "\n"
	got := s.Secrets(text)
	rules := map[string]int{}
	for i, f := range got {
		rules[f.Rule]++
		if f.Start < 0 || f.End > len(text) || f.Start >= f.End {
			t.Fatalf("secret %d: offsets %d-%d in a %d-byte text", i, f.Start, f.End, len(text))
		}
		if f.Digest != digest.SHA256([]byte(text[f.Start:f.End])) {
			t.Errorf("secret %d (%s): digest is not that of bytes %d-%d", i, f.Rule, f.Start, f.End)
		}
		if i > 0 && got[i-1].End > f.Start {
			t.Errorf("secrets %d and %d overlap or are out of order: %+v %+v", i-1, i, got[i-1], f)
		}
	}
	if rules["aws-access-token"] != 2 || rules["github-pat"] != 1 || rules["private-key"] != 1 {
		t.Fatalf("rules found: %v (%+v)", rules, got)
	}
	if a := got[0]; a.Rule != "aws-access-token" || text[a.Start:a.End] != awsKey {
		t.Errorf("first secret: %+v", a)
	}
}

func TestSecretsInCleanTextAreNone(t *testing.T) {
	s := newScrubber(t)
	for _, text := range []string{"", "ok  \tgithub.com/acme/app\t0.012s\n",
		"The token is refreshed every hour; set the key in config.yaml (see docs/auth.md).",
		strings.Repeat("## Install\n\nRun `go install example.com/tool@latest`.\n", 1000)} {
		if got := s.Secrets(text); len(got) != 0 {
			t.Errorf("Secrets(%.40q) = %+v, want none", text, got)
		}
	}
}

// A text of the same secret over and over reports MaxSecrets occurrences;
// the hostile inputs of TestPathologicalInputIsBounded are scanned.
func TestSecretsAreBounded(t *testing.T) {
	s := newScrubber(t)
	if got := s.Secrets(strings.Repeat(awsKey+"\n", 10*MaxSecrets)); len(got) != MaxSecrets {
		t.Fatalf("%d secrets reported, want the bound %d", len(got), MaxSecrets)
	}
	for name, body := range pathological {
		for _, f := range s.Secrets(body) {
			if f.Start < 0 || f.End > len(body) || f.Start >= f.End {
				t.Fatalf("%s: offsets %d-%d", name, f.Start, f.End)
			}
		}
	}
}

func FuzzSecrets(f *testing.F) {
	f.Add("AWS=" + awsKey + "\n")
	f.Add("x " + ghToken + " " + ghToken)
	f.Add("key=\xff\xfe" + awsKey)
	f.Add(pemKey)
	s := newScrubber(f)
	f.Fuzz(func(t *testing.T, text string) {
		got := s.Secrets(text)
		if len(got) > MaxSecrets {
			t.Fatalf("%d secrets, bound %d", len(got), MaxSecrets)
		}
		for i, x := range got {
			if x.Start < 0 || x.End > len(text) || x.Start >= x.End || (i > 0 && got[i-1].End > x.Start) {
				t.Fatalf("secret %d: %+v in a %d-byte text (previous %+v)", i, x, len(text), got[max(0, i-1)])
			}
			if x.Digest != digest.SHA256([]byte(text[x.Start:x.End])) {
				t.Fatalf("secret %d: digest is not its bytes'", i)
			}
		}
	})
}

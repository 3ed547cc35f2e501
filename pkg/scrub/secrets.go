package scrub

import (
	"sort"
	"strings"

	"github.com/claimcheck/claimcheck/pkg/digest"
)

// A Secret is where a secret occurs in a text: the rule that found it, its
// byte offsets and the digest of its bytes (the digest a Redaction of the
// same secret carries). It never holds the secret itself.
type Secret struct {
	Rule   string
	Start  int
	End    int
	Digest string
}

// MaxSecrets bounds what Secrets returns; a text holding more occurrences
// reports the first MaxSecrets of them.
const MaxSecrets = 64

// Secrets finds the secrets in text with the rules JSON and Text redact
// with: every occurrence of each distinct secret, in order of position,
// at most MaxSecrets. An occurrence inside a longer secret's is not
// reported again (redaction replaces the longer one whole). Offsets are
// into text as given (invalid UTF-8 is scanned as it is).
func (s *Scrubber) Secrets(text string) []Secret {
	var out []Secret
	covered := func(a, b int) bool {
		for _, x := range out {
			if a < x.End && x.Start < b {
				return true
			}
		}
		return false
	}
	// find returns the longest secrets first, so a secret that contains
	// another claims its bytes first.
	for _, f := range s.find(text) {
		d := digest.SHA256([]byte(f.secret))
		for from := 0; from < len(text) && len(out) < MaxSecrets; {
			i := strings.Index(text[from:], f.secret)
			if i < 0 {
				break
			}
			a, b := from+i, from+i+len(f.secret)
			if !covered(a, b) {
				out = append(out, Secret{Rule: f.rule, Start: a, End: b, Digest: d})
			}
			from = b
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

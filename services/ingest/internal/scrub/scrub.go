// Package scrub removes secrets from agent payloads before they are
// persisted. Detection uses gitleaks' default rule set (MIT, 222 rules with
// keyword prefilters and entropy thresholds) through gitleaks' own detector;
// the inline "gitleaks:allow" escape hatch is disabled, since the text being
// scanned is written by the agent under audit.
//
// Redaction works on the JSON text as received: every string (or number)
// token that contains a detected secret is rewritten with the secret replaced
// by a marker; every other byte is left exactly as it was, so the stored
// payload differs from what the agent sent only where a secret was.
package scrub

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"

	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/schemas"
)

// RuleSet names the rule set and its version; it goes into every entry's
// bundle so a reader knows what scrubbing was applied.
const RuleSet = "gitleaks-v8.30.1"

// Scrubber finds and redacts secrets. It is safe for concurrent use.
type Scrubber struct {
	d *detect.Detector // every rule but generic-api-key, over the whole text
	// generic is generic-api-key alone, run only on windows around its
	// keywords (see windows).
	generic *detect.Detector
	trie    *ahocorasick.Trie // its keywords, lower case
}

// genericRule is gitleaks' generic-api-key. Its expression requires one of
// its keywords at most 50 characters after the start of a match, and its
// keywords ("key", "token", "auth", "access", ...) are common words: run
// over a whole document it cost 30-40x the rest of the rule set together
// whenever one appeared (BenchmarkScrub). Windows around each keyword give
// the same matches at a fraction of the cost.
const genericRule = "generic-api-key"

// New loads gitleaks' default configuration.
func New() (*Scrubber, error) {
	d, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		return nil, fmt.Errorf("load gitleaks rules: %w", err)
	}
	d.IgnoreGitleaksAllow = true // the agent must not be able to opt its output out
	d.MaxDecodeDepth = 0
	rule, ok := d.Config.Rules[genericRule]
	if !ok {
		return &Scrubber{d: d}, nil
	}
	rest, only := d.Config, d.Config
	rest.Rules, rest.Keywords, rest.OrderedRules = map[string]config.Rule{}, map[string]struct{}{}, nil
	for id, r := range d.Config.Rules {
		if id == genericRule {
			continue
		}
		rest.Rules[id] = r
		rest.OrderedRules = append(rest.OrderedRules, id)
		for _, k := range r.Keywords {
			rest.Keywords[strings.ToLower(k)] = struct{}{}
		}
	}
	only.Rules, only.Keywords, only.OrderedRules = map[string]config.Rule{genericRule: rule}, map[string]struct{}{}, []string{genericRule}
	var kws []string
	for _, k := range rule.Keywords {
		only.Keywords[strings.ToLower(k)] = struct{}{}
		kws = append(kws, strings.ToLower(k))
	}
	sc := &Scrubber{d: detect.NewDetector(rest), generic: detect.NewDetector(only), trie: ahocorasick.NewTrieBuilder().AddStrings(kws).Build()}
	for _, x := range []*detect.Detector{sc.d, sc.generic} {
		x.IgnoreGitleaksAllow, x.MaxDecodeDepth = true, 0
	}
	return sc, nil
}

// windows returns the parts of text generic-api-key can match in: around
// each keyword, from 56 bytes before it (the rule allows 50) to 40 bytes
// after it (separators and quotes; the rule allows 31), extended over the
// value's characters and 3 more (its terminator, possibly \n), merged
// where they overlap. ok is false when text is not ASCII: Unicode case
// folding (the Kelvin sign folds to k) could hide a keyword from this
// search, so the caller scans the whole text.
func (s *Scrubber) windows(text string) (out []string, ok bool) {
	for i := 0; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			return nil, false
		}
	}
	type span struct{ a, b int }
	var spans []span
	for _, m := range s.trie.MatchString(asciiLower(text)) {
		p, n := int(m.Pos()), len(m.Match())
		a, b := max(0, p-56), min(len(text), p+n+40)
		for b < len(text) && isValueByte(text[b]) {
			b++
		}
		b = min(len(text), b+3)
		spans = append(spans, span{a, b})
	}
	if len(spans) == 0 {
		return nil, true
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].a < spans[j].a })
	cur := spans[0]
	for _, sp := range spans[1:] {
		if sp.a <= cur.b {
			cur.b = max(cur.b, sp.b)
			continue
		}
		out = append(out, text[cur.a:cur.b])
		cur = sp
	}
	return append(out, text[cur.a:cur.b]), true
}

// asciiLower lowers ASCII text (the caller checked it is ASCII, so the
// length and offsets are kept); strings.ToLower copies nothing when there
// is no upper-case letter.
func asciiLower(s string) string { return strings.ToLower(s) }

// isValueByte: the characters of generic-api-key's secret alternatives.
func isValueByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_.=-+/", c) >= 0
}

// Marker is what replaces a secret.
func Marker(rule string) string { return "[REDACTED:" + rule + "]" }

type finding struct{ rule, secret string }

// find returns the distinct secrets in text, longest first (so a secret that
// contains another is replaced whole).
func (s *Scrubber) find(text string) []finding {
	seen := map[string]bool{}
	var out []finding
	found := s.d.DetectString(text)
	if s.generic != nil {
		if ws, ok := s.windows(text); ok {
			for _, w := range ws {
				found = append(found, s.generic.DetectString(w)...)
			}
		} else {
			found = append(found, s.generic.DetectString(text)...)
		}
	}
	for _, f := range found {
		if f.Secret == "" || seen[f.Secret] {
			continue
		}
		seen[f.Secret] = true
		out = append(out, finding{rule: f.RuleID, secret: f.Secret})
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i].secret) != len(out[j].secret) {
			return len(out[i].secret) > len(out[j].secret)
		}
		return out[i].secret < out[j].secret
	})
	return out
}

// JSON scrubs a JSON document given as text. It returns the scrubbed text and
// one Redaction per distinct secret removed. raw must be valid JSON (the
// caller has checked it); an error means it was not.
func (s *Scrubber) JSON(raw []byte) ([]byte, []schemas.Redaction, error) {
	found := s.find(string(raw))
	if len(found) == 0 {
		return raw, nil, nil
	}
	// Secrets as the detector saw them (JSON text) and as they read once the
	// string is decoded (escapes such as \/ or \u0041 resolved).
	type target struct {
		rule, raw, decoded string
		used               bool
	}
	targets := make([]*target, len(found))
	for i, f := range found {
		targets[i] = &target{rule: f.rule, raw: f.secret, decoded: unescapeFragment(f.secret)}
	}
	dec := jsontext.NewDecoder(bytes.NewReader(raw), jsontext.AllowDuplicateNames(true))
	var out bytes.Buffer
	last := 0
	keyCount := 0
	for {
		start := dec.InputOffset()
		if dec.PeekKind() == 0 {
			break // end of input (the caller validated the document)
		}
		isName := false
		if depth := dec.StackDepth(); depth > 0 {
			k, n := dec.StackIndex(depth)
			isName = k == '{' && n%2 == 0
		}
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, nil, fmt.Errorf("scrub: %w", err)
		}
		end := dec.InputOffset()
		// Locate the token's own bytes (InputOffset before a token may sit
		// before separators and whitespace).
		tokStart := start
		for tokStart < end && strings.ContainsRune(" \t\r\n,:", rune(raw[tokStart])) {
			tokStart++
		}
		var val string
		switch tok.Kind() {
		case '"':
			val = tok.String()
		case '0':
			val = string(raw[tokStart:end])
		default:
			continue
		}
		replaced := val
		for _, t := range targets {
			for _, sec := range []string{t.decoded, t.raw} {
				if sec != "" && strings.Contains(replaced, sec) {
					replaced = strings.ReplaceAll(replaced, sec, Marker(t.rule))
					t.used = true
				}
			}
		}
		if replaced == val {
			continue
		}
		if isName {
			// Keep object member names unique after redaction.
			keyCount++
			replaced = fmt.Sprintf("%s#%d", replaced, keyCount)
		}
		enc, err := jsontext.AppendQuote(nil, replaced)
		if err != nil {
			return nil, nil, fmt.Errorf("scrub: %w", err)
		}
		out.Write(raw[last:tokStart])
		out.Write(enc)
		last = int(end)
	}
	out.Write(raw[last:])
	var reds []schemas.Redaction
	for _, t := range targets {
		if t.used {
			reds = append(reds, schemas.Redaction{Rule: t.rule, Digest: digest.SHA256([]byte(t.decoded))})
		}
	}
	if !jsontext.Value(out.Bytes()).IsValid() {
		return nil, nil, fmt.Errorf("scrub: redaction produced invalid JSON")
	}
	return out.Bytes(), reds, nil
}

// Text scrubs free text (an excerpt of an input that is not JSON). Invalid
// UTF-8 is replaced first, so the result can be stored in a JSON string.
func (s *Scrubber) Text(text string) (string, []schemas.Redaction) {
	text = strings.ToValidUTF8(text, "\uFFFD")
	var reds []schemas.Redaction
	for _, f := range s.find(text) {
		if strings.Contains(text, f.secret) {
			text = strings.ReplaceAll(text, f.secret, Marker(f.rule))
			reds = append(reds, schemas.Redaction{Rule: f.rule, Digest: digest.SHA256([]byte(f.secret))})
		}
	}
	return text, reds
}

// unescapeFragment decodes JSON string escapes in a fragment of JSON text
// (which may be cut anywhere); undecodable parts are kept as they are.
func unescapeFragment(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		switch n := s[i+1]; n {
		case '"', '\\', '/':
			b.WriteByte(n)
			i++
		case 'n':
			b.WriteByte('\n')
			i++
		case 't':
			b.WriteByte('\t')
			i++
		case 'r':
			b.WriteByte('\r')
			i++
		case 'b':
			b.WriteByte('\b')
			i++
		case 'f':
			b.WriteByte('\f')
			i++
		case 'u':
			if i+6 <= len(s) {
				var r rune
				ok := true
				for _, h := range s[i+2 : i+6] {
					r <<= 4
					switch {
					case h >= '0' && h <= '9':
						r |= h - '0'
					case h >= 'a' && h <= 'f':
						r |= h - 'a' + 10
					case h >= 'A' && h <= 'F':
						r |= h - 'A' + 10
					default:
						ok = false
					}
				}
				if ok && utf8.ValidRune(r) {
					b.WriteRune(r)
					i += 5
					continue
				}
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

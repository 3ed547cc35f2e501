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

	"github.com/go-json-experiment/json/jsontext"
	"github.com/zricethezav/gitleaks/v8/detect"

	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/schemas"
)

// RuleSet names the rule set and its version; it goes into every entry's
// bundle so a reader knows what scrubbing was applied.
const RuleSet = "gitleaks-v8.30.1"

// Scrubber finds and redacts secrets. It is safe for concurrent use.
type Scrubber struct {
	d *detect.Detector
}

// New loads gitleaks' default configuration.
func New() (*Scrubber, error) {
	d, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		return nil, fmt.Errorf("load gitleaks rules: %w", err)
	}
	d.IgnoreGitleaksAllow = true // the agent must not be able to opt its output out
	d.MaxDecodeDepth = 0
	return &Scrubber{d: d}, nil
}

// Marker is what replaces a secret.
func Marker(rule string) string { return "[REDACTED:" + rule + "]" }

type finding struct{ rule, secret string }

// find returns the distinct secrets in text, longest first (so a secret that
// contains another is replaced whole).
func (s *Scrubber) find(text string) []finding {
	seen := map[string]bool{}
	var out []finding
	for _, f := range s.d.DetectString(text) {
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

// Package scrub finds secrets in agent payloads and tool results, and
// removes them from payloads before they are persisted (ingest); the
// gatekeeper's post-tool firewall locates them in a tool's result with the
// same rules (Secrets). Detection uses gitleaks' default rule set (MIT,
// 222 rules with keyword prefilters and entropy thresholds) through
// gitleaks' own detector; the inline "gitleaks:allow" escape hatch is
// disabled, since the text being scanned is written by the agent under
// audit.
//
// The rules scan a JSON document's View (its text with string escapes
// decoded, so a tool's output reads as the tool printed it). Each rule
// finds what gitleaks finds running it over the whole text, at less cost:
// most rules run only on windows around the strings their expression
// requires (windowed.go), the rest only on texts holding what their
// expression requires (required.go), and generic-api-key only around its
// keywords where an assignment can follow.
//
// Redaction works on the JSON text as received: every string (or number)
// token that contains a detected secret is rewritten with the secret replaced
// by a marker; every other byte is left exactly as it was, so the stored
// payload differs from what the agent sent only where a secret was.
package scrub

import (
	"bytes"
	"fmt"
	"regexp"
	"regexp/syntax"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/report"

	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/schemas"
)

// RuleSet names the rule set, its version and what it scans ("view": the
// JSON text with its string escapes decoded, see View; entries written
// before had the raw JSON text scanned); it goes into every entry's
// bundle so a reader knows what scrubbing was applied.
const RuleSet = "gitleaks-v8.30.1+view"

// Scrubber finds and redacts secrets. It is safe for concurrent use.
type Scrubber struct {
	// d is the rules neither windowed nor gated (nor generic-api-key), over
	// the whole text, when one of restKeywords occurs in it or restAlways.
	d            *detect.Detector
	restKeywords [][]int // one clause of their numbers in windowed
	restAlways   bool
	// generic is generic-api-key alone, run only on windows around its
	// keywords (see windows).
	generic *detect.Detector
	trie    *ahocorasick.Trie // its keywords, lower case
	// gated are the rules with no bound on their matches' width, each
	// run only on texts that hold what its expression requires (see
	// required).
	gated []gatedRule
	// windowed are the rules run on windows around what they require
	// (windowed.go).
	windowed *windowIndex
}

type gatedRule struct {
	id     string
	req    requirement
	reqIDs [][]int // req's strings numbered in windowed
	d      *detect.Detector
	run    *runRule // when its matches are bounded by a run of bytes (runbound.go)
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
		return nil, fmt.Errorf("load gitleaks rules: no %s rule", genericRule)
	}
	rest, only := d.Config, d.Config
	rest.Rules, rest.Keywords, rest.OrderedRules = map[string]config.Rule{}, map[string]struct{}{}, nil
	var gated []gatedRule
	restAlways := false
	var windowed []windowedRule
	var clauses [][]string
	for _, id := range d.Config.OrderedRules {
		r := d.Config.Rules[id]
		if id == genericRule {
			continue
		}
		if r.Path != nil && !r.Path.MatchString("") {
			// A rule for some paths (pkcs12-file, hashicorp-tf-password):
			// it finds nothing in a text scanned without a path.
			continue
		}
		if w, clause, ok := windowable(d.Config, id, r); ok {
			windowed, clauses = append(windowed, w), append(clauses, clause)
			continue
		}
		if g, ok := gate(d.Config, id, r); ok {
			gated = append(gated, g)
			continue
		}
		rest.Rules[id] = r
		rest.OrderedRules = append(rest.OrderedRules, id)
		restAlways = restAlways || len(r.Keywords) == 0
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
	sc := &Scrubber{d: detect.NewDetector(rest), generic: detect.NewDetector(only),
		trie: ahocorasick.NewTrieBuilder().AddStrings(kws).Build(), gated: gated,
		windowed: newWindowIndex(d.Config, windowed, clauses), restAlways: restAlways}
	var restKeywords []string
	for k := range rest.Keywords {
		restKeywords = append(restKeywords, k)
	}
	sc.restKeywords = sc.windowed.patternsOf(requirement{restKeywords})
	for i, g := range sc.gated {
		sc.gated[i].reqIDs = sc.windowed.patternsOf(g.req)
		if g.run != nil && len(g.run.kws) > 0 {
			g.run.kwIDs = sc.windowed.patternsOf(requirement{g.run.kws})
		}
	}
	for _, k := range kws {
		sc.windowed.generic(sc.windowed.pattern(k))
	}
	sc.windowed.build()
	for _, x := range []*detect.Detector{sc.d, sc.generic} {
		x.IgnoreGitleaksAllow, x.MaxDecodeDepth = true, 0
	}
	return sc, nil
}

// gate makes rule id a gated rule when its expression requires some text
// (the rules that are not windowed, whose matches have no bound: most of
// them repeat some class without bound). Over a one-line JSON
// text such a rule costs a scan to the end of the text from every place
// its start matches (curl-auth-header and curl-auth-user, whose keyword
// "curl" is in every curl command and its verbose output, cost more than
// the other 220 rules together on a curl output: ~200 µs each for 4 KB);
// most texts lack what they require (" -h" or " --header", then
// "authorization:" or "token:" ...), and a plain substring search says so.
func gate(c config.Config, id string, r config.Rule) (gatedRule, bool) {
	if r.Regex == nil {
		return gatedRule{}, false
	}
	re, err := syntax.Parse(r.Regex.String(), syntax.Perl)
	if err != nil || len(r.RequiredRules) > 0 {
		return gatedRule{}, false
	}
	req := required(re)
	if len(req) == 0 {
		return gatedRule{}, false
	}
	c.Rules, c.OrderedRules, c.Keywords = map[string]config.Rule{id: r}, []string{id}, map[string]struct{}{}
	for _, k := range r.Keywords {
		c.Keywords[strings.ToLower(k)] = struct{}{}
	}
	run, _ := runBound(c, id, r, re)
	d := detect.NewDetector(c)
	d.IgnoreGitleaksAllow, d.MaxDecodeDepth = true, 0
	return gatedRule{id: id, req: req, d: d, run: run}, true
}

// genericExpr is generic-api-key's expression in the gitleaks version
// claimcheck pins; afterGenericKeyword is derived from it, and a test fails
// when gitleaks changes it.
const genericExpr = `(?i)[\w.-]{0,50}?(?:access|auth|(?-i:[Aa]pi|API)|credential|creds|key|passw(?:or)?d|secret|token)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([\w.=-]{10,150}|[a-z0-9][a-z0-9+/]{11,}={0,3})(?:[\x60'"\s;]|\\[nr]|$)`

// afterGenericKeyword is genericExpr from the end of its keyword on, its
// value cut to the shortest it may be and without its terminator: how the
// text must go on after a keyword for a match to use that keyword. Most
// keywords in tool output are words ("token refreshed", "auth: ok") that
// no assignment of a 10-character value follows; generic-api-key's own
// expression (bounded repeats up to 150, which Go's regexp unrolls) cost
// ~50 µs per window over them. It reads at most afterGenericSpan bytes.
var afterGenericKeyword = regexp.MustCompile(
	`^(?i:[ \t\w.-]{0,20}[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}(?:[\w.=-]{10}|[a-z0-9][a-z0-9+/]{11}))`)

const afterGenericSpan = 20 + 3 + 4 + 5 + 12

// mayAssign reports whether afterGenericKeyword may match s: false when the
// first byte of s that no name, blank or quote byte (assignName) can be is
// not where an operator (=, >, :, |, ?, ,) may start, or lies past the 23
// bytes the expression allows before its operator. The operators' bytes
// are not name bytes, so a match's operator is that first byte. Prose says
// "the key; see", "a token refreshed": the expression (about 0.2 µs a
// call) was a third of a secret scan of the benchmark's documentation
// page, which holds "key" 202 times and no assignment.
func mayAssign(s string) bool {
	for i := 0; i < len(s) && i <= 20+3; i++ {
		if c := s[i]; !assignName[c] {
			return c == '=' || c == '>' || c == ':' || c == '|' || c == '?' || c == ','
		}
	}
	return false
}

// assignName has the bytes afterGenericKeyword allows before its operator
// ([ \t\w.-] and [\s'"]), and no operator's. Under (?i) \w also holds the
// Kelvin sign and the long s, so every byte of a multi-byte character is
// one too.
var assignName = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c >= 0x80 || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			strings.IndexByte("_.- \t\n\f\r'\"", byte(c)) >= 0
	}
	return t
}()

// windows returns the parts of text generic-api-key can match in: around
// each keyword that the text after it could make part of a match
// (afterGenericKeyword), from 56 bytes before it (the rule allows 50) to 40
// bytes after it (separators and quotes; the rule allows 31), extended over
// the value's characters and 3 more (its terminator, possibly \n), merged
// where they overlap. text must be foldSafe and lower its lowerASCII.
func (s *Scrubber) windows(text, lower string) []string {
	var hits []span
	for _, m := range s.trie.MatchString(lower) {
		hits = append(hits, span{int(m.Pos()), int(m.Pos()) + len(m.Match())})
	}
	return s.windowsAt(text, hits)
}

// windowsAt is windows given where generic-api-key's keywords are in text.
func (s *Scrubber) windowsAt(text string, hits []span) (out []string) {
	var spans []span
	for _, h := range hits {
		p, n := h.a, h.b-h.a
		if rest := text[p+n : min(len(text), p+n+afterGenericSpan)]; !mayAssign(rest) || !afterGenericKeyword.MatchString(rest) {
			continue
		}
		a, b := max(0, p-56), min(len(text), p+n+40)
		for b < len(text) && isValueByte(text[b]) {
			b++
		}
		b = min(len(text), b+3)
		spans = append(spans, span{a, b})
	}
	if len(spans) == 0 {
		return nil
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
	return append(out, text[cur.a:cur.b])
}

// restRuns reports whether the rest detector has work in a text whose
// numbered strings seen are seen (and which is foldSafe): gitleaks runs a
// rule only when one of its keywords occurs in the text.
func (s *Scrubber) restRuns(seen []bool) bool {
	return s.restAlways || (len(s.restKeywords[0]) > 0 && holds(s.restKeywords, seen))
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
	// Keyword windows and requirements are searched in the text lowered
	// byte by byte; when text holds a character that Unicode case folding
	// or lowering turns into an ASCII letter (the Kelvin sign folds to k),
	// such a search could miss a keyword, so every rule scans the whole
	// text (see foldSafe).
	safe := foldSafe(text)
	var found []report.Finding
	var present []bool // of the strings windowed numbers
	var genericHits []span
	if safe {
		fs := findPool.Get().(*findScratch)
		defer fs.release() // present and genericHits are fs's
		found, present, genericHits = s.windowed.find(text, fs)
	} else {
		found = s.windowed.whole.DetectString(text)
	}
	if !safe || s.restRuns(present) {
		found = append(found, s.d.DetectString(text)...)
	}
	for _, g := range s.gated {
		if !safe || g.req == nil || holds(g.reqIDs, present) {
			if safe && g.run != nil {
				// gitleaks runs a rule when one of its keywords is in the text
				if g.run.kwIDs == nil || holds(g.run.kwIDs, present) {
					for _, w := range g.run.windows(text) {
						found = append(found, g.run.d.DetectString(text[w.a:w.b])...)
					}
				}
				continue
			}
			found = append(found, g.d.DetectString(text)...)
		}
	}
	if s.generic != nil {
		if safe {
			for _, w := range s.windowsAt(text, genericHits) {
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
	found := s.find(View(raw))
	if len(found) == 0 {
		return raw, nil, nil
	}
	// Secrets as the detector saw them: decoded, as string values read.
	type target struct {
		rule, decoded string
		used          bool
	}
	targets := make([]*target, len(found))
	for i, f := range found {
		targets[i] = &target{rule: f.rule, decoded: f.secret}
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
			if strings.Contains(replaced, t.decoded) {
				replaced = strings.ReplaceAll(replaced, t.decoded, Marker(t.rule))
				t.used = true
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

// View is the text the rules scan for a JSON document: the document with
// every string escape decoded in place ("line1\nAKIA…" becomes two lines,
// \"sk_live_…\" a quoted value). A backslash occurs in JSON text only
// inside strings, so decoding every escape of the whole text decodes the
// strings and leaves the structure ({"api_key": "…"} still reads as a
// key and its value). gitleaks' rules are written for such text: over the
// raw JSON text, a secret at the start of an output line follows the
// letter n of its \n escape, so \b(AKIA…) never matches there, and one
// in escaped quotes is followed by a backslash that no rule's terminator
// ([\x60'"\s;]) accepts.
func View(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw)
	}
	return unescapeFragment(string(raw))
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
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if j := strings.IndexByte(s[i:], '\\'); j != 0 {
			if j < 0 {
				j = len(s) - i
			}
			b.WriteString(s[i : i+j]) // the run up to the next escape
			i += j - 1
			continue
		}
		c := s[i]
		if i+1 >= len(s) {
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
				if ok && utf16.IsSurrogate(r) && i+12 <= len(s) && s[i+6] == '\\' && s[i+7] == 'u' {
					// A surrogate pair: \ud83d\ude00 is one character.
					if lo, err := strconv.ParseUint(s[i+8:i+12], 16, 16); err == nil {
						if p := utf16.DecodeRune(r, rune(lo)); p != utf8.RuneError {
							b.WriteRune(p)
							i += 11
							continue
						}
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

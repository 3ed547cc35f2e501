package inject

import (
	"regexp"
	"slices"
	"sort"
	"strings"
)

// maxJudged bounds the bytes of hidden regions judged by cue per window.
const maxJudged = 64 << 10

// A region is a span [s, e) of the scanned window.
type region struct{ s, e int }

// in reports whether at falls in one of rs (ordered, not overlapping).
func in(rs []region, at int) bool {
	i := sort.Search(len(rs), func(i int) bool { return rs[i].e > at })
	return i < len(rs) && rs[i].s <= at
}

// fenced returns the markdown code blocks (``` or ~~~ fences) of low.
func fenced(low string) []region {
	var out []region
	open := -1
	for i := 0; i < len(low); {
		nl := strings.IndexByte(low[i:], '\n')
		end := len(low)
		if nl >= 0 {
			end = i + nl
		}
		line := strings.TrimLeft(low[i:end], " \t")
		if strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~") {
			if open < 0 {
				open = i
			} else {
				out = append(out, region{open, end})
				open = -1
			}
		}
		i = end + 1
	}
	if open >= 0 {
		out = append(out, region{open, len(low)})
	}
	return out
}

// hiddenStyle matches, at "style", an attribute that hides its element's
// text from a human reader.
var hiddenStyle = regexp.MustCompile(`^(?:style\s*=\s*["'](?:[^"'>]*?[;\s])?color\s*:\s*` +
	`(?:#fff(?:fff)?|white|rgba?\(\s*255\s*,\s*255\s*,\s*255)\b[^"'>]*["']` +
	`|style\s*=\s*["'][^"'>]*?(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?:px|pt|em)?\s*(?:[;"']|!)|` +
	`opacity\s*:\s*0(?:\.0+)?\s*(?:[;"']|!)|(?:^|[;\s])color\s*:\s*(?:#fff(?:fff)?|white|rgba?\(\s*255\s*,\s*255\s*,\s*255|transparent)\b|` +
	`(?:left|top|text-indent)\s*:\s*-\d{3,}|(?:height|width)\s*:\s*0(?:px)?\s*;[^"']*overflow\s*:\s*hidden|clip\s*:\s*rect\(0))`)

// Text a rendered page does not show as text, each expression tried at its
// anchor: alt, title, aria-label and data- attributes, image alt text, link
// titles, and markdown's comment idiom [//]: # (…) at a line's start.
var (
	attrRE      = regexp.MustCompile(`^(?:alt|title|aria-label|data-[a-z-]+)\s*=\s*"([^"]{24,1000})"`)
	imgAltRE    = regexp.MustCompile(`^!\[([^\]\n]{24,1000})\]\(`)
	linkTitleRE = regexp.MustCompile(`^\]\([^)\s]+\s+"([^"\n]{24,1000})"\)`)
	mdCommentRE = regexp.MustCompile(`^\[[^\]\n]*\]:\s*(?:#|<>)\s*\(([^)\n]{12,1000})\)`)
)

// hidden finds text hidden from a human reader: HTML comments, elements
// styled out of sight, alt text and titles, markdown comments. A hidden
// region that holds a phrase finding is High; one whose text speaks to an
// AI agent with a directive and a sensitive action (cue) is Medium.
func hidden(w, low string, found []Finding, marks []marker) []Finding {
	var out []Finding
	starts := make([]int, len(found))
	for i, f := range found {
		starts[i] = f.Start
	}
	slices.Sort(starts)
	budget := maxJudged
	judgeRegion := func(rule string, s, e int) {
		c := Confidence(0)
		if i, _ := slices.BinarySearch(starts, s); i < len(starts) && starts[i] < e {
			c = High
		}
		if c == 0 && e-s <= 8<<10 && budget > 0 {
			budget -= e - s
			c = cue(low[s:e])
			if c < Medium {
				c = 0
			}
		}
		if c > 0 {
			out = append(out, Finding{Rule: rule, Confidence: c, Start: s, End: e})
		}
	}
	marks = styleMarkers(marks, low)
	from := 0 // where the last comment ended
	for _, m := range marks {
		if m.kind != markComment || m.at < from {
			continue
		}
		i := m.at
		e := strings.Index(low[i+4:], "-->")
		if e < 0 {
			e = len(low)
		} else {
			e += i + 4 + 3
		}
		judgeRegion("hidden.comment", i, e)
		from = e
	}
	styled := 0 // where the last hidden element's content ended
	for _, m := range marks {
		i := m.at
		if m.kind != markStyle || i < styled {
			continue
		}
		m := hiddenStyle.FindStringIndex(low[i:min(len(low), i+400)])
		if m == nil {
			continue
		}
		// the element's content: up to its closing tag, at most 4 KiB on
		s := i + m[1]
		e := min(len(low), s+4<<10)
		if c := strings.Index(low[s:e], "</"); c >= 0 {
			e = s + c
			// nested tags: when no text precedes the first closing tag, take the next one
			if n := strings.Index(low[e+2:min(len(low), e+2+2<<10)], "</"); n >= 0 && strings.TrimSpace(stripTags(low[s:e])) == "" {
				e = e + 2 + n
			}
		}
		judgeRegion("hidden.style", s, e)
		styled = e
	}
	for _, k := range []struct {
		kind markKind
		re   *regexp.Regexp
	}{
		{markAlt, attrRE}, {markTitle, attrRE}, {markAria, attrRE}, {markData, attrRE},
		{markImage, imgAltRE}, {markLink, linkTitleRE}, {markMD, mdCommentRE},
	} {
		for _, m := range marks {
			if m.kind != k.kind {
				continue
			}
			i := m.at
			if r := k.re.FindStringSubmatchIndex(low[i:min(len(low), i+1100)]); r != nil {
				judgeRegion("hidden.attribute", i+r[2], i+r[3])
			}
		}
	}
	return out
}

// The markers hidden text starts at.
type markKind uint8

const (
	markComment markKind = iota + 1 // <!--
	markStyle                       // style, then =, then a quote
	markAlt                         // alt, title, aria-label, data-…: at a word's start, then =, then "
	markTitle
	markAria
	markData
	markImage // ![
	markLink  // ](, then a link, then white space and "
	markMD    // [ at a line's start, then ]:
)

type marker struct {
	kind markKind
	at   int
}

// The markers are the places hidden's expressions may match at: each
// marker's literal text and the bytes its expression needs next (an "="
// and a quote after an attribute's name); the expressions decide. The
// phrase pass finds them at word starts (markWord) and punctuation
// (markPunct) as it walks the window, and styleMarkers finds "style", which
// may start mid-word; each kind's markers are in order.

// punctMark and wordMark hold the bytes markPunct's and markWord's markers
// start with.
var punctMark, wordMark = func() (p, w [256]bool) {
	for _, c := range "<!][" {
		p[c] = true
	}
	for _, c := range "atd" {
		w[c] = true
	}
	return p, w
}()

// markWord adds the marker that starts at low[i], the start of a word.
func markWord(out []marker, low string, i int) []marker {
	switch rest := low[i:]; low[i] {
	case 'a':
		switch {
		case strings.HasPrefix(rest, "alt") && assigns(low, i+3, '"', '"'):
			out = append(out, marker{markAlt, i})
		case strings.HasPrefix(rest, "aria-label") && assigns(low, i+10, '"', '"'):
			out = append(out, marker{markAria, i})
		}
	case 't':
		if strings.HasPrefix(rest, "title") && assigns(low, i+5, '"', '"') {
			out = append(out, marker{markTitle, i})
		}
	case 'd':
		if strings.HasPrefix(rest, "data-") {
			j := i + 5
			for j < len(low) && ('a' <= low[j] && low[j] <= 'z' || low[j] == '-') {
				j++
			}
			if assigns(low, j, '"', '"') {
				out = append(out, marker{markData, i})
			}
		}
	}
	return out
}

// markPunct adds the marker that starts at low[i], punctuation.
func markPunct(out []marker, low string, i int) []marker {
	switch rest := low[i:]; low[i] {
	case '<':
		if strings.HasPrefix(rest, "<!--") {
			out = append(out, marker{markComment, i})
		}
	case '!':
		if strings.HasPrefix(rest, "![") {
			out = append(out, marker{markImage, i})
		}
	case ']':
		if strings.HasPrefix(rest, "](") && linkTitled(low, i+2) {
			out = append(out, marker{markLink, i})
		}
	case '[':
		if (i == 0 || low[i-1] == '\n') && mdLabel(low, i+1) {
			out = append(out, marker{markMD, i})
		}
	}
	return out
}

// styleMarkers adds the markers of "style" attributes: "style" (at any
// byte: it may end a longer word), white space, "=", white space and a
// quote. It looks for the "=" (rare in prose, where "s", which a search
// for "style" would stop at, is common) and reads back from it.
func styleMarkers(out []marker, low string) []marker {
	for off := 0; ; {
		e := strings.IndexByte(low[off:], '=')
		if e < 0 {
			return out
		}
		e += off
		off = e + 1
		k := e
		for k > 0 && isSpace(low[k-1]) {
			k--
		}
		if k >= 5 && low[k-5:k] == "style" && assigns(low, k, '"', '\'') {
			out = append(out, marker{markStyle, k - 5})
		}
	}
}

// isSpace is \s in an expression: \t, \n, \f, \r and space.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// assigns reports whether low[j:] is white space, "=", white space and a
// quote q1 or q2.
func assigns(low string, j int, q1, q2 byte) bool {
	for j < len(low) && isSpace(low[j]) {
		j++
	}
	if j == len(low) || low[j] != '=' {
		return false
	}
	j++
	for j < len(low) && isSpace(low[j]) {
		j++
	}
	return j < len(low) && (low[j] == q1 || low[j] == q2)
}

// linkTitled reports whether low[j:] is a link (no ")" or white space),
// white space and a quote: a link's title.
func linkTitled(low string, j int) bool {
	k := j
	for k < len(low) && low[k] != ')' && !isSpace(low[k]) {
		k++
	}
	if k == j || k == len(low) || low[k] == ')' {
		return false
	}
	for k < len(low) && isSpace(low[k]) {
		k++
	}
	return k < len(low) && low[k] == '"'
}

// mdLabel reports whether low[j:] is a label's rest on one line, then "]:".
func mdLabel(low string, j int) bool {
	for j < len(low) && low[j] != ']' && low[j] != '\n' {
		j++
	}
	return j+1 < len(low) && low[j] == ']' && low[j+1] == ':'
}

// stripTags removes <…> from s.
func stripTags(s string) string {
	var b strings.Builder
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<':
			depth++
		case '>':
			if depth > 0 {
				depth--
			}
		default:
			if depth == 0 {
				b.WriteByte(s[i])
			}
		}
	}
	return b.String()
}

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

// each calls fn with every offset of sub in s.
func each(s, sub string, fn func(i int)) {
	for off := 0; ; {
		i := strings.Index(s[off:], sub)
		if i < 0 {
			return
		}
		fn(off + i)
		off += i + len(sub)
	}
}

// hidden finds text hidden from a human reader: HTML comments, elements
// styled out of sight, alt text and titles, markdown comments. A hidden
// region that holds a phrase finding is High; one whose text speaks to an
// AI agent with a directive and a sensitive action (cue) is Medium.
func hidden(w, low string, found []Finding) []Finding {
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
	for off := 0; ; {
		i := strings.Index(low[off:], "<!--")
		if i < 0 {
			break
		}
		i += off
		e := strings.Index(low[i+4:], "-->")
		if e < 0 {
			e = len(low)
		} else {
			e += i + 4 + 3
		}
		judgeRegion("hidden.comment", i, e)
		off = e
	}
	styled := 0 // where the last hidden element's content ended
	each(low, "style", func(i int) {
		if i < styled {
			return
		}
		m := hiddenStyle.FindStringIndex(low[i:min(len(low), i+400)])
		if m == nil {
			return
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
	})
	attr := func(re *regexp.Regexp, wordStart bool) func(int) {
		return func(i int) {
			if wordStart && i > 0 && isWord(low[i-1]) {
				return
			}
			if m := re.FindStringSubmatchIndex(low[i:min(len(low), i+1100)]); m != nil {
				judgeRegion("hidden.attribute", i+m[2], i+m[3])
			}
		}
	}
	for _, a := range []string{"alt", "title", "aria-label", "data-"} {
		each(low, a, attr(attrRE, true))
	}
	each(low, "![", attr(imgAltRE, false))
	each(low, "](", attr(linkTitleRE, false))
	if strings.HasPrefix(low, "[") {
		attr(mdCommentRE, false)(0)
	}
	each(low, "\n[", func(i int) { attr(mdCommentRE, false)(i + 1) })
	return out
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

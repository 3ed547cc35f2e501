package inject

import (
	"regexp"
	"strings"
)

// A region is a span [s, e) of the scanned window.
type region struct{ s, e int }

func in(rs []region, at int) bool {
	for _, r := range rs {
		if r.s <= at && at < r.e {
			return true
		}
	}
	return false
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

// hiddenStyle matches a style attribute that hides its element's text from
// a human reader.
var hiddenStyle = regexp.MustCompile(`style\s*=\s*["'](?:[^"'>]*?[;\s])?color\s*:\s*(?:#fff(?:fff)?|white|rgba?\(\s*255\s*,\s*255\s*,\s*255)\b[^"'>]*["']` +
	`|style\s*=\s*["'][^"'>]*?(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?:px|pt|em)?\s*(?:[;"']|!)|` +
	`opacity\s*:\s*0(?:\.0+)?\s*(?:[;"']|!)|(?:^|[;\s])color\s*:\s*(?:#fff(?:fff)?|white|rgba?\(\s*255\s*,\s*255\s*,\s*255|transparent)\b|` +
	`(?:left|top|text-indent)\s*:\s*-\d{3,}|(?:height|width)\s*:\s*0(?:px)?\s*;[^"']*overflow\s*:\s*hidden|clip\s*:\s*rect\(0)`)

// attrText matches attributes and markdown that carry text a rendered page
// does not show as text: alt and title attributes, image alt text, link
// titles, and markdown's comment idiom [//]: # (…).
var attrText = regexp.MustCompile(`(?:\balt|\btitle|\baria-label|\bdata-[a-z-]+)\s*=\s*"([^"]{24,1000})"` +
	`|!\[([^\]\n]{24,1000})\]\(` +
	`|\]\([^)\s]+\s+"([^"\n]{24,1000})"\)` +
	`|(?m:^\[[^\]\n]*\]:\s*(?:#|<>)\s*\(([^)\n]{12,1000})\))`)

// hidden finds text hidden from a human reader: HTML comments, elements
// styled out of sight, alt text and titles, markdown comments. A hidden
// region that holds a phrase finding is High; one whose text speaks to an
// AI agent with a directive and a sensitive action (cue) is Medium.
func hidden(w, low string, found []Finding) []Finding {
	var out []Finding
	judgeRegion := func(rule string, s, e int) {
		c := Confidence(0)
		for _, f := range found {
			if f.Start >= s && f.Start < e {
				c = High
				break
			}
		}
		if c == 0 && e-s <= 8<<10 {
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
	if strings.Contains(low, "style") {
		for _, m := range hiddenStyle.FindAllStringIndex(low, -1) {
			// the element's content: up to its closing tag, at most 4 KiB on
			s := m[1]
			e := min(len(low), s+4<<10)
			if c := strings.Index(low[s:e], "</"); c >= 0 {
				// nested tags: take up to the first closing tag after some text
				e = s + c
				if n := strings.Index(low[e+2:min(len(low), e+2+2<<10)], "</"); n >= 0 && strings.TrimSpace(stripTags(low[s:e])) == "" {
					e = e + 2 + n
				}
			}
			judgeRegion("hidden.style", s, e)
		}
	}
	if strings.Contains(low, "alt") || strings.Contains(low, "title") || strings.Contains(low, "](") || strings.Contains(low, "]:") ||
		strings.Contains(low, "aria-label") || strings.Contains(low, "data-") {
		for _, m := range attrText.FindAllStringSubmatchIndex(low, -1) {
			for g := 2; g+1 < len(m); g += 2 {
				if m[g] >= 0 {
					judgeRegion("hidden.attribute", m[g], m[g+1])
					break
				}
			}
		}
	}
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

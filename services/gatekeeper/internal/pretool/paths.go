package pretool

import (
	"errors"
	"path"
	"strings"

	"github.com/claimcheck/claimcheck/pkg/shell"
)

// pattern is a compiled path pattern. A pattern starting with / is
// anchored at the root, one starting with ~ at the home directory; any
// other matches the trailing segments of a path at any depth. Each segment
// is a path.Match glob.
type pattern struct {
	raw     string
	home    bool
	abs     bool
	segs    []string
	dir     bool // written with a trailing /: covers everything beneath
	runtime bool // supplied at run time (Runtime.ProtectedPaths)
}

func compilePattern(s string) (pattern, error) {
	p := pattern{raw: s}
	if s == "" {
		return p, errors.New("empty pattern")
	}
	if strings.ContainsAny(s, "\x00\x01\x02") {
		return p, errors.New("control characters")
	}
	rest := s
	switch {
	case s == "~" || strings.HasPrefix(s, "~/"):
		p.home, rest = true, strings.TrimPrefix(s[1:], "/")
	case strings.HasPrefix(s, "/"):
		p.abs, rest = true, s[1:]
	}
	p.dir = strings.HasSuffix(rest, "/")
	if rest != "" {
		c := path.Clean(rest)
		if c == ".." || strings.HasPrefix(c, "../") {
			return p, errors.New("pattern climbs above its anchor (..)")
		}
		if c != "." {
			p.segs = strings.Split(c, "/")
		}
	}
	if !p.home && !p.abs && len(p.segs) == 0 {
		return p, errors.New("pattern matches nothing")
	}
	for _, seg := range p.segs {
		if _, err := path.Match(seg, ""); err != nil {
			return p, err
		}
	}
	return p, nil
}

// resolve interprets s (a word after evaluation, possibly with markers)
// against cwd ("" when unknown) and the home directory.
func (c *context) resolve(s, cwd string) shell.Path { return shell.Resolve(s, cwd, c.home) }

// full returns the segments an anchored pattern covers, and whether it is
// anchored at all.
func (c *context) full(p pattern) ([]string, bool) {
	switch {
	case p.home:
		return append(shell.SplitPath(c.home), p.segs...), true
	case p.abs:
		return p.segs, true
	}
	return p.segs, false
}

// segMatch matches one path segment against one pattern segment; a segment
// that is itself a glob (rm -rf ~/.lo*) matches the literal pattern
// segments it could expand to. A bare wildcard (*) matches a literal only
// when wild is set: inside a multi-segment pattern (cat ~/.aws/*), not
// against a file name alone (rm -rf build/* is not about _netrc).
func segMatch(pat, seg string, glob, wild bool) bool {
	if ok, _ := path.Match(pat, seg); ok {
		return true
	}
	if !wild && strings.Trim(seg, "*?") == "" {
		return false
	}
	if glob && shell.HasMeta(seg) && !shell.HasMeta(pat) {
		// A shell glob matches a dot file only with a leading dot.
		if strings.HasPrefix(pat, ".") && !strings.HasPrefix(seg, ".") {
			return false
		}
		if ok, _ := path.Match(seg, pat); ok {
			return true
		}
	}
	return false
}

// match reports whether f is what p names or, when beneath (or p.dir), is
// inside it.
func (c *context) match(p pattern, f shell.Path, beneath bool) bool {
	segs, anchored := c.full(p)
	beneath = beneath || p.dir
	if anchored {
		if !f.Abs || len(f.Segs) < len(segs) || (len(f.Segs) > len(segs) && !beneath) {
			return false
		}
		for i, s := range segs {
			if !segMatch(s, f.Segs[i], f.Glob, len(segs) > 1) {
				return false
			}
		}
		return true
	}
	n := len(segs)
	for start := 0; start+n <= len(f.Segs); start++ {
		if start+n < len(f.Segs) && !beneath {
			continue
		}
		ok := true
		for i, s := range segs {
			if !segMatch(s, f.Segs[start+i], f.Glob, len(segs) > 1) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// contains reports whether f is a directory strictly above what p names
// (rm -rf ~/.local removes ~/.local/share/claimcheck). For a pattern that
// is not anchored, f's last segments must name the pattern's first ones:
// mv .claude x moves .claude/settings.json away, while rm -rf build, which
// could hold a .claude/settings.json of its own, is no concern of p.
func (c *context) contains(p pattern, f shell.Path) bool {
	segs, anchored := c.full(p)
	if !anchored {
		for k := min(len(segs)-1, len(f.Segs)); k >= 1; k-- {
			tail, ok := f.Segs[len(f.Segs)-k:], true
			for i, s := range tail {
				if !segMatch(segs[i], s, f.Glob, true) {
					ok = false
					break
				}
			}
			if ok {
				return true
			}
		}
		return false
	}
	if !f.Abs || len(f.Segs) >= len(segs) {
		return false
	}
	for i, s := range f.Segs {
		if !segMatch(segs[i], s, f.Glob, true) {
			return false
		}
	}
	return true
}

// matchAny returns the first pattern matching f.
func (c *context) matchAny(pats []pattern, f shell.Path, beneath, above bool) (pattern, bool) {
	for _, p := range pats {
		if c.match(p, f, beneath) || above && c.contains(p, f) {
			return p, true
		}
	}
	return pattern{}, false
}

// isRoot reports whether f is a system root (or the home directory), or a
// glob over the entries of one (/*, ~/.*).
func (c *context) isRoot(roots []pattern, f shell.Path) bool {
	if !f.Abs {
		return false
	}
	for _, p := range roots {
		if c.match(p, f, false) {
			return true
		}
	}
	if f.Glob {
		for i, s := range f.Segs {
			if shell.HasMeta(s) {
				prefix := shell.Path{Abs: true, Segs: f.Segs[:i]}
				for _, p := range roots {
					if c.match(p, prefix, false) {
						return true
					}
				}
				break
			}
		}
	}
	return false
}

// sensitive reports the sensitive pattern f matches, unless an exception
// matches it too.
func (c *context) sensitive(p *Policy, f shell.Path) (pattern, bool) {
	pat, ok := c.matchAny(p.c.sensitive, f, false, false)
	if !ok {
		return pat, false
	}
	// A glob (cat .e*) may match secrets beside the exceptions.
	if _, exc := c.matchAny(p.c.exceptions, f, false, false); exc && !f.Glob {
		return pat, false
	}
	return pat, true
}

// Benign device files: writing to them destroys nothing.
var benignDevices = map[string]bool{
	"/dev/null": true, "/dev/zero": true, "/dev/full": true, "/dev/random": true, "/dev/urandom": true,
	"/dev/tty": true, "/dev/stdin": true, "/dev/stdout": true, "/dev/stderr": true, "/dev/ptmx": true,
	"/dev/console": true,
}

// isDevice reports whether f is a device file whose overwriting destroys
// data (disks, partitions, memory), as opposed to /dev/null and friends.
func isDevice(f shell.Path) bool {
	if !f.Abs || len(f.Segs) < 2 || f.Segs[0] != "dev" {
		return false
	}
	if benignDevices[f.Key()] {
		return false
	}
	switch f.Segs[1] {
	case "fd", "pts", "shm", "mqueue", "tcp", "udp":
		return false
	}
	if strings.HasPrefix(f.Segs[1], "tty") || strings.HasPrefix(f.Segs[1], "pts") {
		return false
	}
	return true
}

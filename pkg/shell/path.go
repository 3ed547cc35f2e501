package shell

import (
	"path"
	"strings"
)

// Markers the evaluator puts into words for what it cannot know. A caller
// must refuse input that holds these bytes (or replace them, Sanitize)
// before evaluating it, so that they cannot be forged.
const (
	UnknownMaybeEmpty = "\x00" // an expansion whose value is unknown and may be empty
	UnknownNonEmpty   = "\x01" // an expansion whose value is unknown but not empty
	homeMarker        = "\x02" // ~ or $HOME at the start of a word, home unknown
	// SymbolicHome is the home directory when it is not known: ~ and $HOME
	// resolve beneath it.
	SymbolicHome = "/" + homeMarker
	markers      = UnknownMaybeEmpty + UnknownNonEmpty + homeMarker
)

// Display turns markers back into readable text.
func Display(s string) string {
	return strings.NewReplacer(SymbolicHome, "~", homeMarker, "~", UnknownMaybeEmpty, "$…", UnknownNonEmpty, "$…").Replace(s)
}

// Sanitize replaces marker bytes in text that did not come from the
// evaluator.
func Sanitize(s string) string {
	if strings.ContainsAny(s, markers) {
		return strings.NewReplacer("\x00", "\uFFFD", "\x01", "\uFFFD", "\x02", "\uFFFD").Replace(s)
	}
	return s
}

// HasMeta reports whether s holds glob characters.
func HasMeta(s string) bool { return strings.ContainsAny(s, "*?[") }

// Path is a file a word names, resolved: absolute (segments from the root)
// or relative to something unknown (an unknown working directory or a
// dynamic prefix).
type Path struct {
	Abs  bool
	Segs []string
	Glob bool   // some segment holds unquoted glob characters
	Text string // as written, for messages
}

// Key is the path as one string, markers and all: equal files have equal
// keys.
func (f Path) Key() string {
	if f.Abs {
		return "/" + strings.Join(f.Segs, "/")
	}
	return strings.Join(f.Segs, "/")
}

// String is the path for a message.
func (f Path) String() string { return Display(f.Key()) }

// SplitPath cleans an absolute path into its segments (none for /).
func SplitPath(s string) []string {
	c := path.Clean("/" + s)
	if c == "/" {
		return nil
	}
	return strings.Split(c[1:], "/")
}

// Resolve interprets s (a word after evaluation, possibly with markers)
// against cwd ("" when unknown) and home (absolute, or SymbolicHome).
func Resolve(s, cwd, home string) Path {
	f := Path{Text: s}
	if s == "" {
		return f
	}
	switch s[0] {
	case homeMarker[0]:
		f.Abs = true
		f.Segs = SplitPath(home + "/" + strings.ReplaceAll(s[1:], homeMarker, UnknownNonEmpty))
		return f
	case UnknownMaybeEmpty[0], UnknownNonEmpty[0]:
		f.Segs = relSegs(strings.ReplaceAll(s, homeMarker, UnknownNonEmpty))
		return f
	}
	s = strings.ReplaceAll(s, homeMarker, UnknownNonEmpty)
	switch {
	case s[0] == '/':
		f.Abs, f.Segs = true, SplitPath(s)
	case cwd != "":
		f.Abs, f.Segs = true, SplitPath(cwd+"/"+s)
	default:
		f.Segs = relSegs(s)
	}
	return f
}

// relSegs cleans a relative path; leading .. segments stay.
func relSegs(s string) []string {
	c := path.Clean(s)
	if c == "." {
		return nil
	}
	return strings.Split(c, "/")
}

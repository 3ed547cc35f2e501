package shell

import "maps"

// Stream describes what flows out of a command (into a pipe or a command
// substitution) or into it.
type Stream struct {
	Download bool     // bytes fetched from the network
	Decoded  bool     // bytes decoded from base64, hex, …
	Static   *string  // the exact bytes, when known
	Items    []string // the items a command lists (find's start points), for xargs
}

// StaticStream is a stream of known bytes.
func StaticStream(s string) Stream { return Stream{Static: &s} }

// Silent is the output of a command that prints nothing (cd, x=1).
func Silent() Stream { return StaticStream("") }

// Taint is what passes through a filter: the origin, not the bytes.
func (s Stream) Taint() Stream { return Stream{Download: s.Download, Decoded: s.Decoded} }

// Then is s followed by t (a list of commands writing to one output).
func (s Stream) Then(t Stream) Stream {
	out := Stream{Download: s.Download || t.Download, Decoded: s.Decoded || t.Decoded}
	if s.Static != nil && t.Static != nil {
		joined := *s.Static + *t.Static
		out.Static = &joined
	}
	return out
}

// State is what the walk knows of the shell at one point.
type State struct {
	Cwd       string           // absolute, or "" when unknown
	Vars      map[string]Field // assigned variables (a dynamic value keeps its taint)
	Args      []Field          // positional parameters, when ArgsKnown
	ArgsKnown bool
	Aliases   map[string]string // defined aliases; UnknownMaybeEmpty when the value is dynamic
	Funcs     map[string]Stream // defined functions and what they output
	Downloads map[string]bool   // files (Path.Key) written with downloaded content
	Scripts   map[string]string // files (Path.Key) written with static content (echo … > x.sh)
	ifsDirty  bool              // IFS was assigned: field splitting is unknown
	Stdin     Stream
}

// NewState is a shell that has run nothing yet, in cwd ("" when unknown),
// with no positional parameters.
func NewState(cwd string) *State {
	return &State{
		Cwd: cwd, Vars: map[string]Field{}, ArgsKnown: true,
		Aliases: map[string]string{}, Funcs: map[string]Stream{}, Downloads: map[string]bool{}, Scripts: map[string]string{},
	}
}

// Clone is a copy of s that changes independently (a subshell).
func (s *State) Clone() *State {
	c := *s
	c.Vars = maps.Clone(s.Vars)
	c.Aliases = maps.Clone(s.Aliases)
	c.Funcs = maps.Clone(s.Funcs)
	c.Downloads = maps.Clone(s.Downloads)
	c.Scripts = maps.Clone(s.Scripts)
	c.Args = append([]Field(nil), s.Args...)
	return &c
}

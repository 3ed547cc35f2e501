package pretool

import (
	"encoding/base64"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/claimcheck/claimcheck/pkg/shell"
)

// Programs that pass their input on, decode it or turn it around: what
// they output is what a later command in a pipeline runs (base64 -d | sh).

// cat outputs its input, or its files: downloaded ones stay downloads.
func (a *analysis) cat(c call) shell.Stream {
	st, o := c.st, c.opts()
	if len(o.Operands) == 0 {
		return st.Stdin
	}
	out := shell.Stream{}
	for _, t := range o.Operands {
		if t.Proc != nil {
			out = out.Then(t.Proc.Taint())
		}
		if st.Downloads[a.ctx.resolve(t.S, st.Cwd).Key()] {
			out.Download = true
		}
	}
	a.readOperands(c.base, o.Operands, st, readOpts{})
	return out.Taint()
}

// xxd -r undoes a hex dump: its output is decoded.
func (a *analysis) xxd(c call) shell.Stream {
	st, o := c.st, c.opts()
	a.readOperands(c.base, o.Operands, st, readOpts{})
	if !o.Has("-r", "--revert") {
		return st.Stdin.Taint()
	}
	if st.Stdin.Static != nil && o.Has("-p", "-ps", "--plain") {
		if b, err := hex.DecodeString(strings.Join(strings.Fields(*st.Stdin.Static), "")); err == nil {
			return shell.Stream{Static: ptr(shell.Sanitize(string(b))), Decoded: true, Download: st.Stdin.Download}
		}
	}
	return shell.Stream{Decoded: true, Download: st.Stdin.Download}
}

// openssl base64 -d and openssl enc -d (or -a) decode.
func (a *analysis) openssl(c call) shell.Stream {
	a.genericReads(c)
	args := c.args()
	if len(args) > 0 && (args[0].S == "base64" || args[0].S == "enc") &&
		slices.ContainsFunc(args, func(f shell.Field) bool { return f.S == "-d" || f.S == "-a" && args[0].S == "enc" }) {
		return shell.Stream{Decoded: true, Download: c.st.Stdin.Download}
	}
	return c.st.Stdin.Taint()
}

// rev turns its input's lines around: a way to hide a command.
func (a *analysis) rev(c call) shell.Stream {
	st := c.st
	if len(c.args()) == 0 && st.Stdin.Static != nil {
		lines := strings.Split(*st.Stdin.Static, "\n")
		for i, l := range lines {
			r := []rune(l)
			slices.Reverse(r)
			lines[i] = string(r)
		}
		return shell.Stream{Static: ptr(strings.Join(lines, "\n")), Decoded: true, Download: st.Stdin.Download}
	}
	a.genericReads(c)
	return shell.Stream{Decoded: true, Download: st.Stdin.Download}
}

// base64 decodes static input; otherwise marks the output decoded.
func (a *analysis) base64(c call) shell.Stream {
	st, o := c.st, c.opts()
	a.readOperands(c.base, o.Operands, st, readOpts{})
	if !o.Has("-d", "--decode", "-D") {
		return st.Stdin.Taint()
	}
	out := shell.Stream{Decoded: true, Download: st.Stdin.Download}
	for _, t := range o.Operands {
		if t.Proc != nil {
			out.Download = out.Download || t.Proc.Download
		}
		if st.Downloads[a.ctx.resolve(t.S, st.Cwd).Key()] {
			out.Download = true
		}
	}
	if len(o.Operands) == 0 && st.Stdin.Static != nil && c.base == "base64" {
		clean := strings.Join(strings.Fields(*st.Stdin.Static), "")
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			if b, err := enc.DecodeString(clean); err == nil {
				out.Static = ptr(shell.Sanitize(string(b)))
				break
			}
		}
	}
	return out
}

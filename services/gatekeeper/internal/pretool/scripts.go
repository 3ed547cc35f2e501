package pretool

import (
	"encoding/base64"
	"slices"
	"strings"

	"github.com/claimcheck/claimcheck/pkg/shell"
)

// nestedScript analyses a script given as one word (bash -c, trap, watch,
// su -c): its origin first, then its text one level deeper.
func (a *analysis) nestedScript(what string, script shell.Field, st *shell.State, depth int) {
	switch {
	case script.Download:
		a.say(a.p.Actions.DownloadExec, msgScriptDownloaded, detail{what: what})
		return
	case script.Decoded:
		if !script.Dyn {
			a.w.Script(script.S, st.Clone(), depth+1)
		}
		a.say(a.p.Actions.DecodeExec, msgScriptDecoded, detail{what: what})
		return
	case script.Dyn:
		m := msgDynamicShell
		if what == "eval" {
			m = msgDynamicEval
		}
		a.say(a.p.Actions.Dynamic, m, detail{what: what})
		return
	}
	a.w.Script(script.S, st.Clone(), depth+1)
}

// streamScript analyses a script read from a stream (stdin, <(…)).
func (a *analysis) streamScript(what string, in shell.Stream, st *shell.State, depth int) {
	switch {
	case in.Download:
		a.say(a.p.Actions.DownloadExec, msgStreamDownloaded, detail{what: what})
	case in.Static != nil:
		a.w.Script(*in.Static, st.Clone(), depth+1)
		if in.Decoded {
			a.say(a.p.Actions.DecodeExec, msgStreamDecoded, detail{what: what})
		}
	case in.Decoded:
		a.say(a.p.Actions.DecodeExec, msgStreamDecoded, detail{what: what})
	}
}

// scriptFile checks a script file a shell or interpreter runs.
func (a *analysis) scriptFile(prog string, f shell.Field, st *shell.State, depth int) {
	if f.Proc != nil {
		a.streamScript(prog+" <(…)", *f.Proc, st, depth)
		return
	}
	if f.Download || f.Decoded {
		a.nestedScript(prog, f, st, depth)
		return
	}
	p := a.ctx.resolve(f.S, st.Cwd)
	if s, ok := st.Scripts[p.Key()]; ok {
		a.w.Script(s, st.Clone(), depth+1)
		return
	}
	switch {
	case st.Downloads[p.Key()] || strings.HasPrefix(p.Key(), "/dev/tcp/") || strings.HasPrefix(p.Key(), "/dev/udp/"):
		a.say(a.p.Actions.DownloadExec, msgScriptFileDownloaded, detail{prog: prog, path: p.String()})
	case p.Key() == "/dev/stdin" || p.Key() == "/dev/fd/0" || p.Key() == "/proc/self/fd/0":
		a.streamScript(prog, st.Stdin, st, depth)
	default:
		a.p.checkRead(a.v, a.ctx, p, readOpts{what: prog})
	}
}

// shell handles sh, bash, …: -c runs its first operand, otherwise a
// script file or its input.
func (a *analysis) shell(c call) shell.Stream {
	st, depth := c.st, c.depth
	prog := c.base
	args := c.args()
	cmdMode, stdinMode := false, false
	i := 0
loop:
	for ; i < len(args); i++ {
		s := args[i].S
		switch {
		case args[i].Dyn:
			break loop
		case s == "--":
			i++
			break loop
		case s == "-":
			stdinMode = true
			i++
			break loop
		case strings.HasPrefix(s, "--"):
			if s == "--rcfile" || s == "--init-file" {
				i++
			}
		case len(s) > 1 && (s[0] == '-' || s[0] == '+'):
			if s[0] == '-' && strings.ContainsRune(s[1:], 'c') {
				cmdMode = true
			}
			if strings.ContainsRune(s[1:], 's') {
				stdinMode = true
			}
			if strings.ContainsAny(s[1:], "oO") {
				i++
			}
		default:
			break loop
		}
	}
	var operands []shell.Field
	if i < len(args) {
		operands = args[i:]
	}
	switch {
	case cmdMode:
		if len(operands) == 0 {
			return shell.Stream{}
		}
		sub := st.Clone()
		sub.Args, sub.ArgsKnown = append([]shell.Field(nil), operands[min(2, len(operands)):]...), true // $0 is operands[1]
		a.nestedScript(prog+" -c", operands[0], sub, depth)
	case len(operands) > 0 && !stdinMode:
		a.scriptFile(prog, operands[0], st, depth)
	default:
		a.streamScript(prog, st.Stdin, st, depth)
	}
	return shell.Stream{}
}

// powershell: -Command is parsed with the Bash parser (PowerShell syntax
// often does not parse, which makes the command unanalysable);
// -EncodedCommand is obfuscation.
func (a *analysis) powershell(c call) shell.Stream {
	argv, st, depth := c.argv, c.st, c.depth
	args := c.args()
	valued := []string{"-executionpolicy", "-workingdirectory", "-configurationname", "-outputformat", "-inputformat", "-windowstyle",
		"-version", "-psconsolefile", "-custompipename", "-settingsfile", "-ex", "-ep", "-wd", "-w", "-of", "-if"}
	for i := 0; i < len(args); i++ {
		s := strings.ToLower(args[i].S)
		switch {
		case len(s) > 1 && (s[0] == '-' || s[0] == '/') && strings.HasPrefix("-encodedcommand", "-"+s[1:]) && len(s) >= 2 && s[1] == 'e' &&
			s != "-ex" && s != "-ep":
			if i+1 < len(args) {
				if script, ok := decodePowerShell(args[i+1].S); ok {
					a.w.Script(script, st.Clone(), depth+1)
				}
			}
			a.say(a.p.Actions.DecodeExec, msgEncodedCommand, detail{cmd: cmdText(argv)})
			return shell.Stream{}
		case len(s) > 1 && (s[0] == '-' || s[0] == '/') && strings.HasPrefix("-command", "-"+s[1:]):
			if i+1 < len(args) {
				script := shell.JoinFields(args[i+1:])
				if args[i+1].S == "-" {
					a.streamScript(args[0].S, st.Stdin, st, depth)
					return shell.Stream{}
				}
				a.nestedScript(shell.BaseName(argv[0].S)+" -Command", script, st, depth)
			}
			return shell.Stream{}
		case len(s) > 1 && (s[0] == '-' || s[0] == '/') && strings.HasPrefix("-file", "-"+s[1:]) && len(s) >= 2 && s[1] == 'f':
			if i+1 < len(args) {
				a.scriptFile(shell.BaseName(argv[0].S), args[i+1], st, depth)
			}
			return shell.Stream{}
		case slices.Contains(valued, s):
			i++
		case strings.HasPrefix(s, "-"):
		default:
			a.scriptFile(shell.BaseName(argv[0].S), args[i], st, depth)
			return shell.Stream{}
		}
	}
	a.streamScript(shell.BaseName(argv[0].S), st.Stdin, st, depth)
	return shell.Stream{}
}

// decodePowerShell decodes -EncodedCommand (base64 of UTF-16LE).
func decodePowerShell(s string) (string, bool) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b)%2 != 0 {
		return "", false
	}
	r := make([]rune, 0, len(b)/2)
	for i := 0; i < len(b); i += 2 {
		r = append(r, rune(uint16(b[i])|uint16(b[i+1])<<8))
	}
	return shell.Sanitize(string(r)), true
}

// interpreter handles python, perl, node, …: inline code, and static code
// reaching it on its input (a heredoc, echo … | python3) or in a file
// written earlier in the command, is read like inline code (inline.go); a
// script read from a download is download-and-run.
func (a *analysis) interpreter(c call) shell.Stream {
	argv, st := c.argv, c.st
	prog, lang, tool := c.base, c.prog.Lang, c.prog.Tool
	if c.prog.Has(shell.InPlace) {
		a.perlInPlace(argv, st)
	}
	args := c.args()
	for i := 0; i < len(args); i++ {
		f := args[i]
		s := f.S
		switch {
		case f.Dyn && !f.Download && !f.Decoded:
			return shell.Stream{}
		case slices.Contains(lang.Code, s):
			if i+1 < len(args) {
				a.inlineCode(c, args[i+1])
			}
			return shell.Stream{}
		case lang.Attached && len(s) > 2 && slices.Contains(lang.Code, s[:2]):
			code := f
			code.S = s[2:] // -c'code' attached
			a.inlineCode(c, code)
			return shell.Stream{}
		case tool != "" && (s == tool || strings.HasPrefix(s, tool) && len(s) > len(tool) && !strings.HasPrefix(s, "--")):
			return shell.Stream{} // a module (python -m)
		case s == "-":
			a.codeStream(c, prog, st.Stdin)
			return shell.Stream{}
		case strings.HasPrefix(s, "--"):
			if _, _, ok := strings.Cut(s, "="); !ok && slices.Contains(c.prog.Spec.Long, s[2:]) {
				i++
			}
		case strings.HasPrefix(s, "-") && len(s) > 1:
			if len(s) == 2 && strings.IndexByte(c.prog.Spec.Short, s[1]) >= 0 {
				i++
			}
		default:
			a.codeFile(c, f)
			return shell.Stream{}
		}
	}
	a.codeStream(c, prog, st.Stdin)
	return shell.Stream{}
}

// codeStream checks the code an interpreter reads from a stream (its
// input, <(…)): static code like inline code; code from a download or a
// decoder is download- or decode-and-run.
func (a *analysis) codeStream(c call, what string, in shell.Stream) {
	switch {
	case in.Download:
		a.say(a.p.Actions.DownloadExec, msgStreamDownloaded, detail{what: what})
	case in.Static != nil:
		a.inlineCode(c, shell.Field{S: *in.Static})
		if in.Decoded {
			a.say(a.p.Actions.DecodeExec, msgStreamDecoded, detail{what: what})
		}
	case in.Decoded:
		a.say(a.p.Actions.DecodeExec, msgStreamDecoded, detail{what: what})
	}
}

// codeFile checks the script file an interpreter runs: one written with
// static content earlier in the command is read like inline code, one
// read from its input or a process substitution like the stream's code.
func (a *analysis) codeFile(c call, f shell.Field) {
	st := c.st
	if f.Proc != nil {
		a.codeStream(c, c.base+" <(…)", *f.Proc)
		return
	}
	if !f.Download && !f.Decoded {
		p := a.ctx.resolve(f.S, st.Cwd)
		if src, ok := st.Scripts[p.Key()]; ok {
			a.p.checkRead(a.v, a.ctx, p, readOpts{what: c.base})
			a.inlineCode(c, shell.Field{S: src})
			return
		}
		if k := p.Key(); k == "/dev/stdin" || k == "/dev/fd/0" || k == "/proc/self/fd/0" {
			a.codeStream(c, c.base, st.Stdin)
			return
		}
	}
	a.scriptFile(c.base, f, st, c.depth)
}

// perlInPlace checks the files perl -i edits.
func (a *analysis) perlInPlace(argv []shell.Field, st *shell.State) {
	inPlace, afterCode := false, false
	var files []shell.Field
	for i := 1; i < len(argv); i++ {
		s := argv[i].S
		switch {
		case s == "-e" || s == "-E":
			i++
			afterCode = true
		case strings.HasPrefix(s, "-") && len(s) > 1 && !strings.HasPrefix(s, "--"):
			if strings.ContainsRune(s, 'i') {
				inPlace = true
			}
			if strings.ContainsAny(s[1:], "eE") {
				i++
				afterCode = true
			}
		default:
			if afterCode {
				files = append(files, argv[i])
			} else {
				afterCode = true // the script file
			}
		}
	}
	if inPlace {
		for _, f := range files {
			a.writeTarget("perl -i", f, st, false)
		}
	}
}

// eval runs its arguments, joined, as a script.
func (a *analysis) eval(c call) shell.Stream {
	if len(c.argv) >= 2 {
		a.nestedScript("eval", shell.JoinFields(c.args()), c.st, c.depth)
	}
	return shell.Stream{}
}

// source runs a script file in this shell.
func (a *analysis) source(c call) shell.Stream {
	if len(c.argv) >= 2 {
		a.scriptFile(c.argv[0].S, c.argv[1], c.st, c.depth)
	}
	return shell.Stream{}
}

// ssh runs its command on another host: a script in a shell that knows
// nothing of this one but its input.
func (a *analysis) ssh(c call) shell.Stream {
	if o := c.opts(); len(o.Rest) > 1 {
		remote := shell.NewState("")
		remote.Stdin = c.st.Stdin
		a.nestedScript("ssh", shell.JoinFields(o.Rest[1:]), remote, c.depth)
	}
	return shell.Stream{}
}

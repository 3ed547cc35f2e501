package pretool

import (
	"strings"

	"github.com/claimcheck/claimcheck/pkg/shell"
)

// call is the simple command a handler classifies.
type call struct {
	prog  *shell.Program // what the catalogue knows of its program
	base  string         // the program's base name
	argv  []shell.Field  // argv[0] names the program
	st    *shell.State
	depth int
}

// args are the command's arguments.
func (c call) args() []shell.Field { return c.argv[1:] }

// opts parses the arguments by the catalogue's spec of the program.
func (c call) opts() shell.Opts { return shell.ParseArgs(c.argv[1:], c.prog.Spec) }

// A handler classifies a command by its program's model and returns what
// the command outputs.
type handler func(a *analysis, c call) shell.Stream

// handlers hold the model of each kind of program in the catalogue
// (shell.Lookup); wrappers are followed by Run.
var handlers map[shell.Kind]handler

func init() {
	handlers = map[shell.Kind]handler{
		shell.Reader:       (*analysis).reader,
		shell.NoFiles:      func(_ *analysis, c call) shell.Stream { return c.st.Stdin.Taint() },
		shell.Fetcher:      (*analysis).fetcher,
		shell.CommandShell: (*analysis).shell,
		shell.PowerShell:   (*analysis).powershell,
		shell.Interpreter:  (*analysis).interpreter,
		shell.Formatter:    (*analysis).formatter,
		shell.Wiper:        (*analysis).wiper,
		shell.Remover:      (*analysis).remove,
		shell.Shredder:     (*analysis).shred,
		shell.DiskDump:     (*analysis).dd,
		shell.Mover:        (*analysis).move,
		shell.Copier:       (*analysis).copy,
		shell.Tee:          (*analysis).tee,
		shell.Toucher:      (*analysis).touch,
		shell.Editor:       (*analysis).sed,
		shell.Permits:      (*analysis).chmod,
		shell.Finder:       (*analysis).find,
		shell.Extractor:    (*analysis).extract,
		shell.Curl:         (*analysis).curl,
		shell.Wget:         (*analysis).wget,
		shell.Remote:       (*analysis).ssh,
		shell.Decoder:      (*analysis).base64,
		shell.HexDump:      (*analysis).xxd,
		shell.OpenSSL:      (*analysis).openssl,
		shell.Reverser:     (*analysis).rev,
		shell.Cat:          (*analysis).cat,
		shell.Echo:         func(_ *analysis, c call) shell.Stream { return echo(c.args()) },
		shell.Printf:       (*analysis).printf,
		shell.Pwd:          (*analysis).pwd,
		shell.Cd:           (*analysis).cd,
		shell.Eval:         (*analysis).eval,
		shell.Source:       (*analysis).source,
		shell.Alias:        (*analysis).alias,
		shell.Unalias:      (*analysis).unalias,
		shell.Unset:        (*analysis).unset,
		shell.ReadVars:     (*analysis).read,
		shell.SetArgs:      (*analysis).set,
		shell.Shift:        (*analysis).shift,
		shell.Trap:         (*analysis).trap,
	}
}

// Run classifies one simple command, following wrappers (sudo, env,
// timeout, xargs, …) to the program they run. It returns what the
// command outputs.
func (a *analysis) Run(argv []shell.Field, st *shell.State, depth int) shell.Stream {
	for len(argv) > 0 {
		a.w.Step()
		if a.w.Stop() {
			return shell.Stream{}
		}
		name := argv[0]
		switch {
		case name.Download:
			a.say(a.p.Actions.DownloadExec, msgDownloadedProgram, detail{cmd: cmdText(argv)})
			return shell.Stream{}
		case name.Decoded:
			a.say(a.p.Actions.DecodeExec, msgDecodedProgram, detail{cmd: cmdText(argv)})
			return shell.Stream{}
		case name.Dyn && (st.Stdin.Download || st.Stdin.Decoded):
			a.streamScript(cmdText(argv[:1]), st.Stdin, st, depth)
			a.say(a.p.Actions.Dynamic, msgDynamicCommand, detail{cmd: cmdText(argv)})
			return shell.Stream{}
		case name.Dyn:
			a.say(a.p.Actions.Dynamic, msgDynamicCommand, detail{cmd: cmdText(argv)})
			return st.Stdin.Taint()
		}
		prog := name.S
		base := shell.BaseName(prog)
		if prog == "" {
			return shell.Stream{}
		}
		if a.p.c.hook[base] || a.ctx.isHook(a.ctx.resolve(prog, st.Cwd), false) {
			a.say(a.p.Actions.Claimcheck, msgHookExec, detail{cmd: cmdText(argv)})
			return shell.Stream{}
		}
		if prefix, ok := a.denied(argv); ok {
			a.say(a.p.Actions.Claimcheck, msgDeniedCommand, detail{cmd: cmdText(argv), prefix: strings.Join(prefix, " ")})
			return shell.Stream{}
		}
		if v, ok := st.Aliases[prog]; ok {
			a.say(a.p.Actions.Dynamic, msgDynamicAlias, detail{cmd: cmdText(argv), name: prog})
			if v != shell.UnknownMaybeEmpty {
				a.w.Script(v+" "+shell.JoinQuoted(argv[1:]), st.Clone(), depth+1)
			}
			return shell.Stream{}
		}
		if out, ok := st.Funcs[prog]; ok {
			return out // its body was analysed where it was defined
		}
		if strings.Contains(prog, "/") {
			if p := a.ctx.resolve(prog, st.Cwd); st.Downloads[p.Key()] {
				a.say(a.p.Actions.DownloadExec, msgRunDownloaded, detail{cmd: cmdText(argv), path: p.String()})
				return shell.Stream{}
			} else if s, ok := st.Scripts[p.Key()]; ok {
				a.w.Script(s, st.Clone(), depth+1)
				return shell.Stream{}
			}
		}
		if base == "git" {
			a.git(argv)
		}
		p, _ := shell.Lookup(base)
		c := call{prog: p, base: base, argv: argv, st: st, depth: depth}
		if p.Kind != shell.Wrapper {
			return handlers[p.Kind](a, c)
		}
		next, out, done := a.wrapper(c)
		if done {
			return out
		}
		argv = next
	}
	return shell.Stream{}
}

// denied returns the policy's denied-command prefix argv starts with. The
// program compares by base name; options between the program and a
// subcommand are skipped along with a value that may follow them.
func (a *analysis) denied(argv []shell.Field) ([]string, bool) {
	for _, prefix := range a.p.Shell.DeniedCommands {
		if len(prefix) == 0 || shell.BaseName(argv[0].S) != prefix[0] {
			continue
		}
		k, maybeValue := 1, false
		for _, f := range argv[1:] {
			if k == len(prefix) {
				break
			}
			if strings.HasPrefix(f.S, "-") {
				maybeValue = !strings.Contains(f.S, "=")
				continue
			}
			if f.S == prefix[k] {
				k++
				maybeValue = false
				continue
			}
			if maybeValue {
				maybeValue = false
				continue
			}
			break
		}
		if k == len(prefix) {
			return prefix, true
		}
	}
	return nil, false
}

// wrapper follows a program that runs another command (shell.Unwrap):
// the command it runs is next (done false); a script it runs, files it
// edits and xargs's runs are analysed here.
func (a *analysis) wrapper(c call) (next []shell.Field, out shell.Stream, done bool) {
	w := c.prog.Unwrap(c.argv)
	for _, t := range w.Edits {
		a.writeTarget("sudoedit", t, c.st, false)
	}
	switch {
	case w.Script != nil:
		a.nestedScript(w.Via, *w.Script, c.st, c.depth)
	case w.Items:
		return nil, a.xargs(w, c.st, c.depth), true
	case w.Chdir != nil:
		sub := c.st.Clone()
		sub.Cwd = a.cwdOf(*w.Chdir, c.st)
		return nil, a.Run(w.Command, sub, c.depth), true
	}
	return w.Command, shell.Stream{}, len(w.Command) == 0
}

// reader treats a program the catalogue has no model for as reading the
// files its operands name.
func (a *analysis) reader(c call) shell.Stream {
	a.genericReads(c)
	return c.st.Stdin.Taint()
}

// fetcher checks the URLs a fetching program is given and the files it
// uploads.
func (a *analysis) fetcher(c call) shell.Stream {
	a.genericReads(c)
	for _, f := range c.args() {
		a.p.checkShellURL(a.v, c.base, f.S)
	}
	return shell.Stream{Download: true}
}

// formatter refuses creating a file system.
func (a *analysis) formatter(c call) shell.Stream {
	a.say(a.p.Actions.Destructive, msgMkfs, detail{cmd: cmdText(c.argv)})
	return shell.Stream{}
}

// wiper refuses wipefs -a and -o; without them it only reads.
func (a *analysis) wiper(c call) shell.Stream {
	if c.opts().Has("-a", "--all", "-o", "--offset") {
		return a.formatter(c)
	}
	return a.reader(c)
}

func ptr(s string) *string { return &s }

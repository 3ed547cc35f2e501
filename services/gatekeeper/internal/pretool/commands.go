package pretool

import (
	"encoding/base64"
	"encoding/hex"
	"regexp"
	"slices"
	"strings"

	"github.com/claimcheck/claimcheck/pkg/shell"
)

// Programs by role.
var (
	shells = set("sh", "bash", "dash", "zsh", "ksh", "ksh93", "mksh", "ash", "yash", "posh", "rbash", "rzsh", "fish", "csh", "tcsh")
	pwsh   = set("pwsh", "powershell", "pwsh.exe", "powershell.exe")
	// Interpreters and the options that take inline code.
	interpreters = map[string]interp{
		"perl": {code: []string{"-e", "-E"}, args: "IMmx"}, "ruby": {code: []string{"-e"}, args: "IrC"},
		"node":   {code: []string{"-e", "--eval", "-p", "--print"}, args: "r", long: []string{"require", "import", "loader", "input-type"}},
		"nodejs": {code: []string{"-e", "--eval", "-p", "--print"}, args: "r"},
		"php":    {code: []string{"-r"}, args: "cdf"}, "lua": {code: []string{"-e"}, args: "l"}, "luajit": {code: []string{"-e"}, args: "l"},
		"osascript": {code: []string{"-e"}}, "Rscript": {code: []string{"-e"}},
	}
	pythonRe = regexp.MustCompile(`^(python[0-9.]*|pypy[0-9.]*)$`)
	// Programs whose operands are names, not contents: only claimcheck's
	// private paths matter.
	namesOnly = set("ls", "dir", "vdir", "stat", "file", "basename", "dirname", "realpath", "readlink", "du", "tree",
		"exa", "eza", "lsd", "wc", "cd", "pushd", "lsattr", "namei", "mkdir")
	// Programs whose operands are not paths at all.
	noPaths = set("echo", "printf", "true", "false", ":", "exit", "return", "break", "continue", "wait", "sleep",
		"jobs", "fg", "bg", "disown", "ulimit", "umask", "shopt", "enable", "test", "[", "type", "which", "hash",
		"help", "man", "whereis", "whatis", "info", "apropos", "compgen", "complete", "seq", "date", "expr", "let",
		"yes", "kill", "pkill", "killall", "export", "declare", "local", "readonly", "typeset", "getopts", "history",
		"pgrep", "ps", "id", "whoami", "uname", "hostname", "env", "printenv", "set", "shift", "sort", "uniq")
	downloaders = set("curl", "wget", "http", "https", "xh", "httpie", "nc", "ncat", "netcat", "socat", "aria2c", "fetch")
	mkfsLike    = set("mke2fs", "mkswap", "mkdosfs", "mkntfs", "mkexfatfs", "newfs", "newfs_msdos", "newfs_apfs", "newfs_hfs", "blkdiscard")
	// Programs whose first operand is a pattern or script, not a file.
	patternFirst = set("grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack", "awk", "gawk", "mawk", "nawk", "jq", "yq")
)

type interp struct {
	code []string // options whose value is inline code
	args string   // short options that take a value
	long []string
}

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// run classifies one simple command, following wrappers (sudo, env,
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
		if a.p.c.hook[base] || a.ctx.hookPath != "" && a.ctx.resolve(prog, st.Cwd).Key() == a.ctx.hookPath {
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
		next, out, done := a.program(base, argv, st, depth)
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

// program classifies argv by its program. For a wrapper it returns the
// wrapped command (done false); otherwise what the command outputs.
func (a *analysis) program(base string, argv []shell.Field, st *shell.State, depth int) (next []shell.Field, out shell.Stream, done bool) {
	args := argv[1:]
	switch {
	case shells[base]:
		return nil, a.shell(argv, st, depth), true
	case pwsh[base]:
		return nil, a.powershell(argv, st, depth), true
	case pythonRe.MatchString(base):
		return nil, a.interpreter(argv, interp{code: []string{"-c"}, args: "WXQ"}, st, depth), true
	case interpreters[base].code != nil:
		if base == "perl" {
			a.perlInPlace(argv, st)
		}
		return nil, a.interpreter(argv, interpreters[base], st, depth), true
	case strings.HasPrefix(base, "mkfs") || mkfsLike[base] || base == "wipefs" && shell.ParseArgs(args, shell.Spec{Short: "ot"}).Has("-a", "--all", "-o", "--offset"):
		a.say(a.p.Actions.Destructive, msgMkfs, detail{cmd: cmdText(argv)})
		return nil, shell.Stream{}, true
	}
	switch base {
	case "sudo", "doas", "env", "command", "builtin", "exec", "nice", "nohup", "setsid", "time", "timeout", "stdbuf",
		"ionice", "chrt", "taskset", "unbuffer", "caffeinate", "busybox", "toybox", "chroot", "flock", "watch", "su",
		"runuser", "sg", "script", "xargs", "sudoedit":
		return a.wrapper(base, argv, st, depth)
	case "eval":
		a.eval(argv, st, depth)
		return nil, shell.Stream{}, true
	case "source", ".":
		return nil, a.source(argv, st, depth), true
	case "alias":
		for _, f := range args {
			if n, v, ok := strings.Cut(f.S, "="); ok && !strings.HasPrefix(f.S, "-") {
				if f.Dyn {
					v = shell.UnknownMaybeEmpty
				}
				st.Aliases[n] = v
			}
		}
		return nil, shell.Silent(), true
	case "unalias":
		for _, f := range args {
			if f.S == "-a" {
				clear(st.Aliases)
			}
			delete(st.Aliases, f.S)
		}
		return nil, shell.Silent(), true
	case "cd", "pushd", "popd":
		a.cd(base, args, st)
		return nil, shell.Silent(), true
	case "unset":
		o := shell.ParseArgs(args, shell.Spec{})
		for _, f := range o.Operands {
			if o.Has("-f") {
				delete(st.Funcs, f.S)
			} else if shell.IsVarName(f.S) {
				st.Vars[f.S] = shell.Field{}
			}
		}
		return nil, shell.Silent(), true
	case "read", "mapfile", "readarray":
		o := shell.ParseArgs(args, shell.Spec{Short: "pdnNtuaCcOs"})
		for _, f := range append(o.Operands, o.Values("-a")...) {
			delete(st.Vars, f.S)
		}
		if base != "read" && len(o.Operands) == 0 {
			delete(st.Vars, "MAPFILE")
		}
		return nil, shell.Stream{}, true
	case "set":
		if i := slices.IndexFunc(args, func(f shell.Field) bool { return f.S == "--" }); i >= 0 {
			st.Args, st.ArgsKnown = append([]shell.Field(nil), args[i+1:]...), true
		}
		return nil, shell.Silent(), true
	case "shift":
		st.Args, st.ArgsKnown = nil, false
		return nil, shell.Silent(), true
	case "trap":
		o := shell.ParseArgs(args, shell.Spec{StopAtOperand: true})
		if len(o.Operands) > 1 {
			a.nestedScript("trap", o.Operands[0], st, depth)
		}
		return nil, shell.Stream{}, true
	case "echo":
		return nil, echo(args), true
	case "pwd":
		if st.Cwd != "" && st.Cwd != shell.SymbolicHome {
			return nil, shell.StaticStream(st.Cwd + "\n"), true
		}
		return nil, shell.Stream{}, true
	case "printf":
		return nil, a.printf(args, st), true
	case "find":
		return nil, a.find(argv, st, depth), true
	case "rm", "unlink", "rmdir", "srm", "trash", "trash-put", "gio":
		a.remove(base, argv, st)
		return nil, shell.Stream{}, true
	case "shred":
		o := shell.ParseArgs(args, shell.Spec{Short: "ns", Long: []string{"iterations", "size", "random-source"}})
		for _, t := range o.Operands {
			if f := a.ctx.resolve(t.S, st.Cwd); isDevice(f) {
				a.say(a.p.Actions.Destructive, msgShredDevice, detail{cmd: cmdText(argv), path: f.String()})
				return nil, shell.Stream{}, true
			}
			a.writeTarget("shred", t, st, false)
		}
		return nil, shell.Stream{}, true
	case "dd":
		a.dd(argv, st)
		return nil, st.Stdin.Taint(), true
	case "mv":
		a.move(argv, st)
		return nil, shell.Stream{}, true
	case "cp", "install", "ln", "rsync", "scp":
		a.copy(base, argv, st)
		return nil, shell.Stream{}, true
	case "tee":
		o := shell.ParseArgs(args, shell.Spec{})
		for _, t := range o.Operands {
			a.writeTarget("tee", t, st, false)
			a.w.Wrote(st, a.ctx.resolve(t.S, st.Cwd).Key(), st.Stdin)
		}
		return nil, st.Stdin, true
	case "truncate", "touch":
		o := shell.ParseArgs(args, shell.Spec{Short: "srdt", Long: []string{"size", "reference", "date"}})
		for _, r := range o.Values("-r", "--reference") {
			a.readTarget(base, r, st, readOpts{namesOnly: true})
		}
		for _, t := range o.Operands {
			a.writeTarget(base, t, st, false)
		}
		return nil, shell.Stream{}, true
	case "sed":
		a.sed(argv, st)
		return nil, st.Stdin.Taint(), true
	case "chmod", "chown", "chgrp", "chattr", "setfacl":
		a.chmod(base, argv, st)
		return nil, shell.Stream{}, true
	case "curl":
		return nil, a.curl(argv, st), true
	case "tar", "unzip", "bsdtar":
		a.extract(base, argv, st)
		return nil, st.Stdin.Taint(), true
	case "ssh":
		o := shell.ParseArgs(args, shell.Spec{Short: "BbcDEeFIiJLlmOoPpQRSWw", StopAtOperand: true})
		if len(o.Rest) > 1 {
			remote := &shell.State{Vars: map[string]shell.Field{}, ArgsKnown: true, Aliases: map[string]string{}, Funcs: map[string]shell.Stream{}, Downloads: map[string]bool{}, Scripts: map[string]string{}, Stdin: st.Stdin}
			a.nestedScript("ssh", shell.JoinFields(o.Rest[1:]), remote, depth)
		}
		return nil, shell.Stream{}, true
	case "wget":
		return nil, a.wget(argv, st), true
	case "base64", "base32", "basenc":
		return nil, a.base64(argv, st), true
	case "xxd":
		o := shell.ParseArgs(args, shell.Spec{Short: "cglos", Long: []string{"cols", "len", "seek", "offset"}})
		a.readOperands(base, o.Operands, st, readOpts{})
		if o.Has("-r", "--revert") {
			if st.Stdin.Static != nil && o.Has("-p", "-ps", "--plain") {
				if b, err := hex.DecodeString(strings.Join(strings.Fields(*st.Stdin.Static), "")); err == nil {
					return nil, shell.Stream{Static: ptr(shell.Sanitize(string(b))), Decoded: true, Download: st.Stdin.Download}, true
				}
			}
			return nil, shell.Stream{Decoded: true, Download: st.Stdin.Download}, true
		}
		return nil, st.Stdin.Taint(), true
	case "openssl":
		a.genericReads(base, argv, st)
		if len(args) > 0 && (args[0].S == "base64" || args[0].S == "enc") && slices.ContainsFunc(args, func(f shell.Field) bool { return f.S == "-d" || f.S == "-a" && args[0].S == "enc" }) {
			return nil, shell.Stream{Decoded: true, Download: st.Stdin.Download}, true
		}
		return nil, st.Stdin.Taint(), true
	case "rev":
		if len(args) == 0 && st.Stdin.Static != nil {
			lines := strings.Split(*st.Stdin.Static, "\n")
			for i, l := range lines {
				r := []rune(l)
				slices.Reverse(r)
				lines[i] = string(r)
			}
			return nil, shell.Stream{Static: ptr(strings.Join(lines, "\n")), Decoded: true, Download: st.Stdin.Download}, true
		}
		a.genericReads(base, argv, st)
		return nil, shell.Stream{Decoded: true, Download: st.Stdin.Download}, true
	case "cat":
		o := shell.ParseArgs(args, shell.Spec{})
		if len(o.Operands) == 0 {
			return nil, st.Stdin, true
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
		a.readOperands(base, o.Operands, st, readOpts{})
		return nil, out.Taint(), true
	}
	if downloaders[base] {
		a.genericReads(base, argv, st)
		for _, f := range args {
			a.p.checkShellURL(a.v, base, f.S)
		}
		return nil, shell.Stream{Download: true}, true
	}
	if noPaths[base] {
		return nil, st.Stdin.Taint(), true
	}
	a.genericReads(base, argv, st)
	return nil, st.Stdin.Taint(), true
}

func ptr(s string) *string { return &s }

// wrapper handles programs that run another command.
func (a *analysis) wrapper(base string, argv []shell.Field, st *shell.State, depth int) ([]shell.Field, shell.Stream, bool) {
	args := argv[1:]
	var o shell.Opts
	switch base {
	case "sudo":
		o = shell.ParseArgs(args, shell.Spec{Short: "CDghpRrtTUu", Long: []string{"user", "group", "host", "prompt", "role", "type", "close-from", "chdir", "chroot", "other-user", "command-timeout"}, StopAtOperand: true})
		if o.Has("-e", "--edit") {
			for _, t := range o.Operands {
				a.writeTarget("sudoedit", t, st, false)
			}
			return nil, shell.Stream{}, true
		}
		return shell.SkipAssignments(o.Rest), shell.Stream{}, false
	case "sudoedit":
		for _, t := range shell.ParseArgs(args, shell.Spec{Short: "CDghpRrtTUu"}).Operands {
			a.writeTarget("sudoedit", t, st, false)
		}
		return nil, shell.Stream{}, true
	case "doas":
		o = shell.ParseArgs(args, shell.Spec{Short: "uC", StopAtOperand: true})
	case "env":
		o = shell.ParseArgs(args, shell.Spec{Short: "uCPS", Long: []string{"unset", "chdir", "split-string", "block-signal", "default-signal", "ignore-signal"}, StopAtOperand: true})
		rest := shell.SkipAssignments(o.Rest)
		if s, ok := o.Value("-S", "--split-string"); ok {
			a.nestedScript("env -S", shell.Field{S: s.S + " " + shell.JoinQuoted(rest), Dyn: s.Dyn, Download: s.Download, Decoded: s.Decoded}, st, depth)
			return nil, shell.Stream{}, true
		}
		if len(rest) == 0 {
			return nil, shell.Stream{}, true
		}
		if dir, ok := o.Value("-C", "--chdir"); ok {
			sub := st.Clone()
			sub.Cwd = a.cwdOf(dir, st)
			return nil, a.Run(rest, sub, depth), true
		}
		return rest, shell.Stream{}, false
	case "command":
		o = shell.ParseArgs(args, shell.Spec{StopAtOperand: true})
		if o.Has("-v", "-V") {
			return nil, shell.Stream{}, true
		}
	case "builtin", "nohup", "unbuffer", "busybox", "toybox":
		o = shell.ParseArgs(args, shell.Spec{StopAtOperand: true})
	case "exec":
		o = shell.ParseArgs(args, shell.Spec{Short: "a", StopAtOperand: true})
	case "nice":
		o = shell.ParseArgs(args, shell.Spec{Short: "n", Long: []string{"adjustment"}, StopAtOperand: true, Numeric: true})
	case "setsid":
		o = shell.ParseArgs(args, shell.Spec{StopAtOperand: true})
	case "time":
		o = shell.ParseArgs(args, shell.Spec{Short: "fo", Long: []string{"format", "output"}, StopAtOperand: true})
	case "timeout":
		o = shell.ParseArgs(args, shell.Spec{Short: "sk", Long: []string{"signal", "kill-after"}, StopAtOperand: true})
		if len(o.Rest) > 0 {
			return o.Rest[1:], shell.Stream{}, false // the duration
		}
		return nil, shell.Stream{}, true
	case "stdbuf":
		o = shell.ParseArgs(args, shell.Spec{Short: "ioe", Long: []string{"input", "output", "error"}, StopAtOperand: true})
	case "ionice":
		o = shell.ParseArgs(args, shell.Spec{Short: "cnpPu", Long: []string{"class", "classdata", "pid", "pgid", "uid"}, StopAtOperand: true})
		if o.Has("-p", "-P", "-u", "--pid", "--pgid", "--uid") {
			return nil, shell.Stream{}, true
		}
	case "chrt", "taskset":
		o = shell.ParseArgs(args, shell.Spec{Short: "TPDc", StopAtOperand: true})
		if o.Has("-p", "--pid") || len(o.Rest) == 0 {
			return nil, shell.Stream{}, true
		}
		return o.Rest[1:], shell.Stream{}, false // the priority or CPU mask
	case "caffeinate":
		o = shell.ParseArgs(args, shell.Spec{Short: "tw", StopAtOperand: true})
	case "chroot":
		o = shell.ParseArgs(args, shell.Spec{Long: []string{"userspec", "groups"}, StopAtOperand: true})
		if len(o.Rest) == 0 {
			return nil, shell.Stream{}, true
		}
		return o.Rest[1:], shell.Stream{}, false // the new root
	case "flock":
		o = shell.ParseArgs(args, shell.Spec{Short: "wEc", Long: []string{"wait", "timeout", "conflict-exit-code", "command"}, StopAtOperand: true})
		if c, ok := o.Value("-c", "--command"); ok {
			a.nestedScript("flock -c", c, st, depth)
			return nil, shell.Stream{}, true
		}
		if len(o.Rest) < 2 {
			return nil, shell.Stream{}, true
		}
		rest := o.Rest[1:] // the lock file
		if rest[0].S == "-c" || rest[0].S == "--command" {
			if len(rest) > 1 {
				a.nestedScript("flock -c", rest[1], st, depth)
			}
			return nil, shell.Stream{}, true
		}
		return rest, shell.Stream{}, false
	case "watch":
		o = shell.ParseArgs(args, shell.Spec{Short: "nq", Long: []string{"interval", "equexit"}, StopAtOperand: true})
		if o.Has("-x", "--exec") {
			return o.Rest, shell.Stream{}, false
		}
		if len(o.Rest) > 0 {
			a.nestedScript("watch", shell.JoinFields(o.Rest), st, depth)
		}
		return nil, shell.Stream{}, true
	case "su", "runuser":
		o = shell.ParseArgs(args, shell.Spec{Short: "cgGsw", Long: []string{"command", "session-command", "shell", "group", "supp-group", "whitelist-environment"}})
		if c, ok := o.Value("-c", "--command", "--session-command"); ok {
			a.nestedScript(base+" -c", c, st, depth)
		} else if base == "runuser" && len(o.Operands) > 1 {
			return o.Operands[1:], shell.Stream{}, false
		}
		return nil, shell.Stream{}, true
	case "sg":
		o = shell.ParseArgs(args, shell.Spec{Short: "c"})
		if c, ok := o.Value("-c"); ok {
			a.nestedScript("sg -c", c, st, depth)
		} else if len(o.Operands) > 1 {
			a.nestedScript("sg", shell.JoinFields(o.Operands[1:]), st, depth)
		}
		return nil, shell.Stream{}, true
	case "script":
		o = shell.ParseArgs(args, shell.Spec{Short: "cEIOBTtm", Long: []string{"command", "echo", "log-in", "log-out", "log-io", "log-timing", "logging-format"}})
		if c, ok := o.Value("-c", "--command"); ok {
			a.nestedScript("script -c", c, st, depth)
		}
		return nil, shell.Stream{}, true
	case "xargs":
		return nil, a.xargs(argv, st, depth), true
	}
	return o.Rest, shell.Stream{}, false
}

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

func (a *analysis) shell(argv []shell.Field, st *shell.State, depth int) shell.Stream {
	prog := shell.BaseName(argv[0].S)
	args := argv[1:]
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
func (a *analysis) powershell(argv []shell.Field, st *shell.State, depth int) shell.Stream {
	args := argv[1:]
	valued := []string{"-executionpolicy", "-workingdirectory", "-configurationname", "-outputformat", "-inputformat", "-windowstyle", "-version", "-psconsolefile", "-custompipename", "-settingsfile", "-ex", "-ep", "-wd", "-w", "-of", "-if"}
	for i := 0; i < len(args); i++ {
		s := strings.ToLower(args[i].S)
		switch {
		case len(s) > 1 && (s[0] == '-' || s[0] == '/') && strings.HasPrefix("-encodedcommand", "-"+s[1:]) && len(s) >= 2 && s[1] == 'e' && s != "-ex" && s != "-ep":
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

// interpreter handles python, perl, node, …: inline code cannot be
// analysed, but where it comes from can; a script read from stdin or a
// downloaded file is download-and-run.
func (a *analysis) interpreter(argv []shell.Field, spec interp, st *shell.State, depth int) shell.Stream {
	prog := shell.BaseName(argv[0].S)
	args := argv[1:]
	for i := 0; i < len(args); i++ {
		f := args[i]
		s := f.S
		switch {
		case f.Dyn && !f.Download && !f.Decoded:
			return shell.Stream{}
		case slices.Contains(spec.code, s):
			if i+1 < len(args) {
				a.inlineCode(argv, prog, args[i+1], st, depth)
			}
			return shell.Stream{}
		case prog != "node" && len(s) > 2 && slices.Contains(spec.code, s[:2]):
			code := f
			code.S = s[2:] // -c'code' attached
			a.inlineCode(argv, prog, code, st, depth)
			return shell.Stream{}
		case strings.HasPrefix(prog, "python") && (s == "-m" || strings.HasPrefix(s, "-m") && len(s) > 2 && !strings.HasPrefix(s, "--")):
			return shell.Stream{} // a module
		case s == "-":
			a.streamScript(prog, st.Stdin, st, depth)
			return shell.Stream{}
		case strings.HasPrefix(s, "--"):
			if _, _, ok := strings.Cut(s, "="); !ok && slices.Contains(spec.long, s[2:]) {
				i++
			}
		case strings.HasPrefix(s, "-") && len(s) > 1:
			if len(s) == 2 && strings.IndexByte(spec.args, s[1]) >= 0 {
				i++
			}
		default:
			a.scriptFile(prog, f, st, depth)
			return shell.Stream{}
		}
	}
	a.streamScript(prog, st.Stdin, st, depth)
	return shell.Stream{}
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

func (a *analysis) eval(argv []shell.Field, st *shell.State, depth int) {
	if len(argv) < 2 {
		return
	}
	a.nestedScript("eval", shell.JoinFields(argv[1:]), st, depth)
}

func (a *analysis) source(argv []shell.Field, st *shell.State, depth int) shell.Stream {
	if len(argv) < 2 {
		return shell.Stream{}
	}
	a.scriptFile(argv[0].S, argv[1], st, depth)
	return shell.Stream{}
}

// cwdOf resolves a directory for cd: "" when unknown.
func (a *analysis) cwdOf(dir shell.Field, st *shell.State) string {
	if dir.Dyn || dir.Glob {
		return ""
	}
	f := a.ctx.resolve(dir.S, st.Cwd)
	if !f.Abs {
		return ""
	}
	return f.Key()
}

func (a *analysis) cd(base string, args []shell.Field, st *shell.State) {
	if base == "popd" {
		st.Cwd = ""
		return
	}
	o := shell.ParseArgs(args, shell.Spec{})
	switch {
	case len(o.Operands) == 0 && base == "cd":
		if a.ctx.homeSet {
			st.Cwd = a.ctx.home
		} else {
			st.Cwd = shell.SymbolicHome
		}
	case len(o.Operands) == 0 || o.Operands[0].S == "-" || strings.HasPrefix(o.Operands[0].S, "+"):
		st.Cwd = ""
	default:
		a.readTarget(base, o.Operands[0], st, readOpts{namesOnly: true})
		st.Cwd = a.cwdOf(o.Operands[0], st)
	}
}

// echo returns what echo prints, when it is static.
func echo(args []shell.Field) shell.Stream {
	newline, escapes := true, false
	for len(args) > 0 && len(args[0].S) > 1 && args[0].S[0] == '-' && strings.Trim(args[0].S[1:], "neE") == "" {
		for _, c := range args[0].S[1:] {
			switch c {
			case 'n':
				newline = false
			case 'e':
				escapes = true
			case 'E':
				escapes = false
			}
		}
		args = args[1:]
	}
	out := shell.Stream{}
	parts := make([]string, 0, len(args))
	for _, f := range args {
		if f.Dyn {
			out.Download = out.Download || f.Download
			out.Decoded = out.Decoded || f.Decoded
			return out
		}
		out.Download = out.Download || f.Download
		out.Decoded = out.Decoded || f.Decoded
		parts = append(parts, f.S)
	}
	s := strings.Join(parts, " ")
	if escapes {
		s = shell.AnsiC(strings.ReplaceAll(s, `\c`, "\x00"))
	}
	if newline {
		s += "\n"
	}
	out.Static = &s
	out.Items = strings.Fields(s)
	return out
}

// printf returns what printf prints, when it is static and the format uses
// only %s, %b, %c, %d and %%.
func (a *analysis) printf(args []shell.Field, st *shell.State) shell.Stream {
	if len(args) > 0 && args[0].S == "-v" {
		if len(args) > 1 {
			delete(st.Vars, args[1].S)
		}
		return shell.Stream{}
	}
	if len(args) > 0 && args[0].S == "--" {
		args = args[1:]
	}
	out := shell.Stream{}
	for _, f := range args {
		out.Download = out.Download || f.Download
		out.Decoded = out.Decoded || f.Decoded
		if f.Dyn {
			return out
		}
	}
	if len(args) == 0 {
		return out
	}
	format, rest := shell.AnsiC(args[0].S), args[1:]
	var b strings.Builder
	for pass := 0; pass == 0 || len(rest) > 0 && pass < 64; pass++ {
		consumed := false
		for i := 0; i < len(format); i++ {
			c := format[i]
			if c != '%' || i+1 >= len(format) {
				b.WriteByte(c)
				continue
			}
			i++
			arg := ""
			switch format[i] {
			case '%':
				b.WriteByte('%')
				continue
			case 's', 'b', 'c', 'd', 'q':
				if len(rest) > 0 {
					arg, rest, consumed = rest[0].S, rest[1:], true
				}
			default:
				return out
			}
			switch format[i] {
			case 'b':
				arg = shell.AnsiC(arg)
			case 'c':
				if arg != "" {
					arg = arg[:1]
				}
			}
			b.WriteString(arg)
		}
		if !consumed {
			break
		}
	}
	s := b.String()
	out.Static = &s
	out.Items = strings.Fields(s)
	return out
}

// base64 decodes static input; otherwise marks the output decoded.
func (a *analysis) base64(argv []shell.Field, st *shell.State) shell.Stream {
	o := shell.ParseArgs(argv[1:], shell.Spec{Short: "w", Long: []string{"wrap"}})
	a.readOperands(shell.BaseName(argv[0].S), o.Operands, st, readOpts{})
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
	if len(o.Operands) == 0 && st.Stdin.Static != nil && shell.BaseName(argv[0].S) == "base64" {
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

package pretool

import (
	"encoding/base64"
	"encoding/hex"
	"regexp"
	"slices"
	"strings"
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
func (a *analysis) run(argv []field, st *state, depth int) stream {
	for len(argv) > 0 {
		a.steps++
		if a.stop() {
			return stream{}
		}
		name := argv[0]
		switch {
		case name.download:
			a.say(a.p.Actions.DownloadExec, msgDownloadedProgram, detail{cmd: cmdText(argv)})
			return stream{}
		case name.decoded:
			a.say(a.p.Actions.DecodeExec, msgDecodedProgram, detail{cmd: cmdText(argv)})
			return stream{}
		case name.dyn && (st.stdin.download || st.stdin.decoded):
			a.streamScript(cmdText(argv[:1]), st.stdin, st, depth)
			a.say(a.p.Actions.Dynamic, msgDynamicCommand, detail{cmd: cmdText(argv)})
			return stream{}
		case name.dyn:
			a.say(a.p.Actions.Dynamic, msgDynamicCommand, detail{cmd: cmdText(argv)})
			return st.stdin.taint()
		}
		prog := name.s
		base := baseName(prog)
		if prog == "" {
			return stream{}
		}
		if a.p.c.hook[base] || a.ctx.hookPath != "" && a.ctx.resolve(prog, st.cwd).key() == a.ctx.hookPath {
			a.say(a.p.Actions.Claimcheck, msgHookExec, detail{cmd: cmdText(argv)})
			return stream{}
		}
		if prefix, ok := a.denied(argv); ok {
			a.say(a.p.Actions.Claimcheck, msgDeniedCommand, detail{cmd: cmdText(argv), prefix: strings.Join(prefix, " ")})
			return stream{}
		}
		if v, ok := st.aliases[prog]; ok {
			a.say(a.p.Actions.Dynamic, msgDynamicAlias, detail{cmd: cmdText(argv), name: prog})
			if v != unknownMaybeEmpty {
				a.script(v+" "+joinQuoted(argv[1:]), st.clone(), depth+1)
			}
			return stream{}
		}
		if out, ok := st.funcs[prog]; ok {
			return out // its body was analysed where it was defined
		}
		if strings.Contains(prog, "/") {
			if p := a.ctx.resolve(prog, st.cwd); st.downloads[p.key()] {
				a.say(a.p.Actions.DownloadExec, msgRunDownloaded, detail{cmd: cmdText(argv), path: p.String()})
				return stream{}
			} else if s, ok := st.scripts[p.key()]; ok {
				a.script(s, st.clone(), depth+1)
				return stream{}
			}
		}
		next, out, done := a.program(base, argv, st, depth)
		if done {
			return out
		}
		argv = next
	}
	return stream{}
}

// denied returns the policy's denied-command prefix argv starts with. The
// program compares by base name; options between the program and a
// subcommand are skipped along with a value that may follow them.
func (a *analysis) denied(argv []field) ([]string, bool) {
	for _, prefix := range a.p.Shell.DeniedCommands {
		if len(prefix) == 0 || baseName(argv[0].s) != prefix[0] {
			continue
		}
		k, maybeValue := 1, false
		for _, f := range argv[1:] {
			if k == len(prefix) {
				break
			}
			if strings.HasPrefix(f.s, "-") {
				maybeValue = !strings.Contains(f.s, "=")
				continue
			}
			if f.s == prefix[k] {
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
func (a *analysis) program(base string, argv []field, st *state, depth int) (next []field, out stream, done bool) {
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
	case strings.HasPrefix(base, "mkfs") || mkfsLike[base] || base == "wipefs" && parse(args, optSpec{short: "ot"}).has("-a", "--all", "-o", "--offset"):
		a.say(a.p.Actions.Destructive, msgMkfs, detail{cmd: cmdText(argv)})
		return nil, stream{}, true
	}
	switch base {
	case "sudo", "doas", "env", "command", "builtin", "exec", "nice", "nohup", "setsid", "time", "timeout", "stdbuf",
		"ionice", "chrt", "taskset", "unbuffer", "caffeinate", "busybox", "toybox", "chroot", "flock", "watch", "su",
		"runuser", "sg", "script", "xargs", "sudoedit":
		return a.wrapper(base, argv, st, depth)
	case "eval":
		a.eval(argv, st, depth)
		return nil, stream{}, true
	case "source", ".":
		return nil, a.source(argv, st, depth), true
	case "alias":
		for _, f := range args {
			if n, v, ok := strings.Cut(f.s, "="); ok && !strings.HasPrefix(f.s, "-") {
				if f.dyn {
					v = unknownMaybeEmpty
				}
				st.aliases[n] = v
			}
		}
		return nil, silent(), true
	case "unalias":
		for _, f := range args {
			if f.s == "-a" {
				clear(st.aliases)
			}
			delete(st.aliases, f.s)
		}
		return nil, silent(), true
	case "cd", "pushd", "popd":
		a.cd(base, args, st)
		return nil, silent(), true
	case "unset":
		o := parse(args, optSpec{})
		for _, f := range o.operands {
			if o.has("-f") {
				delete(st.funcs, f.s)
			} else if validVarName(f.s) {
				st.vars[f.s] = field{}
			}
		}
		return nil, silent(), true
	case "read", "mapfile", "readarray":
		o := parse(args, optSpec{short: "pdnNtuaCcOs"})
		for _, f := range append(o.operands, o.values("-a")...) {
			delete(st.vars, f.s)
		}
		if base != "read" && len(o.operands) == 0 {
			delete(st.vars, "MAPFILE")
		}
		return nil, stream{}, true
	case "set":
		if i := slices.IndexFunc(args, func(f field) bool { return f.s == "--" }); i >= 0 {
			st.args, st.argsKnown = append([]field(nil), args[i+1:]...), true
		}
		return nil, silent(), true
	case "shift":
		st.args, st.argsKnown = nil, false
		return nil, silent(), true
	case "trap":
		o := parse(args, optSpec{stopAtOperand: true})
		if len(o.operands) > 1 {
			a.nestedScript("trap", o.operands[0], st, depth)
		}
		return nil, stream{}, true
	case "echo":
		return nil, echo(args), true
	case "pwd":
		if st.cwd != "" && st.cwd != symbolicHome {
			return nil, staticStream(st.cwd + "\n"), true
		}
		return nil, stream{}, true
	case "printf":
		return nil, a.printf(args, st), true
	case "find":
		return nil, a.find(argv, st, depth), true
	case "rm", "unlink", "rmdir", "srm", "trash", "trash-put", "gio":
		a.remove(base, argv, st)
		return nil, stream{}, true
	case "shred":
		o := parse(args, optSpec{short: "ns", long: []string{"iterations", "size", "random-source"}})
		for _, t := range o.operands {
			if f := a.ctx.resolve(t.s, st.cwd); isDevice(f) {
				a.say(a.p.Actions.Destructive, msgShredDevice, detail{cmd: cmdText(argv), path: f.String()})
				return nil, stream{}, true
			}
			a.writeTarget("shred", t, st, false)
		}
		return nil, stream{}, true
	case "dd":
		a.dd(argv, st)
		return nil, st.stdin.taint(), true
	case "mv":
		a.move(argv, st)
		return nil, stream{}, true
	case "cp", "install", "ln", "rsync", "scp":
		a.copy(base, argv, st)
		return nil, stream{}, true
	case "tee":
		o := parse(args, optSpec{})
		for _, t := range o.operands {
			a.writeTarget("tee", t, st, false)
			a.wrote(st, a.ctx.resolve(t.s, st.cwd).key(), st.stdin)
		}
		return nil, st.stdin, true
	case "truncate", "touch":
		o := parse(args, optSpec{short: "srdt", long: []string{"size", "reference", "date"}})
		for _, r := range o.values("-r", "--reference") {
			a.readTarget(base, r, st, readOpts{namesOnly: true})
		}
		for _, t := range o.operands {
			a.writeTarget(base, t, st, false)
		}
		return nil, stream{}, true
	case "sed":
		a.sed(argv, st)
		return nil, st.stdin.taint(), true
	case "chmod", "chown", "chgrp", "chattr", "setfacl":
		a.chmod(base, argv, st)
		return nil, stream{}, true
	case "curl":
		return nil, a.curl(argv, st), true
	case "tar", "unzip", "bsdtar":
		a.extract(base, argv, st)
		return nil, st.stdin.taint(), true
	case "ssh":
		o := parse(args, optSpec{short: "BbcDEeFIiJLlmOoPpQRSWw", stopAtOperand: true})
		if len(o.rest) > 1 {
			remote := &state{vars: map[string]field{}, argsKnown: true, aliases: map[string]string{}, funcs: map[string]stream{}, downloads: map[string]bool{}, scripts: map[string]string{}, stdin: st.stdin}
			a.nestedScript("ssh", joinFields(o.rest[1:]), remote, depth)
		}
		return nil, stream{}, true
	case "wget":
		return nil, a.wget(argv, st), true
	case "base64", "base32", "basenc":
		return nil, a.base64(argv, st), true
	case "xxd":
		o := parse(args, optSpec{short: "cglos", long: []string{"cols", "len", "seek", "offset"}})
		a.readOperands(base, o.operands, st, readOpts{})
		if o.has("-r", "--revert") {
			if st.stdin.static != nil && o.has("-p", "-ps", "--plain") {
				if b, err := hex.DecodeString(strings.Join(strings.Fields(*st.stdin.static), "")); err == nil {
					return nil, stream{static: ptr(sanitize(string(b))), decoded: true, download: st.stdin.download}, true
				}
			}
			return nil, stream{decoded: true, download: st.stdin.download}, true
		}
		return nil, st.stdin.taint(), true
	case "openssl":
		a.genericReads(base, argv, st)
		if len(args) > 0 && (args[0].s == "base64" || args[0].s == "enc") && slices.ContainsFunc(args, func(f field) bool { return f.s == "-d" || f.s == "-a" && args[0].s == "enc" }) {
			return nil, stream{decoded: true, download: st.stdin.download}, true
		}
		return nil, st.stdin.taint(), true
	case "rev":
		if len(args) == 0 && st.stdin.static != nil {
			lines := strings.Split(*st.stdin.static, "\n")
			for i, l := range lines {
				r := []rune(l)
				slices.Reverse(r)
				lines[i] = string(r)
			}
			return nil, stream{static: ptr(strings.Join(lines, "\n")), decoded: true, download: st.stdin.download}, true
		}
		a.genericReads(base, argv, st)
		return nil, stream{decoded: true, download: st.stdin.download}, true
	case "cat":
		o := parse(args, optSpec{})
		if len(o.operands) == 0 {
			return nil, st.stdin, true
		}
		out := stream{}
		for _, t := range o.operands {
			if t.proc != nil {
				out = out.then(t.proc.taint())
			}
			if st.downloads[a.ctx.resolve(t.s, st.cwd).key()] {
				out.download = true
			}
		}
		a.readOperands(base, o.operands, st, readOpts{})
		return nil, out.taint(), true
	}
	if downloaders[base] {
		a.genericReads(base, argv, st)
		for _, f := range args {
			a.p.checkShellURL(a.v, base, f.s)
		}
		return nil, stream{download: true}, true
	}
	if noPaths[base] {
		return nil, st.stdin.taint(), true
	}
	a.genericReads(base, argv, st)
	return nil, st.stdin.taint(), true
}

func ptr(s string) *string { return &s }

// wrapper handles programs that run another command.
func (a *analysis) wrapper(base string, argv []field, st *state, depth int) ([]field, stream, bool) {
	args := argv[1:]
	var o opts
	switch base {
	case "sudo":
		o = parse(args, optSpec{short: "CDghpRrtTUu", long: []string{"user", "group", "host", "prompt", "role", "type", "close-from", "chdir", "chroot", "other-user", "command-timeout"}, stopAtOperand: true})
		if o.has("-e", "--edit") {
			for _, t := range o.operands {
				a.writeTarget("sudoedit", t, st, false)
			}
			return nil, stream{}, true
		}
		return skipAssignments(o.rest), stream{}, false
	case "sudoedit":
		for _, t := range parse(args, optSpec{short: "CDghpRrtTUu"}).operands {
			a.writeTarget("sudoedit", t, st, false)
		}
		return nil, stream{}, true
	case "doas":
		o = parse(args, optSpec{short: "uC", stopAtOperand: true})
	case "env":
		o = parse(args, optSpec{short: "uCPS", long: []string{"unset", "chdir", "split-string", "block-signal", "default-signal", "ignore-signal"}, stopAtOperand: true})
		rest := skipAssignments(o.rest)
		if s, ok := o.value("-S", "--split-string"); ok {
			a.nestedScript("env -S", field{s: s.s + " " + joinQuoted(rest), dyn: s.dyn, download: s.download, decoded: s.decoded}, st, depth)
			return nil, stream{}, true
		}
		if len(rest) == 0 {
			return nil, stream{}, true
		}
		if dir, ok := o.value("-C", "--chdir"); ok {
			sub := st.clone()
			sub.cwd = a.cwdOf(dir, st)
			return nil, a.run(rest, sub, depth), true
		}
		return rest, stream{}, false
	case "command":
		o = parse(args, optSpec{stopAtOperand: true})
		if o.has("-v", "-V") {
			return nil, stream{}, true
		}
	case "builtin", "nohup", "unbuffer", "busybox", "toybox":
		o = parse(args, optSpec{stopAtOperand: true})
	case "exec":
		o = parse(args, optSpec{short: "a", stopAtOperand: true})
	case "nice":
		o = parse(args, optSpec{short: "n", long: []string{"adjustment"}, stopAtOperand: true, numeric: true})
	case "setsid":
		o = parse(args, optSpec{stopAtOperand: true})
	case "time":
		o = parse(args, optSpec{short: "fo", long: []string{"format", "output"}, stopAtOperand: true})
	case "timeout":
		o = parse(args, optSpec{short: "sk", long: []string{"signal", "kill-after"}, stopAtOperand: true})
		if len(o.rest) > 0 {
			return o.rest[1:], stream{}, false // the duration
		}
		return nil, stream{}, true
	case "stdbuf":
		o = parse(args, optSpec{short: "ioe", long: []string{"input", "output", "error"}, stopAtOperand: true})
	case "ionice":
		o = parse(args, optSpec{short: "cnpPu", long: []string{"class", "classdata", "pid", "pgid", "uid"}, stopAtOperand: true})
		if o.has("-p", "-P", "-u", "--pid", "--pgid", "--uid") {
			return nil, stream{}, true
		}
	case "chrt", "taskset":
		o = parse(args, optSpec{short: "TPDc", stopAtOperand: true})
		if o.has("-p", "--pid") || len(o.rest) == 0 {
			return nil, stream{}, true
		}
		return o.rest[1:], stream{}, false // the priority or CPU mask
	case "caffeinate":
		o = parse(args, optSpec{short: "tw", stopAtOperand: true})
	case "chroot":
		o = parse(args, optSpec{long: []string{"userspec", "groups"}, stopAtOperand: true})
		if len(o.rest) == 0 {
			return nil, stream{}, true
		}
		return o.rest[1:], stream{}, false // the new root
	case "flock":
		o = parse(args, optSpec{short: "wEc", long: []string{"wait", "timeout", "conflict-exit-code", "command"}, stopAtOperand: true})
		if c, ok := o.value("-c", "--command"); ok {
			a.nestedScript("flock -c", c, st, depth)
			return nil, stream{}, true
		}
		if len(o.rest) < 2 {
			return nil, stream{}, true
		}
		rest := o.rest[1:] // the lock file
		if rest[0].s == "-c" || rest[0].s == "--command" {
			if len(rest) > 1 {
				a.nestedScript("flock -c", rest[1], st, depth)
			}
			return nil, stream{}, true
		}
		return rest, stream{}, false
	case "watch":
		o = parse(args, optSpec{short: "nq", long: []string{"interval", "equexit"}, stopAtOperand: true})
		if o.has("-x", "--exec") {
			return o.rest, stream{}, false
		}
		if len(o.rest) > 0 {
			a.nestedScript("watch", joinFields(o.rest), st, depth)
		}
		return nil, stream{}, true
	case "su", "runuser":
		o = parse(args, optSpec{short: "cgGsw", long: []string{"command", "session-command", "shell", "group", "supp-group", "whitelist-environment"}})
		if c, ok := o.value("-c", "--command", "--session-command"); ok {
			a.nestedScript(base+" -c", c, st, depth)
		} else if base == "runuser" && len(o.operands) > 1 {
			return o.operands[1:], stream{}, false
		}
		return nil, stream{}, true
	case "sg":
		o = parse(args, optSpec{short: "c"})
		if c, ok := o.value("-c"); ok {
			a.nestedScript("sg -c", c, st, depth)
		} else if len(o.operands) > 1 {
			a.nestedScript("sg", joinFields(o.operands[1:]), st, depth)
		}
		return nil, stream{}, true
	case "script":
		o = parse(args, optSpec{short: "cEIOBTtm", long: []string{"command", "echo", "log-in", "log-out", "log-io", "log-timing", "logging-format"}})
		if c, ok := o.value("-c", "--command"); ok {
			a.nestedScript("script -c", c, st, depth)
		}
		return nil, stream{}, true
	case "xargs":
		return nil, a.xargs(argv, st, depth), true
	}
	return o.rest, stream{}, false
}

// skipAssignments drops NAME=value words before a command (sudo, env).
func skipAssignments(argv []field) []field {
	for len(argv) > 0 {
		n, _, ok := strings.Cut(argv[0].s, "=")
		if !ok || !validVarName(n) {
			break
		}
		argv = argv[1:]
	}
	return argv
}

func validVarName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '_' && !isAlpha(c) && (i == 0 || !isDigit(c)) {
			return false
		}
	}
	return true
}

// joinFields joins words the way a program that runs "$*" through sh -c
// (watch, sg) sees them.
func joinFields(fs []field) field {
	var out field
	parts := make([]string, 0, len(fs))
	for _, f := range fs {
		out = mergeField(out, f)
		parts = append(parts, f.s)
	}
	out.s = strings.Join(parts, " ")
	out.glob = false
	return out
}

// nestedScript analyses a script given as one word (bash -c, trap, watch,
// su -c): its origin first, then its text one level deeper.
func (a *analysis) nestedScript(what string, script field, st *state, depth int) {
	switch {
	case script.download:
		a.say(a.p.Actions.DownloadExec, msgScriptDownloaded, detail{what: what})
		return
	case script.decoded:
		if !script.dyn {
			a.script(script.s, st.clone(), depth+1)
		}
		a.say(a.p.Actions.DecodeExec, msgScriptDecoded, detail{what: what})
		return
	case script.dyn:
		m := msgDynamicShell
		if what == "eval" {
			m = msgDynamicEval
		}
		a.say(a.p.Actions.Dynamic, m, detail{what: what})
		return
	}
	a.script(script.s, st.clone(), depth+1)
}

// streamScript analyses a script read from a stream (stdin, <(…)).
func (a *analysis) streamScript(what string, in stream, st *state, depth int) {
	switch {
	case in.download:
		a.say(a.p.Actions.DownloadExec, msgStreamDownloaded, detail{what: what})
	case in.static != nil:
		a.script(*in.static, st.clone(), depth+1)
		if in.decoded {
			a.say(a.p.Actions.DecodeExec, msgStreamDecoded, detail{what: what})
		}
	case in.decoded:
		a.say(a.p.Actions.DecodeExec, msgStreamDecoded, detail{what: what})
	}
}

// scriptFile checks a script file a shell or interpreter runs.
func (a *analysis) scriptFile(prog string, f field, st *state, depth int) {
	if f.proc != nil {
		a.streamScript(prog+" <(…)", *f.proc, st, depth)
		return
	}
	if f.download || f.decoded {
		a.nestedScript(prog, f, st, depth)
		return
	}
	p := a.ctx.resolve(f.s, st.cwd)
	if s, ok := st.scripts[p.key()]; ok {
		a.script(s, st.clone(), depth+1)
		return
	}
	switch {
	case st.downloads[p.key()] || strings.HasPrefix(p.key(), "/dev/tcp/") || strings.HasPrefix(p.key(), "/dev/udp/"):
		a.say(a.p.Actions.DownloadExec, msgScriptFileDownloaded, detail{prog: prog, path: p.String()})
	case p.key() == "/dev/stdin" || p.key() == "/dev/fd/0" || p.key() == "/proc/self/fd/0":
		a.streamScript(prog, st.stdin, st, depth)
	default:
		a.p.checkRead(a.v, a.ctx, p, readOpts{what: prog})
	}
}

func (a *analysis) shell(argv []field, st *state, depth int) stream {
	prog := baseName(argv[0].s)
	args := argv[1:]
	cmdMode, stdinMode := false, false
	i := 0
loop:
	for ; i < len(args); i++ {
		s := args[i].s
		switch {
		case args[i].dyn:
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
	var operands []field
	if i < len(args) {
		operands = args[i:]
	}
	switch {
	case cmdMode:
		if len(operands) == 0 {
			return stream{}
		}
		sub := st.clone()
		sub.args, sub.argsKnown = append([]field(nil), operands[min(2, len(operands)):]...), true // $0 is operands[1]
		a.nestedScript(prog+" -c", operands[0], sub, depth)
	case len(operands) > 0 && !stdinMode:
		a.scriptFile(prog, operands[0], st, depth)
	default:
		a.streamScript(prog, st.stdin, st, depth)
	}
	return stream{}
}

// powershell: -Command is parsed with the Bash parser (PowerShell syntax
// often does not parse, which makes the command unanalysable);
// -EncodedCommand is obfuscation.
func (a *analysis) powershell(argv []field, st *state, depth int) stream {
	args := argv[1:]
	valued := []string{"-executionpolicy", "-workingdirectory", "-configurationname", "-outputformat", "-inputformat", "-windowstyle", "-version", "-psconsolefile", "-custompipename", "-settingsfile", "-ex", "-ep", "-wd", "-w", "-of", "-if"}
	for i := 0; i < len(args); i++ {
		s := strings.ToLower(args[i].s)
		switch {
		case len(s) > 1 && (s[0] == '-' || s[0] == '/') && strings.HasPrefix("-encodedcommand", "-"+s[1:]) && len(s) >= 2 && s[1] == 'e' && s != "-ex" && s != "-ep":
			if i+1 < len(args) {
				if script, ok := decodePowerShell(args[i+1].s); ok {
					a.script(script, st.clone(), depth+1)
				}
			}
			a.say(a.p.Actions.DecodeExec, msgEncodedCommand, detail{cmd: cmdText(argv)})
			return stream{}
		case len(s) > 1 && (s[0] == '-' || s[0] == '/') && strings.HasPrefix("-command", "-"+s[1:]):
			if i+1 < len(args) {
				script := joinFields(args[i+1:])
				if args[i+1].s == "-" {
					a.streamScript(args[0].s, st.stdin, st, depth)
					return stream{}
				}
				a.nestedScript(baseName(argv[0].s)+" -Command", script, st, depth)
			}
			return stream{}
		case len(s) > 1 && (s[0] == '-' || s[0] == '/') && strings.HasPrefix("-file", "-"+s[1:]) && len(s) >= 2 && s[1] == 'f':
			if i+1 < len(args) {
				a.scriptFile(baseName(argv[0].s), args[i+1], st, depth)
			}
			return stream{}
		case slices.Contains(valued, s):
			i++
		case strings.HasPrefix(s, "-"):
		default:
			a.scriptFile(baseName(argv[0].s), args[i], st, depth)
			return stream{}
		}
	}
	a.streamScript(baseName(argv[0].s), st.stdin, st, depth)
	return stream{}
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
	return sanitize(string(r)), true
}

// interpreter handles python, perl, node, …: inline code cannot be
// analysed, but where it comes from can; a script read from stdin or a
// downloaded file is download-and-run.
func (a *analysis) interpreter(argv []field, spec interp, st *state, depth int) stream {
	prog := baseName(argv[0].s)
	args := argv[1:]
	for i := 0; i < len(args); i++ {
		f := args[i]
		s := f.s
		switch {
		case f.dyn && !f.download && !f.decoded:
			return stream{}
		case slices.Contains(spec.code, s):
			if i+1 < len(args) {
				a.inlineCode(argv, prog, args[i+1], st, depth)
			}
			return stream{}
		case prog != "node" && len(s) > 2 && slices.Contains(spec.code, s[:2]):
			code := f
			code.s = s[2:] // -c'code' attached
			a.inlineCode(argv, prog, code, st, depth)
			return stream{}
		case strings.HasPrefix(prog, "python") && (s == "-m" || strings.HasPrefix(s, "-m") && len(s) > 2 && !strings.HasPrefix(s, "--")):
			return stream{} // a module
		case s == "-":
			a.streamScript(prog, st.stdin, st, depth)
			return stream{}
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
			return stream{}
		}
	}
	a.streamScript(prog, st.stdin, st, depth)
	return stream{}
}

// perlInPlace checks the files perl -i edits.
func (a *analysis) perlInPlace(argv []field, st *state) {
	inPlace, afterCode := false, false
	var files []field
	for i := 1; i < len(argv); i++ {
		s := argv[i].s
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

func (a *analysis) eval(argv []field, st *state, depth int) {
	if len(argv) < 2 {
		return
	}
	a.nestedScript("eval", joinFields(argv[1:]), st, depth)
}

func (a *analysis) source(argv []field, st *state, depth int) stream {
	if len(argv) < 2 {
		return stream{}
	}
	a.scriptFile(argv[0].s, argv[1], st, depth)
	return stream{}
}

// cwdOf resolves a directory for cd: "" when unknown.
func (a *analysis) cwdOf(dir field, st *state) string {
	if dir.dyn || dir.glob {
		return ""
	}
	f := a.ctx.resolve(dir.s, st.cwd)
	if !f.abs {
		return ""
	}
	return f.key()
}

func (a *analysis) cd(base string, args []field, st *state) {
	if base == "popd" {
		st.cwd = ""
		return
	}
	o := parse(args, optSpec{})
	switch {
	case len(o.operands) == 0 && base == "cd":
		if a.ctx.homeSet {
			st.cwd = a.ctx.home
		} else {
			st.cwd = symbolicHome
		}
	case len(o.operands) == 0 || o.operands[0].s == "-" || strings.HasPrefix(o.operands[0].s, "+"):
		st.cwd = ""
	default:
		a.readTarget(base, o.operands[0], st, readOpts{namesOnly: true})
		st.cwd = a.cwdOf(o.operands[0], st)
	}
}

// echo returns what echo prints, when it is static.
func echo(args []field) stream {
	newline, escapes := true, false
	for len(args) > 0 && len(args[0].s) > 1 && args[0].s[0] == '-' && strings.Trim(args[0].s[1:], "neE") == "" {
		for _, c := range args[0].s[1:] {
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
	out := stream{}
	parts := make([]string, 0, len(args))
	for _, f := range args {
		if f.dyn {
			out.download = out.download || f.download
			out.decoded = out.decoded || f.decoded
			return out
		}
		out.download = out.download || f.download
		out.decoded = out.decoded || f.decoded
		parts = append(parts, f.s)
	}
	s := strings.Join(parts, " ")
	if escapes {
		s = ansiC(strings.ReplaceAll(s, `\c`, "\x00"))
	}
	if newline {
		s += "\n"
	}
	out.static = &s
	out.items = strings.Fields(s)
	return out
}

// printf returns what printf prints, when it is static and the format uses
// only %s, %b, %c, %d and %%.
func (a *analysis) printf(args []field, st *state) stream {
	if len(args) > 0 && args[0].s == "-v" {
		if len(args) > 1 {
			delete(st.vars, args[1].s)
		}
		return stream{}
	}
	if len(args) > 0 && args[0].s == "--" {
		args = args[1:]
	}
	out := stream{}
	for _, f := range args {
		out.download = out.download || f.download
		out.decoded = out.decoded || f.decoded
		if f.dyn {
			return out
		}
	}
	if len(args) == 0 {
		return out
	}
	format, rest := ansiC(args[0].s), args[1:]
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
					arg, rest, consumed = rest[0].s, rest[1:], true
				}
			default:
				return out
			}
			switch format[i] {
			case 'b':
				arg = ansiC(arg)
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
	out.static = &s
	out.items = strings.Fields(s)
	return out
}

// base64 decodes static input; otherwise marks the output decoded.
func (a *analysis) base64(argv []field, st *state) stream {
	o := parse(argv[1:], optSpec{short: "w", long: []string{"wrap"}})
	a.readOperands(baseName(argv[0].s), o.operands, st, readOpts{})
	if !o.has("-d", "--decode", "-D") {
		return st.stdin.taint()
	}
	out := stream{decoded: true, download: st.stdin.download}
	for _, t := range o.operands {
		if t.proc != nil {
			out.download = out.download || t.proc.download
		}
		if st.downloads[a.ctx.resolve(t.s, st.cwd).key()] {
			out.download = true
		}
	}
	if len(o.operands) == 0 && st.stdin.static != nil && baseName(argv[0].s) == "base64" {
		clean := strings.Join(strings.Fields(*st.stdin.static), "")
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			if b, err := enc.DecodeString(clean); err == nil {
				out.static = ptr(sanitize(string(b)))
				break
			}
		}
	}
	return out
}

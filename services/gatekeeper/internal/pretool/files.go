package pretool

import (
	"path"
	"strings"

	"github.com/claimcheck/claimcheck/pkg/shell"
)

// writeTarget checks one path a command writes (devices first).
func (a *analysis) writeTarget(what string, t shell.Field, st *shell.State, recursive bool) {
	f := a.ctx.resolve(t.S, st.Cwd)
	f.Glob = t.Glob
	if isDevice(f) {
		a.say(a.p.Actions.Destructive, msgDeviceWrite, detail{what: what, path: f.String()})
		return
	}
	a.p.checkWrite(a.v, a.ctx, f, writeOpts{what: what, recursive: recursive})
}

// readTarget checks one path a command reads.
func (a *analysis) readTarget(what string, t shell.Field, st *shell.State, o readOpts) {
	if t.Proc != nil {
		return
	}
	f := a.ctx.resolve(t.S, st.Cwd)
	f.Glob = t.Glob
	o.what = what
	a.p.checkRead(a.v, a.ctx, f, o)
}

func (a *analysis) readOperands(what string, ts []shell.Field, st *shell.State, o readOpts) {
	for _, t := range ts {
		a.readTarget(what, t, st, o)
	}
}

// genericReads treats every operand (and --option=value) of a program the
// analysis has no model of as a file it may read: cat, less, head, tail,
// grep, … of a secrets file needs the human; claimcheck's own files are
// refused.
func (a *analysis) genericReads(c call) {
	base, st, args := c.base, c.st, c.args()
	o := readOpts{namesOnly: c.prog.Has(shell.NamesOnly), recursive: c.prog.Has(shell.ReadsTree)}
	patternFirst, fetches := c.prog.Has(shell.PatternFirst), c.prog.Has(shell.Fetches)
	skipPattern := patternFirst
	for _, f := range args {
		if patternFirst && (f.S == "-e" || f.S == "--regexp" || f.S == "-f" || f.S == "--file" || f.S == "--from-file") {
			skipPattern = false
		}
		if strings.HasPrefix(f.S, "-") && len(f.S) > 1 && !strings.HasPrefix(f.S, "--") && strings.ContainsAny(f.S, "rR") &&
			(base == "grep" || base == "egrep" || base == "fgrep" || base == "zgrep") {
			o.recursive = true
		}
		if f.S == "--recursive" {
			o.recursive = true
		}
	}
	skipNext := false
	for _, f := range args {
		s := f.S
		if skipNext {
			skipNext = false
			continue
		}
		if strings.HasPrefix(s, "-") && len(s) > 1 {
			if patternFirst && (s == "-e" || s == "--regexp") {
				skipNext = true
				continue
			}
			if _, v, ok := strings.Cut(s, "="); ok && strings.HasPrefix(s, "--") {
				if fetches {
					v = fileRef(v)
				}
				a.readTarget(base, shell.Field{S: v, Glob: f.Glob}, st, o)
			}
			continue
		}
		if skipPattern {
			skipPattern = false
			continue
		}
		if fetches {
			s = fileRef(s)
		}
		a.readTarget(base, shell.Field{S: s, Glob: f.Glob, Proc: f.Proc}, st, o)
	}
}

// fileRef extracts the file of an upload argument: @file, name=@file,
// name=<file (curl, HTTPie).
func fileRef(s string) string {
	if strings.HasPrefix(s, "@") {
		return s[1:]
	}
	for _, sep := range []string{"=@", ":=@", "=<", "@"} {
		if i := strings.Index(s, sep); i > 0 {
			f, _, _ := strings.Cut(s[i+len(sep):], ";")
			return f
		}
	}
	return ""
}

// shred overwrites its operands; a device is destroyed.
func (a *analysis) shred(c call) shell.Stream {
	for _, t := range c.opts().Operands {
		if f := a.ctx.resolve(t.S, c.st.Cwd); isDevice(f) {
			a.say(a.p.Actions.Destructive, msgShredDevice, detail{cmd: cmdText(c.argv), path: f.String()})
			return shell.Stream{}
		}
		a.writeTarget("shred", t, c.st, false)
	}
	return shell.Stream{}
}

// tee writes its input to its operands, and outputs it.
func (a *analysis) tee(c call) shell.Stream {
	st := c.st
	for _, t := range c.opts().Operands {
		a.writeTarget("tee", t, st, false)
		a.w.Wrote(st, a.ctx.resolve(t.S, st.Cwd).Key(), st.Stdin)
	}
	return st.Stdin
}

// touch and truncate write their operands; -r names a file they read
// the name of.
func (a *analysis) touch(c call) shell.Stream {
	o := c.opts()
	for _, r := range o.Values("-r", "--reference") {
		a.readTarget(c.base, r, c.st, readOpts{namesOnly: true})
	}
	for _, t := range o.Operands {
		a.writeTarget(c.base, t, c.st, false)
	}
	return shell.Stream{}
}

// remove handles rm and friends.
func (a *analysis) remove(c call) shell.Stream {
	a.removeTargets(c.base, c.argv, c.opts(), c.st)
	return shell.Stream{}
}

func (a *analysis) removeTargets(base string, argv []shell.Field, o shell.Opts, st *shell.State) {
	recursive := base == "trash" || base == "trash-put" || o.Has("-r", "-R", "--recursive")
	targets := o.Operands
	if base == "gio" {
		if len(targets) == 0 || targets[0].S != "trash" && targets[0].S != "remove" {
			return
		}
		targets, recursive = targets[1:], true
	}
	for _, t := range targets {
		if a.w.Stop() {
			return
		}
		a.deleteTarget(argv, t, st, recursive)
	}
}

// deleteTarget checks one path a command deletes (or moves away).
func (a *analysis) deleteTarget(argv []shell.Field, t shell.Field, st *shell.State, recursive bool) {
	f := a.ctx.resolve(t.S, st.Cwd)
	f.Glob = t.Glob
	if recursive {
		if a.ctx.isRoot(a.p.c.roots, f) {
			a.say(a.p.Actions.Destructive, msgRmRoot, detail{cmd: cmdText(argv), path: f.String()})
			return
		}
		if strings.Contains(t.S, shell.UnknownMaybeEmpty) {
			w := a.ctx.resolve(strings.ReplaceAll(t.S, shell.UnknownMaybeEmpty, ""), st.Cwd)
			w.Glob = t.Glob
			if a.ctx.isRoot(a.p.c.roots, w) {
				a.say(a.p.Actions.Dynamic, msgRmEmptyVariable, detail{cmd: cmdText(argv), path: w.String()})
			}
		} else if !f.Abs && st.Cwd == "" && vague(f) {
			a.say(a.p.Actions.Dynamic, msgRmUnknownDir, detail{cmd: cmdText(argv), path: quote(t.S)})
		}
	}
	a.p.checkWrite(a.v, a.ctx, f, writeOpts{what: shell.BaseName(argv[0].S), recursive: recursive})
}

// vague reports a relative target that names a whole directory: ., ..,
// ../.., or a glob over its entries.
func vague(f shell.Path) bool {
	if len(f.Segs) == 0 {
		return true
	}
	if len(f.Segs) == 1 && f.Glob && shell.HasMeta(f.Segs[0]) {
		return true
	}
	for _, s := range f.Segs {
		if s != ".." {
			return false
		}
	}
	return true
}

// move handles mv: its sources go away (like rm -r), its destination is
// written.
func (a *analysis) move(c call) shell.Stream {
	argv, st, o := c.argv, c.st, c.opts()
	srcs := o.Operands
	dest, ok := o.Value("-t", "--target-directory")
	if !ok {
		if len(srcs) < 2 {
			return shell.Stream{}
		}
		dest, srcs = srcs[len(srcs)-1], srcs[:len(srcs)-1]
	}
	for _, s := range srcs {
		a.deleteTarget(argv, s, st, true)
	}
	a.destination("mv", dest, srcs, st, destOpts{tree: true})
	return shell.Stream{}
}

// destOpts say how cp, mv, ln, install and rsync fill their destination.
type destOpts struct {
	tree     bool // a directory tree may take the destination's place (mv, cp -r, ln, rsync)
	contents bool // a source's contents go into the destination (rsync src/ dest)
}

// destination checks what cp, mv, ln, install and rsync write: the
// destination itself; the file each source becomes when the destination
// is a directory (cp settings.json .claude/ writes .claude/settings.json);
// and, when a directory tree may take the destination's place (mv x
// .claude, cp -r evil .claude), everything beneath it. A destination that
// must be an existing directory (dest/, ., ~, a system root) is only
// written into.
func (a *analysis) destination(what string, dest shell.Field, srcs []shell.Field, st *shell.State, o destOpts) {
	f := a.ctx.resolve(dest.S, st.Cwd)
	into := strings.HasSuffix(dest.S, "/") || len(f.Segs) == 0 || f.Key() == a.ctx.cwd || a.ctx.isRoot(a.p.c.roots, f)
	a.writeTarget(what, dest, st, o.tree && (!into || o.contents))
	for _, src := range srcs {
		if a.w.Stop() {
			return
		}
		name := path.Base(strings.TrimRight(src.S, "/"))
		if name == "." || name == ".." || name == "/" || name == "" {
			continue
		}
		inside := shell.MergeField(dest, src)
		inside.S, inside.Proc = strings.TrimRight(dest.S, "/")+"/"+name, nil
		a.writeTarget(what, inside, st, o.tree)
	}
}

// isRemote reports an scp/rsync operand naming another host.
func isRemote(s string) bool {
	if strings.HasPrefix(s, "rsync://") {
		return true
	}
	colon := strings.IndexByte(s, ':')
	slash := strings.IndexByte(s, '/')
	return colon > 0 && (slash < 0 || colon < slash)
}

// copy handles cp, install, ln, rsync and scp: sources are read, the
// destination written.
func (a *analysis) copy(c call) shell.Stream {
	a.copyFiles(c.base, c.argv, c.opts(), c.st)
	return shell.Stream{}
}

func (a *analysis) copyFiles(base string, argv []shell.Field, o shell.Opts, st *shell.State) {
	for _, f := range o.Values("-i", "--exclude-from", "--include-from", "--files-from", "--password-file", "-F") {
		a.readTarget(base, f, st, readOpts{})
	}
	for _, f := range o.Values("--log-file") {
		a.writeTarget(base, f, st, false)
	}
	recursive := base == "rsync" || o.Has("-r", "-R", "-a", "--recursive", "--archive")
	ops := o.Operands
	if base == "install" && o.Has("-d", "--directory") {
		for _, t := range ops {
			a.writeTarget(base, t, st, false)
		}
		return
	}
	dest, ok := o.Value("-t", "--target-directory")
	if !ok {
		if len(ops) < 2 {
			return
		}
		dest, ops = ops[len(ops)-1], ops[:len(ops)-1]
	}
	if base == "ln" {
		for _, s := range ops {
			a.readTarget("ln", s, st, readOpts{namesOnly: true})
		}
	} else {
		for _, s := range ops {
			if (base == "rsync" || base == "scp") && isRemote(s.S) {
				continue
			}
			a.readTarget(base, s, st, readOpts{recursive: recursive})
		}
	}
	if (base == "rsync" || base == "scp") && isRemote(dest.S) {
		return
	}
	deletes := false
	for _, op := range o.List {
		if strings.HasPrefix(op.Name, "--delete") || op.Name == "--remove-source-files" {
			deletes = true
		}
	}
	if base == "rsync" && deletes {
		a.deleteTarget(argv, dest, st, true)
		return
	}
	o2 := destOpts{tree: recursive || base == "ln"}
	for _, s := range ops {
		o2.contents = o2.contents || base == "rsync" && strings.HasSuffix(s.S, "/")
	}
	a.destination(base, dest, ops, st, o2)
}

// dd reads if= and writes of=; a device as of= is destroyed.
func (a *analysis) dd(c call) shell.Stream {
	a.diskDump(c.argv, c.st)
	return c.st.Stdin.Taint()
}

func (a *analysis) diskDump(argv []shell.Field, st *shell.State) {
	for _, f := range argv[1:] {
		k, v, ok := strings.Cut(f.S, "=")
		if !ok {
			continue
		}
		t := shell.Field{S: v, Glob: f.Glob, Dyn: f.Dyn}
		switch k {
		case "if":
			a.readTarget("dd", t, st, readOpts{})
		case "of":
			if p := a.ctx.resolve(v, st.Cwd); isDevice(p) {
				a.say(a.p.Actions.Destructive, msgDDDevice, detail{cmd: cmdText(argv), path: p.String()})
				return
			}
			a.writeTarget("dd", t, st, false)
		}
	}
}

// sed -i writes its files; otherwise it reads them.
func (a *analysis) sed(c call) shell.Stream {
	a.streamEdit(c.args(), c.st)
	return c.st.Stdin.Taint()
}

func (a *analysis) streamEdit(args []shell.Field, st *shell.State) {
	inPlace, script := false, false
	var operands []shell.Field
	for i := 0; i < len(args); i++ {
		s := args[i].S
		switch {
		case s == "--":
			operands = append(operands, args[i+1:]...)
			i = len(args)
		case s == "-e" || s == "--expression" || s == "-f" || s == "--file":
			script = true
			if (s == "-f" || s == "--file") && i+1 < len(args) {
				a.readTarget("sed", args[i+1], st, readOpts{})
			}
			i++
		case strings.HasPrefix(s, "--expression=") || strings.HasPrefix(s, "--file="):
			script = true
		case s == "--in-place" || strings.HasPrefix(s, "--in-place="):
			inPlace = true
		case s == "-l" || s == "--line-length":
			i++
		case strings.HasPrefix(s, "--"):
		case len(s) > 1 && s[0] == '-':
			for j := 1; j < len(s); j++ {
				c := s[j]
				if c == 'i' {
					inPlace = true
					if s == "-i" && i+1 < len(args) && args[i+1].S == "" {
						i++ // BSD sed -i ''
					}
					break
				}
				if c == 'e' || c == 'f' || c == 'l' {
					script = script || c != 'l'
					if j+1 == len(s) {
						i++
					}
					break
				}
			}
		default:
			operands = append(operands, args[i])
		}
	}
	if !script && len(operands) > 0 {
		operands = operands[1:]
	}
	for _, t := range operands {
		if inPlace {
			a.writeTarget("sed -i", t, st, false)
		} else {
			a.readTarget("sed", t, st, readOpts{})
		}
	}
}

func (a *analysis) chmod(c call) shell.Stream {
	a.changeModes(c.base, c.argv, c.st)
	return shell.Stream{}
}

func (a *analysis) changeModes(base string, argv []shell.Field, st *shell.State) {
	args := argv[1:]
	recursive, hasMode := false, base != "chattr" && base != "setfacl"
	var operands []shell.Field
	optChars := "Rcfv"
	if base == "chown" || base == "chgrp" {
		optChars = "RcfvhHLP"
	}
	for i := 0; i < len(args); i++ {
		s := args[i].S
		switch {
		case s == "--":
			operands = append(operands, args[i+1:]...)
			i = len(args)
		case s == "--recursive":
			recursive = true
		case strings.HasPrefix(s, "--reference"):
			hasMode = false
		case strings.HasPrefix(s, "--"):
			if base == "setfacl" && !strings.Contains(s, "=") &&
				(s == "--set" || s == "--set-file" || s == "--modify" || s == "--modify-file" || s == "--remove" || s == "--remove-file") {
				i++
			}
		case base == "chattr" && len(s) > 1 && (s[0] == '-' || s[0] == '+' || s[0] == '='):
			if s == "-R" {
				recursive = true
			}
			if s == "-v" || s == "-p" {
				i++
			}
		case base == "setfacl" && len(s) > 1 && s[0] == '-':
			if strings.ContainsRune(s, 'R') {
				recursive = true
			}
			if strings.ContainsAny(s[len(s)-1:], "mxMX") {
				i++
			}
		case len(s) > 1 && s[0] == '-' && strings.Trim(s[1:], optChars) == "":
			if strings.ContainsRune(s, 'R') {
				recursive = true
			}
		default:
			operands = append(operands, args[i])
		}
	}
	if hasMode && len(operands) > 0 {
		operands = operands[1:]
	}
	m := msgChmodRoot
	if base == "chown" || base == "chgrp" {
		m = msgChownRoot
	}
	for _, t := range operands {
		f := a.ctx.resolve(t.S, st.Cwd)
		f.Glob = t.Glob
		if recursive && a.ctx.isRoot(a.p.c.roots, f) {
			a.say(a.p.Actions.Destructive, m, detail{cmd: cmdText(argv), path: f.String()})
			return
		}
		a.writeTarget(base, t, st, recursive)
	}
}

// find: -delete and -exec run on its start points; a start point that is
// a system root makes them destructive.
func (a *analysis) find(c call) shell.Stream {
	roots, expr := findArgs(c.args())
	for _, r := range roots {
		a.readTarget("find", r, c.st, readOpts{namesOnly: true})
	}
	if a.findActions(c, roots, expr) {
		for _, r := range roots {
			f := a.ctx.resolve(r.S, c.st.Cwd)
			f.Glob = r.Glob
			if a.ctx.isRoot(a.p.c.roots, f) {
				a.say(a.p.Actions.Destructive, msgFindDelete, detail{cmd: cmdText(c.argv), path: f.String()})
				break
			}
			a.p.checkWrite(a.v, a.ctx, f, writeOpts{what: "find -delete", recursive: true})
		}
	}
	out := shell.Stream{}
	for _, r := range roots {
		out.Items = append(out.Items, r.S)
	}
	return out
}

// findArgs splits find's arguments into its start points (. when none)
// and its expression.
func findArgs(args []shell.Field) (roots, expr []shell.Field) {
	i := 0
	for i < len(args) {
		s := args[i].S
		if s == "-H" || s == "-L" || s == "-P" || strings.HasPrefix(s, "-O") {
			i++
			continue
		}
		if s == "-D" {
			i += 2
			continue
		}
		break
	}
	for ; i < len(args); i++ {
		s := args[i].S
		if strings.HasPrefix(s, "-") || s == "(" || s == "!" || s == "," || s == ")" {
			break
		}
		roots = append(roots, args[i])
	}
	if len(roots) == 0 {
		roots = []shell.Field{{S: "."}}
	}
	if i < len(args) {
		expr = args[i:]
	}
	return roots, expr
}

// findActions analyses the commands find's expression runs on its start
// points and the files it writes; it reports whether it has -delete.
func (a *analysis) findActions(c call, roots, expr []shell.Field) (del bool) {
	for j := 0; j < len(expr) && !a.w.Stop(); j++ {
		switch expr[j].S {
		case "-delete":
			del = true
		case "-exec", "-execdir", "-ok", "-okdir":
			end := j + 1
			for end < len(expr) && expr[end].S != ";" && expr[end].S != "+" {
				end++
			}
			inner := expr[j+1 : end]
			for k, r := range roots {
				if k == 4 || len(inner) == 0 {
					break
				}
				sub := c.st.Clone()
				sub.Stdin = shell.Stream{}
				a.Run(substitute(inner, "{}", r), sub, c.depth)
			}
			j = end
		case "-fprint", "-fprint0", "-fls":
			if j+1 < len(expr) {
				a.writeTarget("find", expr[j+1], c.st, false)
				j++
			}
		case "-fprintf":
			if j+1 < len(expr) {
				a.writeTarget("find", expr[j+1], c.st, false)
				j += 2
			}
		}
	}
	return del
}

// substitute replaces repl in each word with item (find -exec {}, xargs -I).
func substitute(argv []shell.Field, repl string, item shell.Field) []shell.Field {
	out := make([]shell.Field, len(argv))
	for i, f := range argv {
		if repl != "" && strings.Contains(f.S, repl) {
			g := shell.MergeField(f, item)
			g.S = strings.ReplaceAll(f.S, repl, item.S)
			f = g
		}
		out[i] = f
	}
	return out
}

// xargs runs its command (echo without one) with the items of its input:
// the start points of a find, the words of a static input, or an unknown
// item when the input is downloaded or decoded.
func (a *analysis) xargs(w shell.Wrapped, st *shell.State, depth int) shell.Stream {
	o := w.Opts
	inner := w.Command
	if len(inner) == 0 {
		inner = []shell.Field{{S: "echo"}}
	}
	repl := ""
	if v, ok := o.Value("-I", "--replace"); ok {
		repl = v.S
	} else if o.Has("-i") {
		repl = "{}"
	}
	items := st.Stdin.Items
	if items == nil && st.Stdin.Static != nil {
		items = strings.Fields(*st.Stdin.Static)
	}
	if o.Has("-a", "--arg-file") {
		items = nil
	}
	sub := st.Clone()
	sub.Stdin = shell.Stream{}
	if len(items) == 0 {
		if st.Stdin.Download || st.Stdin.Decoded {
			// The items come from the network or a decoder.
			item := shell.Field{S: shell.UnknownMaybeEmpty, Dyn: true, Download: st.Stdin.Download, Decoded: st.Stdin.Decoded}
			if repl != "" {
				return a.Run(substitute(inner, repl, item), sub, depth)
			}
			return a.Run(append(append([]shell.Field(nil), inner...), item), sub, depth)
		}
		return a.Run(inner, sub, depth)
	}
	for k, it := range items {
		if k == 4 || a.w.Stop() {
			break
		}
		item := shell.Field{S: it}
		args := append([]shell.Field(nil), inner...)
		if repl != "" {
			args = substitute(inner, repl, item)
		} else {
			args = append(args, item)
		}
		a.Run(args, sub, depth)
	}
	return shell.Stream{}
}

// extract handles tar and unzip: what they read, and the directory they
// extract into.
func (a *analysis) extract(c call) shell.Stream {
	a.genericReads(c)
	a.extractsTo(c.base, c.args(), c.st)
	return c.st.Stdin.Taint()
}

func (a *analysis) extractsTo(base string, args []shell.Field, st *shell.State) {
	extracting := base == "unzip"
	var dir *shell.Field
	for i := 0; i < len(args); i++ {
		s := args[i].S
		switch {
		case s == "--extract" || s == "--get":
			extracting = true
		case s == "--directory" || s == "-d" && base == "unzip":
			if i+1 < len(args) {
				dir = &args[i+1]
				i++
			}
		case strings.HasPrefix(s, "--directory="):
			dir = &shell.Field{S: strings.TrimPrefix(s, "--directory=")}
		case strings.HasPrefix(s, "--"):
		case base != "unzip" && (strings.HasPrefix(s, "-") || i == 0):
			if strings.ContainsRune(s, 'x') {
				extracting = true
			}
			if strings.HasSuffix(s, "C") && i+1 < len(args) {
				dir = &args[i+1]
				i++
			}
		}
	}
	if !extracting {
		return
	}
	if dir == nil {
		dir = &shell.Field{S: "."}
	}
	a.writeTarget(base, *dir, st, false)
}

func (a *analysis) download(prog string, t shell.Field, st *shell.State) {
	a.writeTarget(prog, t, st, false)
	st.Downloads[a.ctx.resolve(t.S, st.Cwd).Key()] = true
}

func (a *analysis) curl(c call) shell.Stream {
	st, o := c.st, c.opts()
	urls := append(append([]shell.Field(nil), o.Operands...), o.Values("--url")...)
	for _, u := range urls {
		a.p.checkShellURL(a.v, "curl", u.S)
		if p, ok := strings.CutPrefix(strings.ToLower(u.S), "file://"); ok {
			a.readTarget("curl", shell.Field{S: "/" + strings.TrimLeft(p, "/")}, st, readOpts{})
		}
	}
	for _, v := range o.Values("-d", "--data", "--data-binary", "--data-ascii", "--data-urlencode", "--json") {
		if f := fileRef(v.S); f != "" && f != "-" &&
			(strings.HasPrefix(v.S, "@") || strings.Contains(v.S, "@") && !strings.Contains(v.S, "=")) {
			a.readTarget("curl", shell.Field{S: f}, st, readOpts{})
		}
	}
	for _, v := range o.Values("-F", "--form") {
		if f := fileRef(v.S); f != "" && f != "-" {
			a.readTarget("curl", shell.Field{S: f}, st, readOpts{})
		}
	}
	for _, v := range o.Values("-T", "--upload-file", "-K", "--config", "-E", "--cert", "--key", "--netrc-file") {
		if v.S != "-" && v.S != "." {
			a.readTarget("curl", v, st, readOpts{})
		}
	}
	for _, v := range o.Values("-D", "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii", "--stderr") {
		if v.S != "-" {
			a.writeTarget("curl", v, st, false)
		}
	}
	stdout := true
	dir := shell.Field{S: "."}
	if d, ok := o.Value("--output-dir"); ok {
		dir = d
	}
	for _, v := range o.Values("-o", "--output") {
		if v.S == "-" {
			continue
		}
		stdout = false
		if o.Has("--output-dir") && !strings.HasPrefix(v.S, "/") {
			v.S = dir.S + "/" + v.S
		}
		a.download("curl", v, st)
	}
	if o.Has("-O", "--remote-name", "--remote-name-all", "-J", "--remote-header-name") {
		stdout = false
		for _, u := range urls {
			a.download("curl", shell.Field{S: dir.S + "/" + lastSeg(u.S)}, st)
		}
	}
	return shell.Stream{Download: stdout && len(urls) > 0}
}

func (a *analysis) wget(c call) shell.Stream {
	st, o := c.st, c.opts()
	urls := o.Operands
	for _, u := range urls {
		a.p.checkShellURL(a.v, "wget", u.S)
	}
	for _, v := range o.Values("--post-file", "--body-file", "-i", "--input-file", "--load-cookies", "--certificate", "--private-key") {
		if v.S != "-" {
			a.readTarget("wget", v, st, readOpts{})
		}
	}
	for _, v := range o.Values("-o", "--output-file", "-a", "--append-output", "--save-cookies") {
		a.writeTarget("wget", v, st, false)
	}
	if v, ok := o.Value("-O", "--output-document"); ok {
		if v.S == "-" {
			return shell.Stream{Download: true}
		}
		a.download("wget", v, st)
		return shell.Stream{}
	}
	dir := "."
	if d, ok := o.Value("-P", "--directory-prefix"); ok {
		dir = d.S
	}
	for _, u := range urls {
		a.download("wget", shell.Field{S: dir + "/" + lastSeg(u.S)}, st)
	}
	return shell.Stream{}
}

// lastSeg is the file name a download to "the remote name" gets.
func lastSeg(url string) string {
	u := url
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
	}
	u, _, _ = strings.Cut(u, "?")
	u, _, _ = strings.Cut(u, "#")
	_, p, ok := strings.Cut(u, "/")
	if !ok {
		return "index.html"
	}
	b := path.Base("/" + p)
	if b == "/" || b == "." {
		return "index.html"
	}
	return b
}

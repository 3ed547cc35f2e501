package pretool

import (
	"strings"
)

// writeTarget checks one path a command writes (devices first).
func (a *analysis) writeTarget(what string, t field, st *state, recursive bool) {
	f := a.ctx.resolve(t.s, st.cwd)
	f.glob = t.glob
	if isDevice(f) {
		a.say(a.p.Actions.Destructive, msgDeviceWrite, detail{what: what, path: f.String()})
		return
	}
	a.p.checkWrite(a.v, a.ctx, f, writeOpts{what: what, recursive: recursive})
}

// readTarget checks one path a command reads.
func (a *analysis) readTarget(what string, t field, st *state, o readOpts) {
	if t.proc != nil {
		return
	}
	f := a.ctx.resolve(t.s, st.cwd)
	f.glob = t.glob
	o.what = what
	a.p.checkRead(a.v, a.ctx, f, o)
}

func (a *analysis) readOperands(what string, ts []field, st *state, o readOpts) {
	for _, t := range ts {
		a.readTarget(what, t, st, o)
	}
}

// Programs that read everything beneath their operands.
var recursiveReaders = set("tar", "zip", "7z", "7za", "rg", "ag", "ack", "rsync", "scp")

// genericReads treats every operand (and --option=value) of a program the
// analysis has no model of as a file it may read: cat, less, head, tail,
// grep, … of a secrets file needs the human; claimcheck's own files are
// refused.
func (a *analysis) genericReads(base string, argv []field, st *state) {
	o := readOpts{namesOnly: namesOnly[base], recursive: recursiveReaders[base]}
	args := argv[1:]
	skipPattern := patternFirst[base]
	for _, f := range args {
		if patternFirst[base] && (f.s == "-e" || f.s == "--regexp" || f.s == "-f" || f.s == "--file" || f.s == "--from-file") {
			skipPattern = false
		}
		if strings.HasPrefix(f.s, "-") && len(f.s) > 1 && !strings.HasPrefix(f.s, "--") && strings.ContainsAny(f.s, "rR") && (base == "grep" || base == "egrep" || base == "fgrep" || base == "zgrep") {
			o.recursive = true
		}
		if f.s == "--recursive" {
			o.recursive = true
		}
	}
	skipNext := false
	for _, f := range args {
		s := f.s
		if skipNext {
			skipNext = false
			continue
		}
		if strings.HasPrefix(s, "-") && len(s) > 1 {
			if patternFirst[base] && (s == "-e" || s == "--regexp") {
				skipNext = true
				continue
			}
			if _, v, ok := strings.Cut(s, "="); ok && strings.HasPrefix(s, "--") {
				a.readTarget(base, field{s: fileRef(base, v), glob: f.glob}, st, o)
			}
			continue
		}
		if skipPattern {
			skipPattern = false
			continue
		}
		if downloaders[base] {
			s = fileRef(base, s)
		}
		a.readTarget(base, field{s: s, glob: f.glob, proc: f.proc}, st, o)
	}
}

// fileRef extracts the file of an upload argument: @file, name=@file,
// name=<file (curl, HTTPie).
func fileRef(prog, s string) string {
	if !downloaders[prog] {
		return s
	}
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

// remove handles rm and friends.
func (a *analysis) remove(base string, argv []field, st *state) {
	o := parse(argv[1:], optSpec{})
	recursive := base == "trash" || base == "trash-put" || o.has("-r", "-R", "--recursive")
	targets := o.operands
	if base == "gio" {
		if len(targets) == 0 || targets[0].s != "trash" && targets[0].s != "remove" {
			return
		}
		targets, recursive = targets[1:], true
	}
	for _, t := range targets {
		if a.stop() {
			return
		}
		a.deleteTarget(argv, t, st, recursive)
	}
}

// deleteTarget checks one path a command deletes (or moves away).
func (a *analysis) deleteTarget(argv []field, t field, st *state, recursive bool) {
	f := a.ctx.resolve(t.s, st.cwd)
	f.glob = t.glob
	if recursive {
		if a.ctx.isRoot(a.p.c.roots, f) {
			a.say(a.p.Actions.Destructive, msgRmRoot, detail{cmd: cmdText(argv), path: f.String()})
			return
		}
		if strings.Contains(t.s, unknownMaybeEmpty) {
			w := a.ctx.resolve(strings.ReplaceAll(t.s, unknownMaybeEmpty, ""), st.cwd)
			w.glob = t.glob
			if a.ctx.isRoot(a.p.c.roots, w) {
				a.say(a.p.Actions.Dynamic, msgRmEmptyVariable, detail{cmd: cmdText(argv), path: w.String()})
			}
		} else if !f.abs && st.cwd == "" && vague(f) {
			a.say(a.p.Actions.Dynamic, msgRmUnknownDir, detail{cmd: cmdText(argv), path: quote(t.s)})
		}
	}
	a.p.checkWrite(a.v, a.ctx, f, writeOpts{what: baseName(argv[0].s), recursive: recursive})
}

// vague reports a relative target that names a whole directory: ., ..,
// ../.., or a glob over its entries.
func vague(f fpath) bool {
	if len(f.segs) == 0 {
		return true
	}
	if len(f.segs) == 1 && f.glob && hasMeta(f.segs[0]) {
		return true
	}
	for _, s := range f.segs {
		if s != ".." {
			return false
		}
	}
	return true
}

func (a *analysis) move(argv []field, st *state) {
	o := parse(argv[1:], optSpec{short: "tS", long: []string{"target-directory", "suffix"}})
	srcs := o.operands
	dest, ok := o.value("-t", "--target-directory")
	if !ok {
		if len(srcs) < 2 {
			return
		}
		dest, srcs = srcs[len(srcs)-1], srcs[:len(srcs)-1]
	}
	for _, s := range srcs {
		a.deleteTarget(argv, s, st, true)
	}
	a.writeTarget("mv", dest, st, false)
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
func (a *analysis) copy(base string, argv []field, st *state) {
	var spec optSpec
	switch base {
	case "cp", "ln":
		spec = optSpec{short: "tS", long: []string{"target-directory", "suffix"}}
	case "install":
		spec = optSpec{short: "gmoStT", long: []string{"group", "mode", "owner", "suffix", "target-directory", "strip-program"}}
	case "rsync":
		spec = optSpec{short: "eBfMT", long: []string{"rsh", "filter", "exclude", "include", "exclude-from", "include-from", "files-from", "temp-dir", "log-file", "password-file", "backup-dir", "link-dest", "compare-dest", "copy-dest", "chmod", "chown", "partial-dir", "block-size", "max-size", "min-size", "timeout", "port", "out-format", "bwlimit", "suffix", "max-delete", "info", "debug"}}
	case "scp":
		spec = optSpec{short: "cFiJlopPSDX"}
	}
	o := parse(argv[1:], spec)
	for _, f := range o.values("-i", "--exclude-from", "--include-from", "--files-from", "--password-file", "-F") {
		a.readTarget(base, f, st, readOpts{})
	}
	for _, f := range o.values("--log-file") {
		a.writeTarget(base, f, st, false)
	}
	recursive := base == "rsync" || o.has("-r", "-R", "-a", "--recursive", "--archive")
	ops := o.operands
	if base == "install" && o.has("-d", "--directory") {
		for _, t := range ops {
			a.writeTarget(base, t, st, false)
		}
		return
	}
	dest, ok := o.value("-t", "--target-directory")
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
			if (base == "rsync" || base == "scp") && isRemote(s.s) {
				continue
			}
			a.readTarget(base, s, st, readOpts{recursive: recursive})
		}
	}
	if (base == "rsync" || base == "scp") && isRemote(dest.s) {
		return
	}
	deletes := false
	for _, op := range o.list {
		if strings.HasPrefix(op.name, "--delete") || op.name == "--remove-source-files" {
			deletes = true
		}
	}
	if base == "rsync" && deletes {
		a.deleteTarget(argv, dest, st, true)
		return
	}
	a.writeTarget(base, dest, st, false)
}

func (a *analysis) dd(argv []field, st *state) {
	for _, f := range argv[1:] {
		k, v, ok := strings.Cut(f.s, "=")
		if !ok {
			continue
		}
		t := field{s: v, glob: f.glob, dyn: f.dyn}
		switch k {
		case "if":
			a.readTarget("dd", t, st, readOpts{})
		case "of":
			if p := a.ctx.resolve(v, st.cwd); isDevice(p) {
				a.say(a.p.Actions.Destructive, msgDDDevice, detail{cmd: cmdText(argv), path: p.String()})
				return
			}
			a.writeTarget("dd", t, st, false)
		}
	}
}

func (a *analysis) sed(argv []field, st *state) {
	args := argv[1:]
	inPlace, script := false, false
	var operands []field
	for i := 0; i < len(args); i++ {
		s := args[i].s
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
					if s == "-i" && i+1 < len(args) && args[i+1].s == "" {
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

func (a *analysis) chmod(base string, argv []field, st *state) {
	args := argv[1:]
	recursive, hasMode := false, base != "chattr" && base != "setfacl"
	var operands []field
	optChars := "Rcfv"
	if base == "chown" || base == "chgrp" {
		optChars = "RcfvhHLP"
	}
	for i := 0; i < len(args); i++ {
		s := args[i].s
		switch {
		case s == "--":
			operands = append(operands, args[i+1:]...)
			i = len(args)
		case s == "--recursive":
			recursive = true
		case strings.HasPrefix(s, "--reference"):
			hasMode = false
		case strings.HasPrefix(s, "--"):
			if base == "setfacl" && !strings.Contains(s, "=") && (s == "--set" || s == "--set-file" || s == "--modify" || s == "--modify-file" || s == "--remove" || s == "--remove-file") {
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
		f := a.ctx.resolve(t.s, st.cwd)
		f.glob = t.glob
		if recursive && a.ctx.isRoot(a.p.c.roots, f) {
			a.say(a.p.Actions.Destructive, m, detail{cmd: cmdText(argv), path: f.String()})
			return
		}
		a.writeTarget(base, t, st, recursive)
	}
}

// find: -delete and -exec run on its start points; a start point that is
// a system root makes them destructive.
func (a *analysis) find(argv []field, st *state, depth int) stream {
	args := argv[1:]
	i := 0
	for i < len(args) {
		s := args[i].s
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
	var roots []field
	for ; i < len(args); i++ {
		s := args[i].s
		if strings.HasPrefix(s, "-") || s == "(" || s == "!" || s == "," || s == ")" {
			break
		}
		roots = append(roots, args[i])
	}
	if len(roots) == 0 {
		roots = []field{{s: "."}}
	}
	for _, r := range roots {
		a.readTarget("find", r, st, readOpts{namesOnly: true})
	}
	var expr []field
	if i < len(args) {
		expr = args[i:]
	}
	del := false
	for j := 0; j < len(expr) && !a.stop(); j++ {
		switch expr[j].s {
		case "-delete":
			del = true
		case "-exec", "-execdir", "-ok", "-okdir":
			end := j + 1
			for end < len(expr) && expr[end].s != ";" && expr[end].s != "+" {
				end++
			}
			inner := expr[j+1 : end]
			for k, r := range roots {
				if k == 4 || len(inner) == 0 {
					break
				}
				sub := st.clone()
				sub.stdin = stream{}
				a.run(substitute(inner, "{}", r), sub, depth)
			}
			j = end
		case "-fprint", "-fprint0", "-fls":
			if j+1 < len(expr) {
				a.writeTarget("find", expr[j+1], st, false)
				j++
			}
		case "-fprintf":
			if j+1 < len(expr) {
				a.writeTarget("find", expr[j+1], st, false)
				j += 2
			}
		}
	}
	if del {
		for _, r := range roots {
			f := a.ctx.resolve(r.s, st.cwd)
			f.glob = r.glob
			if a.ctx.isRoot(a.p.c.roots, f) {
				a.say(a.p.Actions.Destructive, msgFindDelete, detail{cmd: cmdText(argv), path: f.String()})
				break
			}
			a.p.checkWrite(a.v, a.ctx, f, writeOpts{what: "find -delete", recursive: true})
		}
	}
	out := stream{}
	for _, r := range roots {
		out.items = append(out.items, r.s)
	}
	return out
}

// substitute replaces repl in each word with item (find -exec {}, xargs -I).
func substitute(argv []field, repl string, item field) []field {
	out := make([]field, len(argv))
	for i, f := range argv {
		if repl != "" && strings.Contains(f.s, repl) {
			g := mergeField(f, item)
			g.s = strings.ReplaceAll(f.s, repl, item.s)
			f = g
		}
		out[i] = f
	}
	return out
}

func (a *analysis) xargs(argv []field, st *state, depth int) stream {
	o := parse(argv[1:], optSpec{short: "aEdILnPs", long: []string{"arg-file", "delimiter", "eof", "max-lines", "max-args", "max-procs", "max-chars", "process-slot-var"}, stopAtOperand: true})
	inner := o.rest
	if len(inner) == 0 {
		inner = []field{{s: "echo"}}
	}
	repl := ""
	if v, ok := o.value("-I", "--replace"); ok {
		repl = v.s
	} else if o.has("-i") {
		repl = "{}"
	}
	items := st.stdin.items
	if items == nil && st.stdin.static != nil {
		items = strings.Fields(*st.stdin.static)
	}
	if o.has("-a", "--arg-file") {
		items = nil
	}
	sub := st.clone()
	sub.stdin = stream{}
	if len(items) == 0 {
		if st.stdin.download || st.stdin.decoded {
			// The items come from the network or a decoder.
			item := field{s: unknownMaybeEmpty, dyn: true, download: st.stdin.download, decoded: st.stdin.decoded}
			if repl != "" {
				return a.run(substitute(inner, repl, item), sub, depth)
			}
			return a.run(append(append([]field(nil), inner...), item), sub, depth)
		}
		return a.run(inner, sub, depth)
	}
	for k, it := range items {
		if k == 4 || a.stop() {
			break
		}
		item := field{s: it}
		args := append([]field(nil), inner...)
		if repl != "" {
			args = substitute(inner, repl, item)
		} else {
			args = append(args, item)
		}
		a.run(args, sub, depth)
	}
	return stream{}
}

// extract handles tar and unzip: what they read, and the directory they
// extract into.
func (a *analysis) extract(base string, argv []field, st *state) {
	a.genericReads(base, argv, st)
	args := argv[1:]
	extracting := base == "unzip"
	var dir *field
	for i := 0; i < len(args); i++ {
		s := args[i].s
		switch {
		case s == "--extract" || s == "--get":
			extracting = true
		case s == "--directory" || s == "-d" && base == "unzip":
			if i+1 < len(args) {
				dir = &args[i+1]
				i++
			}
		case strings.HasPrefix(s, "--directory="):
			dir = &field{s: strings.TrimPrefix(s, "--directory=")}
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
		dir = &field{s: "."}
	}
	a.writeTarget(base, *dir, st, false)
}

func (a *analysis) download(prog string, t field, st *state) {
	a.writeTarget(prog, t, st, false)
	st.downloads[a.ctx.resolve(t.s, st.cwd).key()] = true
}

func (a *analysis) curl(argv []field, st *state) stream {
	o := parse(argv[1:], optSpec{short: "AbcCdDeEFHKmoPQrTtuUwxXyYz", long: []string{
		"output", "output-dir", "data", "data-binary", "data-raw", "data-ascii", "data-urlencode", "form", "form-string",
		"upload-file", "config", "cert", "key", "cacert", "capath", "header", "user", "user-agent", "referer", "request",
		"url", "cookie", "cookie-jar", "proxy", "resolve", "connect-to", "max-time", "retry", "write-out", "dump-header",
		"trace", "trace-ascii", "stderr", "netrc-file", "range", "limit-rate", "interface", "connect-timeout", "json",
	}})
	urls := append(append([]field(nil), o.operands...), o.values("--url")...)
	for _, u := range urls {
		a.p.checkShellURL(a.v, "curl", u.s)
		if p, ok := strings.CutPrefix(strings.ToLower(u.s), "file://"); ok {
			a.readTarget("curl", field{s: "/" + strings.TrimLeft(p, "/")}, st, readOpts{})
		}
	}
	for _, v := range o.values("-d", "--data", "--data-binary", "--data-ascii", "--data-urlencode", "--json") {
		if f := fileRef("curl", v.s); f != "" && f != "-" && (strings.HasPrefix(v.s, "@") || strings.Contains(v.s, "@") && !strings.Contains(v.s, "=")) {
			a.readTarget("curl", field{s: f}, st, readOpts{})
		}
	}
	for _, v := range o.values("-F", "--form") {
		if f := fileRef("curl", v.s); f != "" && f != "-" {
			a.readTarget("curl", field{s: f}, st, readOpts{})
		}
	}
	for _, v := range o.values("-T", "--upload-file", "-K", "--config", "-E", "--cert", "--key", "--netrc-file") {
		if v.s != "-" && v.s != "." {
			a.readTarget("curl", v, st, readOpts{})
		}
	}
	for _, v := range o.values("-D", "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii", "--stderr") {
		if v.s != "-" {
			a.writeTarget("curl", v, st, false)
		}
	}
	stdout := true
	dir := field{s: "."}
	if d, ok := o.value("--output-dir"); ok {
		dir = d
	}
	for _, v := range o.values("-o", "--output") {
		if v.s == "-" {
			continue
		}
		stdout = false
		if o.has("--output-dir") && !strings.HasPrefix(v.s, "/") {
			v.s = dir.s + "/" + v.s
		}
		a.download("curl", v, st)
	}
	if o.has("-O", "--remote-name", "--remote-name-all", "-J", "--remote-header-name") {
		stdout = false
		for _, u := range urls {
			a.download("curl", field{s: dir.s + "/" + lastSeg(u.s)}, st)
		}
	}
	return stream{download: stdout && len(urls) > 0}
}

func (a *analysis) wget(argv []field, st *state) stream {
	o := parse(argv[1:], optSpec{short: "OoaiBtTwQPlARDIXUe", long: []string{
		"output-document", "output-file", "append-output", "input-file", "base", "tries", "timeout", "wait", "quota",
		"directory-prefix", "level", "accept", "reject", "domains", "include-directories", "exclude-directories",
		"user-agent", "execute", "post-file", "body-file", "header", "user", "password", "load-cookies", "save-cookies",
		"ca-certificate", "certificate", "private-key", "post-data", "method", "referer",
	}})
	urls := o.operands
	for _, u := range urls {
		a.p.checkShellURL(a.v, "wget", u.s)
	}
	for _, v := range o.values("--post-file", "--body-file", "-i", "--input-file", "--load-cookies", "--certificate", "--private-key") {
		if v.s != "-" {
			a.readTarget("wget", v, st, readOpts{})
		}
	}
	for _, v := range o.values("-o", "--output-file", "-a", "--append-output", "--save-cookies") {
		a.writeTarget("wget", v, st, false)
	}
	if v, ok := o.value("-O", "--output-document"); ok {
		if v.s == "-" {
			return stream{download: true}
		}
		a.download("wget", v, st)
		return stream{}
	}
	dir := "."
	if d, ok := o.value("-P", "--directory-prefix"); ok {
		dir = d.s
	}
	for _, u := range urls {
		a.download("wget", field{s: dir + "/" + lastSeg(u.s)}, st)
	}
	return stream{}
}

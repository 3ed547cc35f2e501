package command

import (
	"path"
	"slices"
	"strings"

	"github.com/claimcheck/claimcheck/pkg/shell"
)

// Move is what one program invocation does to the working tree the
// session changed, as far as a run of its tests is concerned.
type Move struct {
	// SetsAside says why it takes the session's uncommitted changes out
	// of the tree (git stash, git checkout <rev>, git reset --hard, …).
	SetsAside string
	// Restores says why it brings changes set aside back (git stash pop).
	Restores string
	// Copies is set for a copy of the tree to another place (cp -r .,
	// rsync, git clone, git worktree add, git archive): Dest is where
	// ("" when the line does not say), Why what made it.
	Copies bool
	Dest   string
	Why    string
}

// Moved reports whether the move changes what a later run of the tests
// sees (a staleness point, as an edit is).
func (m Move) Moved() bool { return m.SetsAside != "" || m.Restores != "" || m.Copies }

// MoveOf reads one program invocation, a program and its arguments as
// Call.Programs gives them.
func MoveOf(prog []string) Move {
	if len(prog) == 0 {
		return Move{}
	}
	name := baseName(prog[0])
	if !moverNames[name] {
		return Move{}
	}
	quoted := "`" + shell.Display(strings.Join(prog, " ")) + "`"
	switch name {
	case "git":
		return gitMove(prog[1:], quoted)
	case "cp":
		ops, opts := operands(prog[1:])
		recursive := slices.ContainsFunc(opts, func(o string) bool {
			return o == "--recursive" || o == "--archive" || !strings.HasPrefix(o, "--") && strings.ContainsAny(o, "raR")
		})
		if recursive && len(ops) >= 2 && slices.ContainsFunc(ops[:len(ops)-1], isTreeRoot) {
			return Move{Copies: true, Dest: ops[len(ops)-1], Why: quoted + " copies the tree"}
		}
	case "rsync":
		ops, _ := operands(prog[1:])
		if len(ops) >= 2 && slices.ContainsFunc(ops[:len(ops)-1], isTreeRoot) {
			return Move{Copies: true, Dest: ops[len(ops)-1], Why: quoted + " copies the tree"}
		}
	}
	return Move{}
}

// isTreeRoot: a source that is the whole working directory.
func isTreeRoot(s string) bool {
	switch strings.TrimSuffix(s, "/") {
	case ".", "", "*", "./*", "./.", "$PWD", "${PWD}", "$(pwd)":
		return true
	}
	return false
}

// gitGlobals are git's options before the subcommand that take a value.
var gitGlobals = []string{"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"}

func gitMove(args []string, quoted string) Move {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		if slices.Contains(gitGlobals, args[0]) {
			args = args[1:]
		}
		args = args[1:]
	}
	if len(args) == 0 {
		return Move{}
	}
	sub, rest := args[0], args[1:]
	ops, opts := operands(rest)
	has := func(names ...string) bool {
		return slices.ContainsFunc(opts, func(o string) bool {
			k, _, _ := strings.Cut(o, "=")
			return slices.Contains(names, k)
		})
	}
	switch sub {
	case "stash":
		if len(ops) == 0 || ops[0] == "push" || ops[0] == "save" {
			return Move{SetsAside: quoted + " stashes the uncommitted changes"}
		}
		if ops[0] == "pop" || ops[0] == "apply" {
			return Move{Restores: quoted + " brings stashed changes back"}
		}
	case "checkout":
		switch {
		case slices.Contains(rest, "--") || slices.ContainsFunc(ops, func(o string) bool { return strings.ContainsAny(o, "./*") }):
			return Move{SetsAside: quoted + " replaces files with their committed versions"}
		case len(ops) == 1 && ops[0] == "-":
			return Move{Restores: quoted + " goes back to the previous branch"}
		case has("-b", "-B", "--orphan") && len(ops) <= 1:
			return Move{}
		case len(ops) > 0 || has("--detach"):
			return Move{SetsAside: quoted + " checks out another revision"}
		}
	case "switch":
		switch {
		case len(ops) == 1 && ops[0] == "-":
			return Move{Restores: quoted + " goes back to the previous branch"}
		case has("-c", "-C", "--create", "--force-create") && len(ops) <= 1:
			return Move{}
		case len(ops) > 0 || has("--detach", "--orphan"):
			return Move{SetsAside: quoted + " switches to another revision"}
		}
	case "reset":
		if has("--hard", "--keep", "--merge") {
			return Move{SetsAside: quoted + " resets the working tree"}
		}
		if len(ops) > 0 && !slices.Contains(rest, "--") && looksLikeRev(ops[0]) && !has("--soft") {
			return Move{SetsAside: quoted + " moves to another revision"}
		}
	case "restore":
		if has("--source", "-s") {
			return Move{SetsAside: quoted + " restores files from another revision"}
		}
		if !has("--staged", "-S") || has("--worktree", "-W") {
			return Move{SetsAside: quoted + " discards changes to the files"}
		}
	case "worktree":
		if len(ops) >= 2 && ops[0] == "add" {
			return Move{Copies: true, Dest: ops[1], Why: quoted + " checks out a committed revision elsewhere"}
		}
	case "clone":
		if len(ops) >= 1 && (isTreeRoot(ops[0]) || strings.HasPrefix(ops[0], "/") || strings.HasPrefix(ops[0], "..") ||
			strings.HasPrefix(ops[0], "file://")) {
			dest := ""
			if len(ops) >= 2 {
				dest = ops[1]
			}
			return Move{Copies: true, Dest: dest, Why: quoted + " clones the committed tree"}
		}
	case "archive":
		return Move{Copies: true, Why: quoted + " exports the committed tree"}
	}
	return Move{}
}

// looksLikeRev: HEAD~1, main^, origin/main, a commit id.
func looksLikeRev(s string) bool {
	if strings.HasPrefix(s, "HEAD") || strings.HasPrefix(s, "@") || strings.ContainsAny(s, "~^") || strings.HasPrefix(s, "origin/") {
		return true
	}
	return len(s) >= 7 && len(s) <= 40 && strings.Trim(s, "0123456789abcdef") == ""
}

// Run is one run of a wanted program in a command line: where it ran and
// what the line had done to the tree before it.
type Run struct {
	Prog []string // the program and its arguments (Call.Programs)
	// Dir is the directory it ran in, absolute; "" when the line moved
	// somewhere the reading cannot know.
	Dir string
	// Moved names what put it in Dir ("cd ../x", "make -C sub"), "" when
	// it ran where the line started.
	Moved string
	// SetAside says why the session's changes were out of the way when it
	// ran: a move earlier in the line not undone before it, or a copy of
	// the tree it ran in.
	SetAside string
}

// RunsOf returns the runs of want (from Want) in line, a command run in
// cwd (absolute, or "" when unknown), in the order they run: a Tree that
// reads one line.
func RunsOf(line, cwd string, want []string) []Run {
	var t Tree
	runs, _ := t.Line(line, cwd, want)
	return runs
}

// Tree follows what a session's command lines do to its working tree,
// line after line: changes set aside (git stash) and not yet brought back,
// copies of the tree made elsewhere. The zero Tree has done nothing.
type Tree struct {
	aside  string
	copies []copied
}

type copied struct{ dest, why string }

// Line reads one command line run in cwd (absolute, or "" when unknown)
// with the shell model (shell.Trace) and returns the runs of want (from
// Want) in it, in order, and the last move of the tree it made (Move:
// set aside, brought back, copied; "" when none). cd, pushd, popd,
// subshells and env -C move the directory, and so do the runners' own
// options (RunDir).
func (t *Tree) Line(line, cwd string, want []string) (runs []Run, moved string) {
	return t.Traced(shell.Trace(line, cwd), cwd, want)
}

// Traced is Line over a line already traced (shell.Trace of the line and
// cwd): for callers that read the same line again for other claims.
func (t *Tree) Traced(tr shell.Traced, cwd string, want []string) (runs []Run, moved string) {
	start := ""
	if strings.HasPrefix(cwd, "/") {
		start = "/" + strings.Join(shell.SplitPath(cwd), "/")
	}
	for _, c := range tr.Calls {
		argv := make([]string, len(c.Argv))
		for i, f := range c.Argv {
			argv[i] = f.S
		}
		progs := shell.Programs(argv)
		m := MoveOf(progs[len(progs)-1])
		switch {
		case m.SetsAside != "":
			t.aside, moved = m.SetsAside, m.SetsAside
		case m.Restores != "":
			t.aside, moved = "", m.Restores
		case m.Copies:
			dest := ""
			if m.Dest != "" {
				dest = shell.ChdirTo(shell.Field{S: m.Dest}, c.Cwd)
			}
			t.copies = append(t.copies, copied{dest, m.Why})
			moved = m.Why
		}
		if len(want) == 0 {
			continue
		}
		for i, prog := range progs {
			if !hasPrefix(prog, want) {
				continue
			}
			r := Run{Prog: prog, Dir: c.Cwd, Moved: c.Moved, SetAside: t.aside}
			for _, p := range progs[:i+1] {
				if d, flag := RunDir(p); flag != "" {
					r.Dir, r.Moved = shell.ChdirTo(shell.Field{S: d}, r.Dir), flag
				}
			}
			for _, cp := range t.copies {
				if r.SetAside == "" && (cp.dest != "" && r.Dir != "" && within(r.Dir, cp.dest) || cp.dest == "" && r.Dir != start) {
					r.SetAside = "it ran in a copy: " + cp.why
				}
			}
			runs = append(runs, r)
			break
		}
	}
	// A copy to a place the line does not name is followed in the line
	// only.
	t.copies = slices.DeleteFunc(t.copies, func(c copied) bool { return c.dest == "" })
	return runs, moved
}

// moverNames are the programs MoveOf reads.
var moverNames = map[string]bool{"git": true, "cp": true, "rsync": true}

// MovesTree reports whether some program of calls moves the tree
// (MoveOf): a quick test before reading a line with Tree.Line.
func MovesTree(calls []Call) bool {
	for _, c := range calls {
		if !slices.ContainsFunc(c.Argv, func(a string) bool { return moverNames[baseName(a)] }) {
			continue
		}
		progs := c.Programs()
		if MoveOf(progs[len(progs)-1]).Moved() {
			return true
		}
	}
	return false
}

// within reports whether dir is root or below it (both absolute, clean).
func within(dir, root string) bool {
	return dir == root || root == "/" || strings.HasPrefix(dir, root+"/")
}

// Within reports whether dir is root or below it (both absolute).
func Within(dir, root string) bool {
	clean := func(s string) string { return "/" + strings.Join(shell.SplitPath(s), "/") }
	return within(clean(dir), clean(root))
}

// RunDir returns the directory a runner's own options make it run in
// (relative as written, or absolute) and the option as written; flag is ""
// when it has none: go -C dir, make -C dir / -f dir/Makefile, just
// -d dir / -f dir/justfile, npm/pnpm/yarn --prefix, -C, --dir, --cwd,
// cargo --manifest-path dir/Cargo.toml, mvn -f dir[/pom.xml], gradle
// -p dir.
func RunDir(prog []string) (dir, flag string) {
	if len(prog) < 2 {
		return "", ""
	}
	name, args := baseName(prog[0]), prog[1:]
	var dirOpts, fileOpts []string
	switch name {
	case "go":
		dirOpts = []string{"-C"} // only before the subcommand
		if !strings.HasPrefix(args[0], "-C") {
			return "", ""
		}
	case "make", "gmake":
		dirOpts, fileOpts = []string{"-C", "--directory"}, []string{"-f", "--file", "--makefile"}
	case "just":
		dirOpts, fileOpts = []string{"-d", "--working-directory"}, []string{"-f", "--justfile"}
	case "npm", "npx":
		dirOpts = []string{"--prefix"}
	case "pnpm":
		dirOpts = []string{"--prefix", "-C", "--dir"}
	case "yarn":
		dirOpts = []string{"--cwd"}
	case "bun":
		dirOpts = []string{"--cwd"}
	case "cargo":
		fileOpts = []string{"--manifest-path"}
	case "mvn", "mvnw", "./mvnw":
		fileOpts = []string{"-f", "--file"}
	case "gradle", "gradlew", "./gradlew":
		dirOpts = []string{"-p", "--project-dir"}
	default:
		return "", ""
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		for _, o := range append(slices.Clone(dirOpts), fileOpts...) {
			v, ok := "", false
			switch {
			case a == o && i+1 < len(args):
				v, ok = args[i+1], true
			case strings.HasPrefix(o, "--") && strings.HasPrefix(a, o+"="):
				v, ok = a[len(o)+1:], true
			case !strings.HasPrefix(o, "--") && len(a) > len(o) && strings.HasPrefix(a, o):
				v, ok = a[len(o):], true
			}
			if !ok {
				continue
			}
			flag = o + " " + v
			if slices.Contains(fileOpts, o) && name != "mvn" && !strings.HasSuffix(name, "mvnw") || strings.HasSuffix(v, ".xml") {
				v = path.Dir(v)
			}
			dir = v
		}
	}
	return dir, flag
}

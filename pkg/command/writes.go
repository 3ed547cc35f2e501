package command

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/claimcheck/claimcheck/pkg/shell"
)

// Writes returns the files a command line writes, as written in it (paths
// relative to its working directory stay relative): redirections (> f,
// >> f, &> f), tee, in-place editors (sed -i, perl -i), cp/mv/install/ln
// destinations, touch, truncate, rm, dd of=, git checkout/restore of
// paths. unknown is true when the line changes files it does not name
// (git apply, git checkout <branch>, git reset --hard, git stash pop,
// patch, a redirection to a computed name). What a program does inside
// (a Python script writing a file) is beyond it.
func Writes(line string) (paths []string, unknown bool) {
	f, err := shell.Parse(line)
	if err != nil {
		return nil, false
	}
	add := func(s string) {
		if s == "" || s == "-" || strings.HasPrefix(s, "/dev/") || slices.Contains(paths, s) {
			return
		}
		paths = append(paths, s)
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.Redirect:
			switch x.Op {
			case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll, syntax.RdrInOut:
				if x.Word == nil {
					return true
				}
				if s, static := shell.Unquote(x.Word); static {
					add(s)
				} else {
					unknown = true
				}
			}
		case *syntax.CallExpr:
			var argv []string
			for _, w := range x.Args {
				s, _ := shell.Unquote(w)
				argv = append(argv, s)
			}
			if len(argv) == 0 {
				return true
			}
			name, prog := Call{Argv: argv}.Program()
			w, u := callWrites(name, prog)
			for _, s := range w {
				add(s)
			}
			unknown = unknown || u
		}
		return true
	})
	return paths, unknown
}

// callWrites: the files one program invocation writes.
func callWrites(name string, argv []string) (paths []string, unknown bool) {
	ops, opts := operands(argv[1:])
	switch name {
	case "tee", "touch", "rm", "unlink", "shred":
		return ops, false
	case "truncate":
		return operandsSkipping(argv[1:], "-s", "--size", "-r", "--reference"), false
	case "sed":
		return sedWrites(argv, ops, opts), false
	case "perl":
		return perlWrites(argv, opts), false
	case "cp", "mv", "install", "ln", "rsync":
		return copyWrites(argv), false
	case "dd":
		for _, a := range argv[1:] {
			if v, ok := strings.CutPrefix(a, "of="); ok {
				paths = append(paths, v)
			}
		}
		return paths, false
	case "patch":
		return nil, true
	case "git":
		return gitWrites(argv, ops)
	}
	return nil, false
}

// sedWrites: the files sed -i edits.
func sedWrites(argv, ops, opts []string) []string {
	if !slices.ContainsFunc(opts, func(o string) bool {
		return strings.HasPrefix(o, "-i") || strings.HasPrefix(o, "--in-place") || len(o) > 1 && o[1] != '-' &&
			strings.Contains(o[1:], "i") && !strings.ContainsAny(o[1:], "ef")
	}) {
		return nil
	}
	if slices.ContainsFunc(opts, func(o string) bool {
		return o == "-e" || o == "-f" || strings.HasPrefix(o, "--expression") || strings.HasPrefix(o, "--file")
	}) {
		return operandsSkipping(argv[1:], "-e", "-f", "--expression", "--file")
	}
	if len(ops) > 0 {
		return ops[1:] // the first operand is the script
	}
	return nil
}

// perlWrites: the files perl -i edits.
func perlWrites(argv, opts []string) (paths []string) {
	// -i, or -i among combined flags (-pi); -M/-m/-I/-x/-d/-V/-C take a
	// value that may hold an i (-Mstrict).
	if !slices.ContainsFunc(opts, func(o string) bool {
		return strings.HasPrefix(o, "-i") || len(o) > 2 && o[1] != '-' &&
			!strings.ContainsAny(o[1:2], "MmIxdVC") && strings.Contains(o, "i")
	}) {
		return nil
	}
	// The code follows -e (also as the last of combined flags, -pe).
	args := argv[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(paths, args[i+1:]...)
		case strings.HasPrefix(a, "-") && len(a) > 1 && a[1] != '-':
			if strings.HasSuffix(a, "e") || strings.HasSuffix(a, "E") {
				i++
			}
		case strings.HasPrefix(a, "-"):
		default:
			paths = append(paths, a)
		}
	}
	return paths
}

// copyWrites: the destination of cp, mv, install, ln and rsync, and the
// files it gets.
func copyWrites(argv []string) (paths []string) {
	ops := operandsSkipping(argv[1:], "-t", "--target-directory", "-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group")
	if t := optionValue(argv[1:], "-t", "--target-directory"); t != "" {
		for _, src := range ops {
			paths = append(paths, path.Join(t, path.Base(src)))
		}
		return append(paths, t)
	}
	if len(ops) < 2 {
		return nil
	}
	dst := ops[len(ops)-1]
	paths = append(paths, dst)
	for _, src := range ops[:len(ops)-1] {
		paths = append(paths, path.Join(dst, path.Base(src)))
	}
	return paths
}

// gitWrites: the files a git command writes, or unknown when it changes
// files it does not name.
func gitWrites(argv, ops []string) (paths []string, unknown bool) {
	if len(ops) == 0 {
		return nil, false
	}
	sub, rest := ops[0], argv[slices.Index(argv, ops[0])+1:]
	switch sub {
	case "checkout", "restore":
		if i := slices.Index(rest, "--"); i >= 0 {
			return rest[i+1:], false
		}
		files, _ := operands(rest)
		if sub == "restore" {
			return files, false
		}
		if slices.Contains(rest, "-b") && len(files) <= 1 {
			return nil, false // a new branch where HEAD is: no file changes
		}
		return nil, true // a branch, or paths git tells apart only by looking
	case "apply", "am", "merge", "rebase", "pull", "cherry-pick", "revert", "switch":
		return nil, true
	case "reset":
		return nil, slices.Contains(rest, "--hard")
	case "stash":
		return nil, len(rest) > 0 && (rest[0] == "pop" || rest[0] == "apply")
	}
	return nil, false
}

// operands splits arguments into operands and options ("--" ends options).
func operands(args []string) (ops, opts []string) {
	for i, a := range args {
		switch {
		case a == "--":
			return append(ops, args[i+1:]...), opts
		case strings.HasPrefix(a, "-") && a != "-":
			opts = append(opts, a)
		default:
			ops = append(ops, a)
		}
	}
	return ops, opts
}

// operandsSkipping is operands without the values of the named options.
func operandsSkipping(args []string, valued ...string) []string {
	var ops []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(ops, args[i+1:]...)
		case slices.Contains(valued, a):
			i++
		case strings.HasPrefix(a, "-") && a != "-":
		default:
			ops = append(ops, a)
		}
	}
	return ops
}

func optionValue(args []string, names ...string) string {
	for i, a := range args {
		for _, n := range names {
			if a == n && i+1 < len(args) {
				return args[i+1]
			}
			if v, ok := strings.CutPrefix(a, n+"="); ok && strings.HasPrefix(n, "--") {
				return v
			}
		}
	}
	return ""
}

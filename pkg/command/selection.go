package command

import (
	"path"
	"regexp"
	"slices"
	"strings"
)

// Selection is what a test run selects from its command line: the
// packages or paths it runs and the filters on test names. Known is false
// for a runner whose selection this reading does not follow (make, npm,
// jest, cargo, …): such a run covers everything.
type Selection struct {
	Runner  string   // "go" or "pytest"
	Targets []string // go: packages as written ("." when none); pytest: paths and node ids (none: all)
	Run     string   // go -run
	Skip    string   // go -skip
	K       string   // pytest -k
	Known   bool
}

// SelectionOf reads the selection of prog, a program and its arguments as
// Call.Programs gives them.
func SelectionOf(prog []string) Selection {
	if len(prog) == 0 {
		return Selection{}
	}
	switch name, args := baseName(prog[0]), prog[1:]; {
	case name == "go" && len(args) > 0 && args[0] == "test":
		return goSelection(args[1:])
	case name == "pytest" || name == "py.test":
		return pytestSelection(args)
	}
	return Selection{}
}

// goTestValued are go test's (and go build's) flags that take a value.
var goTestValued = []string{"run", "skip", "bench", "benchtime", "count", "cpu", "parallel", "timeout", "coverprofile",
	"covermode", "coverpkg", "cpuprofile", "memprofile", "blockprofile", "mutexprofile", "outputdir", "o", "p", "tags",
	"ldflags", "gcflags", "asmflags", "mod", "modfile", "exec", "vet", "shuffle", "fuzz", "fuzztime", "fuzzminimizetime",
	"trace", "overlay", "pgo", "toolexec", "C", "list"}

func goSelection(args []string) Selection {
	s := Selection{Runner: "go", Known: true}
	if i := slices.Index(args, "-args"); i >= 0 {
		args = args[:i]
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			s.Targets = append(s.Targets, a)
			continue
		}
		flag, value, has := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !has && slices.Contains(goTestValued, flag) && i+1 < len(args) {
			i++
			value = args[i]
		}
		switch flag {
		case "run":
			s.Run = value
		case "skip":
			s.Skip = value
		}
	}
	if len(s.Targets) == 0 {
		s.Targets = []string{"."}
	}
	return s
}

// pytestValued are pytest's options that take a value.
var pytestValued = []string{"-k", "-m", "-p", "-c", "-o", "--rootdir", "--ignore", "--ignore-glob", "--deselect", "--maxfail",
	"--tb", "--durations", "--junitxml", "--basetemp", "-W", "--confcutdir", "--cov", "--cov-report", "-n", "--log-level",
	"--import-mode", "--capture", "-r"}

func pytestSelection(args []string) Selection {
	s := Selection{Runner: "pytest", Known: true}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-k" && i+1 < len(args):
			s.K = args[i+1]
			i++
		case strings.HasPrefix(a, "-k") && len(a) > 2:
			s.K = a[2:]
		case slices.Contains(pytestValued, a):
			i++
		case strings.HasPrefix(a, "-"):
		default:
			s.Targets = append(s.Targets, a)
		}
	}
	return s
}

// CoversDir reports whether the run, in runDir (absolute), tests the Go
// package in dir (absolute): one of its packages is dir, or a pattern
// ending in /... is at or above it. A package named by import path
// (example.com/x) is taken to cover it, since the module's path is not
// known here.
func (s Selection) CoversDir(dir, runDir string) bool {
	if !s.Known || s.Runner != "go" || runDir == "" {
		return true
	}
	for _, t := range s.Targets {
		if !strings.HasPrefix(t, ".") && !strings.HasPrefix(t, "/") {
			return true
		}
		base, tree := strings.CutSuffix(t, "/...")
		if t == "..." {
			base, tree = ".", true
		}
		p := path.Clean(path.Join(runDir, base))
		if strings.HasPrefix(base, "/") {
			p = path.Clean(base)
		}
		if p == dir || tree && within(dir, p) {
			return true
		}
	}
	return false
}

// CoversTest reports whether the run selects the test called name
// (TestAdd; test_parse or tests/test_x.py::test_parse for pytest): go's
// -run must match it and -skip must not (their first level, as regular
// expressions); a pytest run must name its file, or node, or no path at
// all, and a -k of plain words must hold one as a substring. A filter
// this reading cannot evaluate covers it.
func (s Selection) CoversTest(name string) bool {
	if !s.Known {
		return true
	}
	switch s.Runner {
	case "go":
		if !strings.HasPrefix(name, "Test") || strings.Contains(name, "::") {
			return true
		}
		if s.Run != "" && !matchLevel(s.Run, name, true) {
			return false
		}
		return s.Skip == "" || !matchLevel(s.Skip, name, false)
	case "pytest":
		file, fn, hasFile := strings.Cut(name, "::")
		if !hasFile {
			fn, file = name, ""
		}
		if len(s.Targets) > 0 && file != "" && !slices.ContainsFunc(s.Targets, func(t string) bool {
			tf, tn, node := strings.Cut(t, "::")
			if node {
				return sameFile(tf, file) && tn == fn
			}
			return sameFile(tf, file) || !strings.HasSuffix(tf, ".py") && within(path.Clean(file), path.Clean(tf))
		}) {
			return false
		}
		return kSelects(s.K, fn)
	}
	return true
}

func sameFile(a, b string) bool {
	a, b = path.Clean(a), path.Clean(b)
	return a == b || strings.HasSuffix(a, "/"+b) || strings.HasSuffix(b, "/"+a)
}

// matchLevel matches the first /-separated level of a go test pattern
// against name; a pattern that does not compile selects (run) or skips
// (not run) nothing the reading can tell, and is taken to cover it.
func matchLevel(pattern, name string, run bool) bool {
	first, _, _ := strings.Cut(pattern, "/")
	re, err := regexp.Compile(first)
	if err != nil {
		return run
	}
	return re.MatchString(name)
}

var kWord = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// kSelects evaluates a pytest -k made of words joined by `or` (substring
// semantics); anything else (and, not, parentheses) is taken to select.
func kSelects(k, fn string) bool {
	if strings.TrimSpace(k) == "" || fn == "" {
		return true
	}
	for _, w := range strings.Split(k, " or ") {
		w = strings.TrimSpace(w)
		if !kWord.MatchString(w) {
			return true
		}
		if strings.Contains(strings.ToLower(fn), strings.ToLower(w)) {
			return true
		}
	}
	return false
}

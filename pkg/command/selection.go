package command

import (
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/claimcheck/claimcheck/pkg/shell"
)

// Test runners whose selection SelectionOf reads.
const (
	RunnerGo     = "go"
	RunnerPytest = "pytest"
	RunnerJest   = "jest"
	RunnerVitest = "vitest"
	RunnerCargo  = "cargo"
	RunnerMaven  = "maven"
	RunnerGradle = "gradle"
)

// TestID names one test, as a runner reported it or a prompt named it.
type TestID struct {
	// Runner is the runner that reported the test (a Runner constant);
	// "" for a name from a prompt, read by its shape (TestX is Go's,
	// test_x and x.py::y pytest's or cargo's).
	Runner string
	// File is the test's file when the runner names it (pytest, jest,
	// vitest): as printed, relative to where the runner ran.
	File string
	// Name is the test: Go's top-level TestX; pytest's function; cargo's
	// path in its crate (tests::adds); jest's and vitest's describe blocks
	// and test joined by " " (what -t matches); maven's and gradle's
	// Class.method, the class as printed (simple or qualified).
	Name string
}

// String is the test as its runner writes it.
func (t TestID) String() string {
	switch {
	case t.File == "":
		return t.Name
	case t.Runner == RunnerJest || t.Runner == RunnerVitest:
		return t.File + " > " + t.Name
	}
	return t.File + "::" + t.Name
}

// Selection is what a test run selects from its command line: the
// packages, files or targets it runs and the filters on test names.
// Known is false for a runner whose selection this reading does not follow
// (make, npm and other scripts that wrap a runner, mocha, nextest's
// filter expressions, …): such a run covers everything.
type Selection struct {
	Runner string // a Runner constant
	// Targets: go: packages as written ("." when none); pytest: paths and
	// node ids; jest: test path patterns (regular expressions); vitest:
	// path filters (substrings); cargo: the test targets (--test NAME as
	// "tests/NAME", --lib, --bins, --doc …); none: all.
	Targets []string
	// Ignore: jest's --testPathIgnorePatterns.
	Ignore []string
	Run    string // go -run; jest and vitest -t (a regular expression)
	Skip   string // go -skip
	K      string // pytest -k
	// Filters: cargo's test name filters (substrings, whole names with
	// --exact); maven's -Dtest and gradle's --tests patterns.
	Filters []string
	// Skips: cargo's --skip filters.
	Skips []string
	Exact bool // cargo --exact
	Known bool
}

// SelectionOf reads the selection of prog, a program and its arguments as
// Call.Programs gives them; wrappers and tool runners (npx jest, python
// -m pytest, timeout 60 go test) are read through to the runner.
func SelectionOf(prog []string) Selection {
	if len(prog) == 0 {
		return Selection{}
	}
	progs := shell.Programs(prog)
	prog = progs[len(progs)-1]
	name, args := path.Base(prog[0]), prog[1:]
	switch {
	case name == "go" && len(args) > 0 && args[0] == "test":
		return goSelection(args[1:])
	case name == "pytest" || name == "py.test":
		return pytestSelection(args)
	case name == "jest":
		return jestSelection(args)
	case name == "vitest":
		return vitestSelection(args)
	case name == "cargo" && len(args) > 0 && args[0] == "test":
		return cargoSelection(args[1:])
	case name == "mvn" || name == "mvnw":
		return mavenSelection(args)
	case name == "gradle" || name == "gradlew":
		return gradleSelection(args)
	}
	return Selection{}
}

// goTestValued are go test's (and go build's) flags that take a value.
var goTestValued = []string{"run", "skip", "bench", "benchtime", "count", "cpu", "parallel", "timeout", "coverprofile",
	"covermode", "coverpkg", "cpuprofile", "memprofile", "blockprofile", "mutexprofile", "outputdir", "o", "p", "tags",
	"ldflags", "gcflags", "asmflags", "mod", "modfile", "exec", "vet", "shuffle", "fuzz", "fuzztime", "fuzzminimizetime",
	"trace", "overlay", "pgo", "toolexec", "C", "list"}

func goSelection(args []string) Selection {
	s := Selection{Runner: RunnerGo, Known: true}
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
	s := Selection{Runner: RunnerPytest, Known: true}
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
// known here. A run of another runner covers it: which of its tests
// exercise a changed source file is not known from the command line.
func (s Selection) CoversDir(dir, runDir string) bool {
	if !s.Known || s.Runner != RunnerGo || runDir == "" {
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

// CoversFile reports whether the run, in runDir (absolute), runs the
// tests in file (absolute), a test file the session changed: Go's
// package, a pytest path or node of it (or none), a jest pattern or a
// vitest filter that matches it (or none), cargo's target of it, a maven
// or gradle pattern that selects its class. What this reading cannot tell
// covers it.
func (s Selection) CoversFile(file, runDir string) bool {
	if !s.Known || runDir == "" || !strings.HasPrefix(file, "/") {
		return true
	}
	rel := file
	if within(file, runDir) && file != runDir {
		rel = strings.TrimPrefix(file, strings.TrimSuffix(runDir, "/")+"/")
	}
	switch s.Runner {
	case RunnerGo:
		return s.CoversDir(path.Dir(file), runDir)
	case RunnerPytest:
		return len(s.Targets) == 0 || slices.ContainsFunc(s.Targets, func(t string) bool {
			t, _, _ = strings.Cut(t, "::")
			p := path.Clean(path.Join(runDir, t))
			if strings.HasPrefix(t, "/") {
				p = path.Clean(t)
			}
			return within(file, p)
		})
	case RunnerJest:
		return jestPaths(s, file)
	case RunnerVitest:
		return len(s.Targets) == 0 || slices.ContainsFunc(s.Targets, func(t string) bool { return strings.Contains(rel, t) })
	case RunnerCargo:
		return cargoTargetCovers(s.Targets, rel)
	case RunnerMaven, RunnerGradle:
		class, ok := jvmClassOf(rel)
		return !ok || len(s.Filters) == 0 || jvmSelects(s, class, "")
	}
	return true
}

// CoversTest reports whether the run selects the test t. A test another
// runner reported is not judged by this run's filters, nor is a filter
// this reading cannot evaluate: both cover it.
func (s Selection) CoversTest(t TestID) bool {
	if !s.Known || t.Runner != "" && t.Runner != s.Runner {
		return true
	}
	switch s.Runner {
	case RunnerGo:
		return goCovers(s, t.Name)
	case RunnerPytest:
		return pytestCovers(s, t)
	case RunnerJest, RunnerVitest:
		if t.Runner == "" {
			return true // a prompt's TestX or test_x is no jest name
		}
		if t.File != "" && (s.Runner == RunnerJest && !jestPaths(s, t.File) ||
			s.Runner == RunnerVitest && len(s.Targets) > 0 && !slices.ContainsFunc(s.Targets, func(f string) bool {
				return strings.Contains(t.File, f)
			})) {
			return false
		}
		return s.Run == "" || regexpMatches(s.Run, t.Name, true)
	case RunnerCargo:
		return cargoCovers(s, t)
	case RunnerMaven, RunnerGradle:
		if t.Runner == "" || len(s.Filters) == 0 {
			return true
		}
		class, method := t.Name, ""
		if i := strings.LastIndex(t.Name, "."); i >= 0 {
			class, method = t.Name[:i], t.Name[i+1:]
		}
		return jvmSelects(s, class, method)
	}
	return true
}

func goCovers(s Selection, name string) bool {
	if !strings.HasPrefix(name, "Test") || strings.Contains(name, "::") {
		return true
	}
	if s.Run != "" && !matchLevel(s.Run, name, true) {
		return false
	}
	return s.Skip == "" || !matchLevel(s.Skip, name, false)
}

// pytestCovers: a pytest run must name the test's file, or node, or no
// path at all, and a -k of plain words must hold one as a substring.
func pytestCovers(s Selection, t TestID) bool {
	file, fn := t.File, t.Name
	if file == "" {
		var hasFile bool
		file, fn, hasFile = strings.Cut(t.Name, "::")
		if !hasFile {
			fn, file = t.Name, ""
		}
	}
	if len(s.Targets) > 0 && file != "" && !slices.ContainsFunc(s.Targets, func(target string) bool {
		tf, tn, node := strings.Cut(target, "::")
		if node {
			return sameFile(tf, file) && tn == fn
		}
		return sameFile(tf, file) || !strings.HasSuffix(tf, ".py") && within(path.Clean(file), path.Clean(tf))
	}) {
		return false
	}
	return kSelects(s.K, fn)
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
	return regexpMatches(first, name, run)
}

// regexpMatches matches a runner's regular expression against s; one
// that does not compile (the runner's dialect is not Go's) gives
// otherwise.
func regexpMatches(pattern, s string, otherwise bool) bool {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return otherwise
	}
	return re.MatchString(s)
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

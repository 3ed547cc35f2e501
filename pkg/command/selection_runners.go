package command

import (
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// option reads one argument of a runner's command line: a long option with
// its value (--name=value or --name value when name takes one), a short one
// (-x value), or an operand (flag "").
type option struct {
	flag, value string
}

// readArgs splits args into options and operands; valued lists the
// options (with their dashes) that take a value.
func readArgs(args, valued []string) []option {
	var out []option
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			out = append(out, option{value: a})
			continue
		}
		flag, value, has := strings.Cut(a, "=")
		if !has && slices.Contains(valued, flag) && i+1 < len(args) {
			i++
			value = args[i]
		}
		out = append(out, option{flag: flag, value: value})
	}
	return out
}

// jestValued are jest's options that take a value.
var jestValued = []string{"-t", "--testNamePattern", "--testPathPattern", "--testPathPatterns", "--testPathIgnorePatterns",
	"-c", "--config", "-w", "--maxWorkers", "--reporters", "--coverageDirectory", "--rootDir", "--roots", "--selectProjects",
	"--shard", "--testTimeout", "--outputFile", "--seed", "--testEnvironment", "--env", "--testRunner", "--coverageReporters",
	"--collectCoverageFrom", "--maxConcurrency", "--changedSince", "--testMatch", "--testRegex", "--coverageProvider",
	"--filter", "--globalSetup", "--globalTeardown", "--moduleDirectories", "--setupFiles", "--setupFilesAfterEnv"}

// jestUnread are jest's options whose selection this reading does not
// follow: related or changed files, earlier failures, shards, projects,
// custom filters and matchers.
var jestUnread = []string{"--findRelatedTests", "-o", "--onlyChanged", "--changedSince", "--lastCommit", "-f", "--onlyFailures",
	"--selectProjects", "--shard", "--filter", "--testMatch", "--testRegex", "--listTests"}

func jestSelection(args []string) Selection {
	s := Selection{Runner: RunnerJest, Known: true}
	for _, o := range readArgs(args, jestValued) {
		switch {
		case slices.Contains(jestUnread, o.flag):
			return Selection{}
		case o.flag == "":
			s.Targets = append(s.Targets, o.value)
		case o.flag == "-t" || o.flag == "--testNamePattern":
			s.Run = o.value
		case o.flag == "--testPathPattern" || o.flag == "--testPathPatterns":
			s.Targets = append(s.Targets, o.value)
		case o.flag == "--testPathIgnorePatterns":
			s.Ignore = append(s.Ignore, o.value)
		}
	}
	return s
}

// jestPaths reports whether jest's path patterns select file (regular
// expressions matched against the test file's path; jest matches the
// absolute path, so a pattern anchored at the root says nothing of a
// relative file).
func jestPaths(s Selection, file string) bool {
	for _, p := range s.Ignore {
		if regexpMatches(p, file, false) {
			return false
		}
	}
	return len(s.Targets) == 0 || slices.ContainsFunc(s.Targets, func(p string) bool {
		return !strings.HasPrefix(file, "/") && (strings.HasPrefix(p, "^/") || strings.HasPrefix(p, "/")) || regexpMatches(p, file, true)
	})
}

// vitestValued are vitest's options that take a value.
var vitestValued = []string{"-t", "--testNamePattern", "-c", "--config", "-r", "--root", "--dir", "--project", "--shard",
	"--reporter", "--outputFile", "--pool", "--environment", "--maxWorkers", "--minWorkers", "--testTimeout", "--exclude",
	"--mode", "--retry", "--bail", "--changed", "--browser"}

// vitestUnread are vitest's options whose selection this reading does
// not follow.
var vitestUnread = []string{"--project", "--shard", "--changed", "--exclude", "--dir", "--related"}

func vitestSelection(args []string) Selection {
	s := Selection{Runner: RunnerVitest, Known: true}
	for i, o := range readArgs(args, vitestValued) {
		switch {
		case slices.Contains(vitestUnread, o.flag):
			return Selection{}
		case o.flag == "" && i == 0 && slices.Contains([]string{"run", "watch", "dev", "bench", "typecheck"}, o.value):
		case o.flag == "" && i == 0 && (o.value == "related" || o.value == "list" || o.value == "init"):
			return Selection{}
		case o.flag == "":
			// vitest 3 reads file:line as the test at that line.
			f := o.value
			if i := strings.LastIndexByte(f, ':'); i > 0 && strings.Trim(f[i+1:], "0123456789") == "" {
				f = f[:i]
			}
			s.Targets = append(s.Targets, f)
		case o.flag == "-t" || o.flag == "--testNamePattern":
			s.Run = o.value
		}
	}
	return s
}

// cargoValued are cargo test's options that take a value.
var cargoValued = []string{"-p", "--package", "--exclude", "--test", "--bench", "--bin", "--example", "-F", "--features",
	"--target", "--target-dir", "--manifest-path", "-j", "--jobs", "--profile", "--color", "--message-format", "--config",
	"-Z", "--lockfile-path"}

// harnessValued are the Rust test harness's options that take a value
// (after --).
var harnessValued = []string{"--skip", "--test-threads", "--format", "-Z", "--color", "--logfile", "--shuffle-seed"}

func cargoSelection(args []string) Selection {
	s := Selection{Runner: RunnerCargo, Known: true}
	harness := []string(nil)
	if i := slices.Index(args, "--"); i >= 0 {
		args, harness = args[:i], args[i+1:]
	}
	for _, o := range readArgs(args, cargoValued) {
		switch o.flag {
		case "":
			s.Filters = append(s.Filters, o.value)
		case "--test":
			s.Targets = append(s.Targets, "tests/"+o.value)
		case "--lib", "--bins", "--tests", "--doc", "--examples", "--benches", "--all-targets", "--bin", "--example", "--bench":
			s.Targets = append(s.Targets, o.flag)
		}
	}
	for _, o := range readArgs(harness, harnessValued) {
		switch o.flag {
		case "":
			s.Filters = append(s.Filters, o.value)
		case "--skip":
			s.Skips = append(s.Skips, o.value)
		case "--exact":
			s.Exact = true
		case "--ignored":
			return Selection{} // only the ignored tests, which the output does not name
		}
	}
	return s
}

// cargoTargetCovers: a changed file under a tests/ directory is the
// integration test target named for it; --tests and --all-targets run
// every such target, --test NAME one of them, and a run limited to
// --lib, --bins or --doc none.
func cargoTargetCovers(targets []string, rel string) bool {
	if len(targets) == 0 || slices.Contains(targets, "--tests") || slices.Contains(targets, "--all-targets") {
		return true
	}
	i := strings.LastIndex("/"+rel, "/tests/")
	if i < 0 {
		return true
	}
	name, _, _ := strings.Cut(rel[i+len("tests/"):], "/")
	name = strings.TrimSuffix(name, ".rs")
	return slices.Contains(targets, "tests/"+name)
}

// cargoCovers: a test is run when some filter is part of its path (its
// whole path with --exact) and no --skip is. A name from a prompt may be
// the last part of the path only, so a filter that holds it counts too.
func cargoCovers(s Selection, t TestID) bool {
	match := func(f string) bool {
		if s.Exact {
			return t.Name == f || t.Runner == "" && strings.HasSuffix(f, "::"+t.Name)
		}
		return strings.Contains(t.Name, f) || t.Runner == "" && strings.Contains(f, t.Name)
	}
	if len(s.Filters) > 0 && !slices.ContainsFunc(s.Filters, match) {
		return false
	}
	return !slices.ContainsFunc(s.Skips, func(f string) bool {
		if s.Exact {
			return t.Name == f
		}
		return strings.Contains(t.Name, f)
	})
}

// mavenSelection reads -Dtest (surefire's test selection; a list of
// patterns, ! for an exclusion).
func mavenSelection(args []string) Selection {
	s := Selection{Runner: RunnerMaven, Known: true}
	for i, a := range args {
		v, ok := strings.CutPrefix(a, "-Dtest=")
		if !ok && a == "-D" && i+1 < len(args) {
			v, ok = strings.CutPrefix(args[i+1], "test=")
		}
		if !ok {
			continue
		}
		for f := range strings.SplitSeq(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				s.Filters = append(s.Filters, f)
			}
		}
	}
	return s
}

func gradleSelection(args []string) Selection {
	s := Selection{Runner: RunnerGradle, Known: true}
	for _, o := range readArgs(args, []string{"--tests"}) {
		if o.flag == "--tests" && o.value != "" {
			s.Filters = append(s.Filters, o.value)
		}
	}
	return s
}

// jvmClassOf is the class a JVM test file holds, from its path under a
// src/test/<language>/ directory (com/x/CalcTest.java: com.x.CalcTest),
// else its base name.
func jvmClassOf(rel string) (string, bool) {
	ext := path.Ext(rel)
	if ext != ".java" && ext != ".kt" && ext != ".groovy" && ext != ".scala" {
		return "", false
	}
	p := strings.TrimSuffix(rel, ext)
	for _, root := range []string{"/src/test/java/", "/src/test/kotlin/", "/src/test/groovy/", "/src/test/scala/"} {
		if i := strings.LastIndex("/"+p, root); i >= 0 {
			return strings.ReplaceAll(p[i+len(root)-1:], "/", "."), true
		}
	}
	return path.Base(p), true
}

// jvmSelects reports whether maven's -Dtest or gradle's --tests patterns
// select method of class (method "": some test of the class). class is
// qualified or simple, as the runner printed it.
func jvmSelects(s Selection, class, method string) bool {
	included, includes := false, false
	for _, f := range s.Filters {
		if s.Runner == RunnerMaven {
			if excl, ok := strings.CutPrefix(f, "!"); ok {
				if mavenMatches(excl, class, method) {
					return false
				}
				continue
			}
			includes = true
			included = included || mavenMatches(f, class, method)
			continue
		}
		includes = true
		included = included || gradleMatches(f, class, method)
	}
	return included || !includes
}

// mavenMatches: a -Dtest pattern is a class pattern (a glob, as a class or
// a path; a pattern without a package matches any package) and, after #,
// method globs joined by +.
func mavenMatches(pattern, class, method string) bool {
	classPat, methods, _ := strings.Cut(pattern, "#")
	classPat = strings.TrimSuffix(strings.TrimSuffix(classPat, ".java"), ".class")
	classPat = strings.TrimPrefix(strings.ReplaceAll(strings.ReplaceAll(classPat, "**/", "*"), "/", "."), "*.")
	if classPat != "" && !classMatches(classPat, class) {
		return false
	}
	if method == "" || methods == "" {
		return true
	}
	return slices.ContainsFunc(strings.Split(methods, "+"), func(m string) bool { return glob(m, method) })
}

// gradleMatches: a --tests pattern is a glob over the qualified class and
// method (com.x.CalcTest.testAdd); one that starts with an upper-case
// letter matches the simple class name too. A pattern of the class selects
// all its methods, and one of a method of the class counts for the class.
func gradleMatches(pattern, class, method string) bool {
	if classMatches(pattern, class) {
		return true
	}
	if method == "" {
		cls, _ := splitMember(pattern)
		return cls != "" && classMatches(cls, class)
	}
	return classMatches(pattern, class+"."+method)
}

// splitMember splits a pattern of a method (com.x.CalcTest.testAdd) into
// its class and method: the last segment when it starts in lower case.
func splitMember(pattern string) (class, method string) {
	i := strings.LastIndexByte(pattern, '.')
	if i < 0 || i == len(pattern)-1 || !unicode.IsLower(rune(pattern[i+1])) {
		return "", ""
	}
	return pattern[:i], pattern[i+1:]
}

// classMatches matches a glob of a class (or class.method) against name,
// qualified or simple: a pattern without a package matches the simple
// name too, and a simple name (as some runners print it) is matched by the
// pattern without its package.
func classMatches(pattern, name string) bool {
	return glob(pattern, name) ||
		unqualified(pattern) == pattern && glob(pattern, unqualified(name)) ||
		unqualified(name) == name && glob(unqualified(pattern), name)
}

// unqualified drops the package (the leading segments that start in lower
// case) of a class or class.method: com.x.CalcTest.testAdd →
// CalcTest.testAdd.
func unqualified(s string) string {
	parts := strings.Split(s, ".")
	for i, p := range parts {
		if p != "" && !unicode.IsLower(rune(p[0])) {
			return strings.Join(parts[i:], ".")
		}
	}
	return parts[len(parts)-1]
}

// glob matches a pattern whose * matches any run of characters.
func glob(pattern, s string) bool {
	if !strings.Contains(pattern, "*") {
		return pattern == s
	}
	re := "^" + strings.ReplaceAll(regexp.QuoteMeta(pattern), `\*`, ".*") + "$"
	return regexpMatches(re, s, true)
}

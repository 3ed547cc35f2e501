package evidence

import (
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/command"
	"github.com/claimcheck/claimcheck/pkg/shell"
)

// File kinds for TestFileKind.
const (
	TestFile   = "test"   // a test (add_test.go, test_x.py, x.test.ts, tests/, src/test/)
	RunnerFile = "runner" // what defines the test command (Makefile, package.json, pytest.ini, jest.config.js, …)
)

// TestFileKind says whether p is a test file, a file that defines how the
// tests run, or neither ("").
func TestFileKind(p string) string {
	p = strings.ReplaceAll(p, "\\", "/")
	base := path.Base(p)
	dirs := "/" + path.Dir(p) + "/"
	switch {
	case base == "Makefile" || base == "makefile" || base == "GNUmakefile" || strings.HasSuffix(base, ".mk") ||
		base == "justfile" || base == "Justfile" || base == "package.json" || base == "pytest.ini" || base == "pyproject.toml" ||
		base == "setup.cfg" || base == "tox.ini" || base == "conftest.py" || base == "noxfile.py" || base == ".mocharc" ||
		base == "Cargo.toml" || base == "pom.xml" || strings.HasPrefix(base, "build.gradle") || base == "Taskfile.yml":
		return RunnerFile
	case strings.HasPrefix(base, "jest.config.") || strings.HasPrefix(base, "vitest.config.") || strings.HasPrefix(base, ".mocharc.") ||
		strings.HasPrefix(base, "vitest.workspace.") || strings.HasPrefix(base, "karma.conf") ||
		strings.HasPrefix(base, "playwright.config."):
		return RunnerFile
	case strings.HasSuffix(base, "_test.go"):
		return TestFile
	case strings.HasSuffix(base, ".py") && (strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py") ||
		strings.Contains(dirs, "/tests/") || strings.Contains(dirs, "/test/")):
		return TestFile
	case jsTestRE.MatchString(base) || strings.Contains(dirs, "/__tests__/") && jsRE.MatchString(base):
		return TestFile
	case strings.HasSuffix(base, ".rs") && strings.Contains(dirs, "/tests/"):
		return TestFile
	case (strings.HasSuffix(base, ".java") || strings.HasSuffix(base, ".kt")) && strings.Contains(dirs, "/src/test/"):
		return TestFile
	}
	return ""
}

var (
	jsRE     = regexp.MustCompile(`\.[cm]?[jt]sx?$`)
	jsTestRE = regexp.MustCompile(`\.(test|spec)\.[cm]?[jt]sx?$`)
)

// lang is the language whose test idioms a file's content is read by.
func lang(p string) string {
	switch ext := path.Ext(p); {
	case ext == ".go":
		return "go"
	case ext == ".py":
		return "py"
	case jsRE.MatchString(p):
		return "js"
	case ext == ".rs":
		return "rs"
	case ext == ".java" || ext == ".kt":
		return "java"
	}
	return ""
}

// idiom is one thing test code does, counted in a file's content.
type idiom struct {
	re   *regexp.Regexp
	name string
}

func idioms(pairs ...string) []idiom {
	out := make([]idiom, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, idiom{regexp.MustCompile(pairs[i]), pairs[i+1]})
	}
	return out
}

// skips, assertions, tests and dead starts by language. A count that
// grows (skips, dead starts, .only) or shrinks (assertions, tests) weakens.
var (
	skips = map[string][]idiom{
		"go": idioms(`\bt\.Skip(?:f|Now)?\(`, "t.Skip", `\btesting\.Short\(\)`, "a testing.Short() guard"),
		"py": idioms(`@pytest\.mark\.skip(?:if)?\b`, "@pytest.mark.skip", `@pytest\.mark\.xfail\b`, "@pytest.mark.xfail",
			`\bpytest\.skip\(`, "pytest.skip(", `@unittest\.skip`, "@unittest.skip", `\.skipTest\(`, "skipTest("),
		"js": idioms(`\b(?:it|test|describe)\.skip\(`, ".skip(", `\bx(?:it|test|describe)\(`, "xit/xdescribe(",
			`\b(?:it|test|describe)\.only\(|\bf(?:it|describe)\(`, ".only( (the other tests do not run)", `\b(?:it|test)\.todo\(`, ".todo("),
		"rs":   idioms(`#\[ignore\b`, "#[ignore]"),
		"java": idioms(`@Disabled\b`, "@Disabled", `@Ignore\b`, "@Ignore", `\bassumeTrue\(`, "assumeTrue("),
	}
	assertions = map[string][]idiom{
		"go": idioms(`\bt\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\(`, "t.Error/t.Fatal", `\b(?:assert|require)\.\w+\(`, "assert/require"),
		"py": idioms(`(?m)^\s*assert\b`, "assert", `\bself\.assert\w*\(`, "self.assert…", `\bpytest\.raises\(`, "pytest.raises"),
		"js": idioms(`\bexpect\(`, "expect(", `\bassert(?:\.\w+)?\(`, "assert("),
		"rs": idioms(`\b(?:assert|assert_eq|assert_ne|debug_assert)!\(`, "assert!", `\bpanic!\(`, "panic!"),
		"java": idioms(`\bassert(?:Equals|True|False|NotNull|Null|That|Throws|Same|NotSame|ArrayEquals)\(`, "assert…(",
			`\bfail\(`, "fail("),
	}
	testFuncs = map[string]*regexp.Regexp{
		"go":   regexp.MustCompile(`(?m)^func (Test\w*)\(`),
		"py":   regexp.MustCompile(`(?m)^\s*(?:async\s+)?def (test\w*)\(`),
		"js":   regexp.MustCompile(`\b(?:it|test)(?:\.only|\.skip|\.concurrent)?\(\s*['"` + "`" + `]([^'"` + "`" + `]*)`),
		"rs":   regexp.MustCompile(`#\[(?:tokio::)?test\](?:\s*#\[[^\]]*\])*\s*(?:async\s+)?fn (\w+)`),
		"java": regexp.MustCompile(`@Test\b[^{;]*?\bvoid (\w+)\(`),
	}
	deadStarts = map[string]*regexp.Regexp{
		"go": regexp.MustCompile(`(?m)^func Test\w*\([^)]*\) \{\s*(?:return\b|if false\b)|(?m)^\s*if false \{`),
		"py": regexp.MustCompile(`(?m)^\s*def test\w*\([^)]*\):\s*\n\s*(?:return\b|if False:)`),
		"js": regexp.MustCompile(`\b(?:it|test)\([^,]+,\s*(?:async\s*)?(?:\(\)\s*=>|function\s*\(\))\s*\{\s*(?:return\b|if \(false\))`),
		"rs": regexp.MustCompile(`#\[test\]\s*fn \w+\(\)\s*\{\s*(?:return\b|if false\b)`),
	}
	// logs are what an assertion becomes when it is made unable to fail.
	logs = map[string]*regexp.Regexp{"go": regexp.MustCompile(`\bt\.Logf?\(`)}
	// narrowing are runner options and settings that run fewer tests.
	narrowingRE = regexp.MustCompile(`(?:^|[\s"'=\[,])(?:-run|-skip|-short|-k|-m\s+["']?not\b|--ignore(?:-glob)?|--deselect|` +
		`--testPathIgnorePatterns|testPathIgnorePatterns|modulePathIgnorePatterns|--testNamePattern|testNamePattern|-t|` +
		`--exclude|exclude|collect_ignore(?:_glob)?|--passWithNoTests|passWithNoTests|-DskipTests|maven\.test\.skip|` +
		`--skip|testIgnore|--grep-invert|--invert|--lf|--last-failed|--co)\b`)
	emptyCommandRE = regexp.MustCompile(`^\s*@?-?\s*(?:true|:|exit 0|echo\b[^|;&]*)\s*$|"test"\s*:\s*"\s*(?:true|:|exit 0|echo\b[^"]*)"`)
	testishRE      = regexp.MustCompile(`(?i)test|pytest|jest|vitest|mocha|addopts|surefire|ignore|exclude|skip`)
)

// TestChange is one change of a test file or of what defines the test
// command.
type TestChange struct {
	N    uint64
	Path string
	Kind string // TestFile or RunnerFile
	// What it changed, short ("adds TestSub", "rewrites it"), and what of
	// that weakens the tests ("adds t.Skip", "removes TestAdd").
	What    []string
	Weakens []string
}

// String is the change for a verdict: "n=7: add_test.go adds t.Skip".
func (c TestChange) String() string {
	parts := append(slices.Clone(c.Weakens), c.What...)
	return fmt.Sprintf("n=%d: %s (%s) %s", c.N, c.Path, c.Kind, strings.Join(parts, ", "))
}

// TestChanges reads entries (in ledger order) for changes of tests and of
// what defines the test command: Edit, MultiEdit and Write calls, and
// shell lines that write such files (sed -i s/…/…/, heredocs, redirects,
// cp, …). It compares what a file held before (the tool's originalFile,
// else the latest Read or Write of the file in entries) with what it holds
// after, and says what weakens the tests: a skip added, an assertion
// removed or made a log, a test removed or renamed, a test made to return
// at its start, the runner narrowed or replaced by `true`. A shell write
// whose effect cannot be read weakens, since nothing says it does not.
func TestChanges(entries []Entry) []TestChange {
	known := map[string]string{} // path → content
	var out []TestChange
	for _, e := range entries {
		if !e.Done || e.Failed {
			continue
		}
		switch {
		case e.Tool == "Read" && e.FilePath != "" && e.Output != "":
			known[e.FilePath] = e.Output
		case IsEdit(e.Tool) && e.FilePath != "":
			kind := TestFileKind(e.FilePath)
			before, after, ok := toolContents(e, known)
			if ok && after != "" {
				known[e.FilePath] = after
			} else {
				delete(known, e.FilePath)
			}
			if kind == "" {
				continue
			}
			c := TestChange{N: e.N, Path: e.FilePath, Kind: kind}
			compare(&c, before, after, ok)
			if len(c.What)+len(c.Weakens) > 0 {
				out = append(out, c)
			}
		case e.Tool == "Bash" && e.Command != "":
			out = append(out, shellChanges(e, known)...)
		}
	}
	return out
}

// toolContents is a file's content before and after an Edit, MultiEdit
// or Write; ok is false when the content before is not known (then before
// and after are the fragments the tool replaced).
func toolContents(e Entry, known map[string]string) (before, after string, ok bool) {
	var in struct {
		Content    string `json:"content"`
		OldString  string `json:"old_string"`
		NewString  string `json:"new_string"`
		ReplaceAll bool   `json:"replace_all"`
		Edits      []struct {
			OldString  string `json:"old_string"`
			NewString  string `json:"new_string"`
			ReplaceAll bool   `json:"replace_all"`
		} `json:"edits"`
	}
	_ = json.Unmarshal([]byte(e.Input), &in, json.RejectUnknownMembers(false))
	before, ok = e.Before, e.Before != ""
	if !ok {
		before, ok = known[e.FilePath]
	}
	if e.Tool == "Write" {
		return before, in.Content, ok
	}
	type edit struct {
		old, new string
		all      bool
	}
	edits := []edit{{in.OldString, in.NewString, in.ReplaceAll}}
	if e.Tool == "MultiEdit" {
		edits = edits[:0]
		for _, x := range in.Edits {
			edits = append(edits, edit{x.OldString, x.NewString, x.ReplaceAll})
		}
	}
	if ok {
		after = before
		for _, x := range edits {
			if x.old == "" || !strings.Contains(after, x.old) {
				ok = false
				break
			}
			if x.all {
				after = strings.ReplaceAll(after, x.old, x.new)
			} else {
				after = strings.Replace(after, x.old, x.new, 1)
			}
		}
		if ok {
			return before, after, true
		}
	}
	var olds, news []string
	for _, x := range edits {
		olds, news = append(olds, x.old), append(news, x.new)
	}
	return strings.Join(olds, "\n"), strings.Join(news, "\n"), false
}

// compare fills c from a file's content before and after (whole, or the
// replaced fragments when whole is false).
func compare(c *TestChange, before, after string, whole bool) {
	if c.Kind == RunnerFile {
		compareRunner(c, before, after)
		if path.Base(c.Path) != "conftest.py" {
			return
		}
	}
	l := lang(c.Path)
	if l == "" {
		c.What = append(c.What, "changes it")
		return
	}
	for _, id := range skips[l] {
		if n := count(id.re, after) - count(id.re, before); n > 0 {
			c.Weakens = append(c.Weakens, "adds "+id.name)
		}
	}
	if re := deadStarts[l]; re != nil && count(re, after) > count(re, before) {
		c.Weakens = append(c.Weakens, "makes a test unable to fail (return or if false at its start)")
	}
	if !whole && before == "" {
		// What the file held is unknown: only what it now has can be told.
		if len(c.Weakens) == 0 {
			c.What = append(c.What, "writes it (its earlier content unknown)")
		}
		return
	}
	removed := 0
	for _, id := range assertions[l] {
		removed += count(id.re, before) - count(id.re, after)
	}
	if removed > 0 {
		if re := logs[l]; re != nil && count(re, after) > count(re, before) {
			c.Weakens = append(c.Weakens, "turns an assertion into a log (t.Log)")
		} else {
			c.Weakens = append(c.Weakens, fmt.Sprintf("removes %d assertion(s)", removed))
		}
	} else if removed < 0 {
		c.What = append(c.What, fmt.Sprintf("adds %d assertion(s)", -removed))
	}
	if re := testFuncs[l]; re != nil {
		was, is := names(re, before), names(re, after)
		if gone := minus(was, is); len(gone) > 0 {
			c.Weakens = append(c.Weakens, "removes or renames "+strings.Join(clip(gone), ", "))
		}
		if added := minus(is, was); len(added) > 0 {
			c.What = append(c.What, "adds "+strings.Join(clip(added), ", "))
		}
	}
	if len(c.What)+len(c.Weakens) == 0 {
		c.What = append(c.What, "changes it")
	}
}

// compareRunner: the lines a change of a runner definition adds and
// removes.
func compareRunner(c *TestChange, before, after string) {
	added, removed := lineDiff(before, after)
	testish := false
	for _, l := range append(slices.Clone(added), removed...) {
		testish = testish || testishRE.MatchString(l)
	}
	if !testish {
		return
	}
	for _, l := range added {
		if m := narrowingRE.FindString(l); m != "" && !narrowingRE.MatchString(strings.Join(removed, "\n")) {
			c.Weakens = append(c.Weakens, fmt.Sprintf("narrows what the runner runs (%s)", strings.TrimSpace(strings.Trim(m, `"'=[,`))))
			break
		}
	}
	for _, l := range added {
		if emptyCommandRE.MatchString(l) && slices.ContainsFunc(removed, testishRE.MatchString) {
			c.Weakens = append(c.Weakens, fmt.Sprintf("replaces the test command with `%s`", strings.TrimSpace(l)))
			break
		}
	}
	if len(c.Weakens) == 0 {
		c.What = append(c.What, "changes the test command's definition")
	}
}

// lineDiff returns the lines after has more of than before (added) and
// the reverse (removed), trimmed, as multisets.
func lineDiff(before, after string) (added, removed []string) {
	counts := map[string]int{}
	for _, l := range strings.Split(before, "\n") {
		counts[strings.TrimSpace(l)]++
	}
	for _, l := range strings.Split(after, "\n") {
		l = strings.TrimSpace(l)
		if counts[l] > 0 {
			counts[l]--
			continue
		}
		if l != "" {
			added = append(added, l)
		}
	}
	for _, l := range strings.Split(before, "\n") {
		l = strings.TrimSpace(l)
		if counts[l] > 0 {
			counts[l]--
			if l != "" {
				removed = append(removed, l)
			}
		}
	}
	return added, removed
}

func count(re *regexp.Regexp, s string) int {
	if s == "" {
		return 0
	}
	return len(re.FindAllStringIndex(s, -1))
}

// names are the first groups of re's matches in s.
func names(re *regexp.Regexp, s string) []string {
	var out []string
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// minus is a without b, as multisets.
func minus(a, b []string) []string {
	left := slices.Clone(b)
	var out []string
	for _, x := range a {
		if i := slices.Index(left, x); i >= 0 {
			left = slices.Delete(left, i, i+1)
			continue
		}
		out = append(out, x)
	}
	return out
}

func clip(list []string) []string {
	if len(list) > 5 {
		return append(slices.Clone(list[:5]), fmt.Sprintf("and %d more", len(list)-5))
	}
	return list
}

// shellChanges are the changes a shell line makes to tests and runner
// definitions, as far as its text tells.
func shellChanges(e Entry, known map[string]string) []TestChange {
	written, _ := e.Writes()
	var files []string
	for _, w := range written {
		if TestFileKind(w) != "" {
			files = append(files, w)
		}
	}
	if len(files) == 0 {
		return nil
	}
	tr := shell.Trace(e.Command, e.Cwd)
	edits := command.SedEdits(e.Command)
	var out []TestChange
	for _, f := range files {
		abs := f
		if !strings.HasPrefix(f, "/") && e.Cwd != "" {
			abs = path.Join(e.Cwd, f)
		}
		c := TestChange{N: e.N, Path: f, Kind: TestFileKind(f)}
		key := knownKey(known, f, abs)
		before, whole := known[key]
		switch content, ok := tr.Written[abs]; {
		case ok:
			compare(&c, before, content, whole)
			known[key] = content
		case len(edits[f]) > 0:
			var olds, news []string
			for _, x := range edits[f] {
				olds, news = append(olds, callLike(x.Old)), append(news, callLike(x.New))
			}
			compare(&c, strings.Join(olds, "\n"), strings.Join(news, "\n"), false)
			delete(known, key)
		case c.Kind == TestFile:
			c.Weakens = append(c.Weakens,
				"writes it with a shell command whose effect claimcheck cannot read (`"+clipCommand(e.Command)+"`)")
			delete(known, key)
		default:
			c.What = append(c.What, "writes it with a shell command claimcheck cannot read (`"+clipCommand(e.Command)+"`)")
			delete(known, key)
		}
		if len(c.What)+len(c.Weakens) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// knownKey is the key of known that names f (as written or absolute), or
// abs.
func knownKey(known map[string]string, f, abs string) string {
	if _, ok := known[abs]; ok {
		return abs
	}
	keys := slices.Sorted(maps.Keys(known))
	if i := slices.IndexFunc(keys, func(k string) bool { return SamePath(k, f) }); i >= 0 {
		return keys[i]
	}
	return abs
}

// callLike makes a sed fragment read like the code it matches: a name
// that ends it is called (t.Errorf → t.Errorf().
func callLike(s string) string {
	if s != "" && (s[len(s)-1] == '_' || s[len(s)-1] >= 'a' && s[len(s)-1] <= 'z' || s[len(s)-1] >= 'A' && s[len(s)-1] <= 'Z') {
		return s + "("
	}
	return s
}

package finalblock

import (
	"strings"
	"sync"
)

// langNotation is the Lang of phrases read from status notation (check
// marks, status tables and lists): "und", undetermined, since the notation
// is not in a language.
const langNotation = "und"

// Subjects of status notation: what a check mark or a status cell is about.
const (
	subjTests     = "(tests|test|unit tests|integration tests|e2e tests|e2e|test suite|the test suite|specs|checks|ci|ci checks|pipeline)"
	subjBuild     = "(build|builds|the build|compile|compilation)"
	subjLint      = "(lint|linter|linting|vet|go vet|gofmt|formatting|typecheck|type check|type-check|clippy|eslint|ruff|mypy|staticcheck)"
	subjDeploy    = "(deploy|deployed|deployment|release|released)"
	subjSecurity  = "(security scan|security|vulnerability scan|govulncheck|audit)"
	subjMigration = "(migration|migrations)"
)

// notation reads check marks next to the name of a check: "✅ tests",
// "Build ✅". Its cancelling words are English's.
var notation = withEnglishGrammar(langSpec{
	tag: langNotation,
	rules: []rule{
		{kind: KindDone, scope: ScopeTests, phrase: "<pass> (all |all the |)" + subjTests},
		{kind: KindDone, scope: ScopeTests, phrase: subjTests + " <pass>"},
		{kind: KindDone, scope: ScopeTests, phrase: "<pass> <code>"},
		{kind: KindDone, scope: ScopeTests, phrase: "<code> <pass>"},
		{kind: KindDone, scope: ScopeBuild, phrase: "<pass> " + subjBuild},
		{kind: KindDone, scope: ScopeBuild, phrase: subjBuild + " <pass>"},
		{kind: KindDone, scope: ScopeLint, phrase: "<pass> " + subjLint},
		{kind: KindDone, scope: ScopeLint, phrase: subjLint + " <pass>"},
		{kind: KindDone, scope: ScopeCoverage, phrase: "<pass> coverage"},
		{kind: KindDone, scope: ScopeCoverage, phrase: "coverage <pass>"},
		{kind: KindDone, scope: ScopeDeploy, phrase: "<pass> " + subjDeploy},
		{kind: KindDone, scope: ScopeDeploy, phrase: subjDeploy + " <pass>"},
		{kind: KindDone, scope: ScopeMerge, phrase: "<pass> (merged|merge)"},
		{kind: KindDone, scope: ScopeMerge, phrase: "(merged|merge) <pass>"},
		{kind: KindDone, scope: ScopeSecurity, phrase: "<pass> " + subjSecurity},
		{kind: KindDone, scope: ScopeSecurity, phrase: subjSecurity + " <pass>"},
		{kind: KindDone, scope: ScopeMigration, phrase: "<pass> " + subjMigration},
		{kind: KindDone, scope: ScopeMigration, phrase: subjMigration + " <pass>"},
	},
})

// statusSubjects gives the scope of a row or list item from the name of
// its check.
var statusSubjects = func() map[string]string {
	m := map[string]string{}
	for scope, list := range map[string]string{
		ScopeTests:     "test tests testing unit integration e2e spec specs suite ci checks race pytest jest smoke",
		ScopeBuild:     "build builds compile compilation compiles",
		ScopeLint:      "lint linter linting vet fmt gofmt format formatting typecheck type-check types clippy eslint ruff mypy staticcheck golangci-lint prettier",
		ScopeCoverage:  "coverage",
		ScopeDeploy:    "deploy deployment deployed release rollout",
		ScopeMerge:     "merge merged",
		ScopeSecurity:  "security vulnerabilities vulnerability audit govulncheck cve cves trivy snyk",
		ScopeMigration: "migration migrations",
		ScopeFetch:     "endpoint healthcheck health-check reachability",
		ScopePerf:      "benchmark benchmarks perf performance latency",
		ScopeDeps:      "dependencies deps dependency",
	} {
		for _, w := range strings.Fields(list) {
			m[w] = scope
		}
	}
	return m
}()

// subjectLeadIns may come before the name of a check ("the build", "go
// vet", "npm audit").
var subjectLeadIns = wordSet("the all go npm cargo make yarn pnpm python static full whole")

// Words of a status cell: statusPass say the check passed, statusFill may
// stand beside them ("all passing", "212 passed").
var (
	statusPass = wordSet("pass passed passing passes ok green success successful succeeded done clean yes complete completed fine")
	statusFill = wordSet("all tests checks")
)

// allNegators is every word table's negators: a status cell holding one
// ("not run", "nicht ausgeführt") is not a pass.
var allNegators = sync.OnceValue(func() map[string]bool {
	set := map[string]bool{}
	for _, l := range languages {
		for w := range l.negators {
			set[w] = true
		}
	}
	return set
})

// findStatus reads status notation line by line: rows of Markdown tables
// ("| Unit tests | ✅ |", "| Lint | passing |"), list items ("- ✅ login
// flow", "- [x] migrations", "- Tests: 12/12"), and "Build: ✅" lines. A
// row claims done when one of its cells (or the value after the label's
// colon) is a pass: a check mark, a count of all (12/12), or status words
// only (PASS, OK, passing, green, done); when the row reports no failure
// (❌, FAIL, 3 failed, 11/12) and the pass cell holds no negator; and when
// a check mark or checked box stands in a table cell or list item, or the
// row names a check (tests, build, lint, …), which gives the scope. A row
// whose words already made a done phrase adds nothing. fs must be sorted.
func (w *words) findStatus(fs []found) []found {
	text, k, next := w.text, 0, 0
	n := len(fs)
	for ls := 0; ls < len(text); {
		le := strings.IndexByte(text[ls:], '\n')
		if le < 0 {
			le = len(text)
		} else {
			le += ls
		}
		k0 := k
		for k < len(w.toks) && w.toks[k].start < le {
			k++
		}
		for next < n && fs[next].end <= ls {
			next++
		}
		claimed := false
		for i := next; i < n && fs[i].start < le; i++ {
			if fs[i].kind == KindDone {
				claimed = true
			}
		}
		if k > k0 && !claimed {
			if f, ok := w.statusLine(text[ls:le], ls, k0, k); ok {
				fs = append(fs, f)
			}
		}
		ls = le + 1
	}
	return fs
}

// cell is a range of tokens.
type cell struct{ a, b int }

// statusLine reads one line; toks [k0, k1) are its tokens, off its offset.
func (w *words) statusLine(line string, off, k0, k1 int) (found, bool) {
	trimmed := strings.TrimSpace(line)
	if strings.HasSuffix(trimmed, "?") || strings.Contains(trimmed, "=") {
		return found{}, false
	}
	var cells []cell
	list, checked := false, -1
	switch {
	case strings.Contains(trimmed, "|"):
		cells = w.splitAt(line, off, k0, k1, '|', -1)
	default:
		rest, ok := listItem(trimmed)
		if ok {
			list = true
			// The marker (1.) is not part of the item.
			for at := off + len(line) - len(rest); k0 < k1 && w.toks[k0].start < at; {
				k0++
			}
			switch {
			case strings.HasPrefix(rest, "[x]") || strings.HasPrefix(rest, "[X]"):
				checked = off + strings.Index(line, rest)
			case strings.HasPrefix(rest, "[ ]"):
				return found{}, false
			}
		}
		cells = w.splitAt(line, off, k0, k1, ':', 1)
		if !list && (len(cells) != 2 || cells[0].b-cells[0].a > 4) {
			return found{}, false
		}
	}
	// The whole row must report no failure.
	for k := k0; k < k1; k++ {
		t := w.toks[k]
		if t.word == failWord || t.class == clsPart || failWords[t.word] && (k == k0 || !zeroWords[w.toks[k-1].word]) {
			return found{}, false
		}
	}
	pass, mark := -1, -1
	for i, c := range cells {
		if m, ok := w.passCell(c); ok {
			pass, mark = i, m
			break
		}
	}
	if pass < 0 && checked < 0 {
		return found{}, false
	}
	// The subject is the name of the check: the first words of a cell other
	// than the pass cell (of the item or label), marks and box aside.
	scope, subj, subjEnd := "", -1, -1
	for i, c := range cells {
		if i == pass && len(cells) > 1 {
			continue
		}
		a := c.a
		for a < c.b && (w.toks[a].word == passWord || checked >= 0 && a == k0 && w.toks[a].word == "x" ||
			subjectLeadIns[w.toks[a].word]) {
			a++
		}
		if a < c.b {
			if s, ok := statusSubjects[w.toks[a].word]; ok {
				scope, subj, subjEnd = s, a, a
				for subjEnd+1 < c.b && statusSubjects[w.toks[subjEnd+1].word] != "" {
					subjEnd++
				}
			}
		}
		if subj >= 0 || !strings.Contains(line, "|") {
			break
		}
	}
	markOnly := checked >= 0 || mark >= 0 && (list || len(cells) > 1 && strings.Contains(line, "|"))
	if subj < 0 && !markOnly {
		return found{}, false
	}
	if scope == "" {
		scope = ScopeWork
	}
	start, stop := len(w.text), 0
	grow := func(s, e int) { start, stop = min(start, s), max(stop, e) }
	switch {
	case checked >= 0:
		grow(checked, checked+3)
	case mark >= 0:
		grow(w.toks[mark].start, w.toks[mark].end)
	default:
		last := w.toks[cells[pass].b-1]
		grow(last.start, last.end)
	}
	if subj >= 0 {
		grow(w.toks[subj].start, w.toks[subjEnd].end)
	}
	return found{start: start, end: stop, kind: KindDone, scope: scope, lang: langNotation}, true
}

// passCell reports whether the tokens of c say the check passed, and the
// check mark if one does.
func (w *words) passCell(c cell) (mark int, ok bool) {
	mark, words, fill := -1, 0, 0
	negators := allNegators()
	for k := c.a; k < c.b; k++ {
		t := w.toks[k]
		switch {
		case negators[t.word]:
			return -1, false
		case t.word == passWord:
			if mark < 0 {
				mark = k
			}
		case t.class == clsAll || statusPass[t.word]:
			words++
		case t.class == clsNum || statusFill[t.word]:
			fill++
		}
	}
	if mark >= 0 {
		return mark, true
	}
	return -1, words > 0 && words+fill == c.b-c.a
}

// splitAt splits the tokens [k0, k1) of a line at the byte sep, at most
// max times (-1: no limit).
func (w *words) splitAt(line string, off, k0, k1 int, sep byte, limit int) []cell {
	var cells []cell
	a := k0
	for i := 0; i < len(line) && limit != 0; i++ {
		if line[i] != sep {
			continue
		}
		b := a
		for b < k1 && w.toks[b].start < off+i {
			b++
		}
		if b > a {
			cells = append(cells, cell{a, b})
		}
		a = b
		limit--
	}
	if k1 > a {
		cells = append(cells, cell{a, k1})
	}
	return cells
}

// listItem returns the text of a Markdown list item after its marker.
func listItem(line string) (string, bool) {
	if len(line) >= 2 && strings.IndexByte("-*+", line[0]) >= 0 && line[1] == ' ' {
		return strings.TrimLeft(line[2:], " "), true
	}
	n := digits(line)
	if n > 0 && n+1 < len(line) && (line[n] == '.' || line[n] == ')') && line[n+1] == ' ' {
		return strings.TrimLeft(line[n+2:], " "), true
	}
	return "", false
}

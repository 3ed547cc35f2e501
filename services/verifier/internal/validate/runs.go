package validate

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/claimcheck/claimcheck/pkg/command"
	"github.com/claimcheck/claimcheck/pkg/evidence"
	"github.com/claimcheck/claimcheck/schemas"
)

// projectDir is the session's project directory: the cwd of the prompt
// the contract at ci was derived from (the UserPromptSubmit whose event id
// the contract names, else the latest prompt before it), else the cwd of
// the session's first event that has one; "" when no payload says.
// Claude Code sends the directory it was started in as the cwd of a
// prompt.
func projectDir(entries []evidence.Entry, ci int) string {
	ct := entries[ci].Contract
	for i := ci - 1; i >= 0; i-- {
		e := entries[i]
		if e.HookEvent == schemas.HookUserPromptSubmit && e.Cwd != "" && (ct.PromptEventID == "" || e.EventID == ct.PromptEventID) {
			return e.Cwd
		}
	}
	for i := ci - 1; i >= 0; i-- {
		if e := entries[i]; e.HookEvent == schemas.HookUserPromptSubmit && e.Cwd != "" {
			return e.Cwd
		}
	}
	for _, e := range entries {
		if e.Cwd != "" {
			return e.Cwd
		}
	}
	return ""
}

// runView reads the session's shell lines after the contract as runs of
// one command (command.Tree): where each ran, whether the session's
// changes were set aside then, and the last line that moved the tree.
type runView struct {
	project  string
	runs     map[uint64][]command.Run
	lastMove *evidence.Entry
	moveWhy  string
	notes    []string
	// outside is set once a problem was a run outside the project.
	outside bool
}

// newRunView reads after, in which runs (from runsOf) are the entries
// that run want.
func newRunView(want []string, project string, after, runs []evidence.Entry) *runView {
	v := &runView{project: project, runs: map[uint64][]command.Run{}}
	isRun := make(map[uint64]bool, len(runs))
	for _, r := range runs {
		isRun[r.N] = true
	}
	var tree command.Tree
	for i, e := range after {
		if !e.Done || e.Tool != "Bash" || e.Command == "" || !isRun[e.N] && !e.MovesTree() {
			continue
		}
		runs, moved := tree.Traced(e.Trace(), e.Cwd, want)
		if len(runs) > 0 {
			v.runs[e.N] = runs
		}
		if moved != "" {
			v.lastMove, v.moveWhy = &after[i], moved
		}
		for _, r := range runs {
			if r.Dir == "" && r.Moved != "" && project != "" {
				v.notes = append(v.notes, fmt.Sprintf("n=%d: `%s` ran after `%s`, in a directory claimcheck cannot know", e.N,
					strings.Join(r.Prog, " "), r.Moved))
			}
		}
	}
	return v
}

// problem says why the run at e is not a run of the session's change as
// the session left it: its changes were set aside, or it ran outside the
// project. "" when neither is known.
func (v *runView) problem(e evidence.Entry) string {
	for _, r := range v.runs[e.N] {
		if r.SetAside != "" {
			return "the session's changes were set aside when it ran: " + r.SetAside
		}
		if v.project != "" && r.Dir != "" && !command.Within(r.Dir, v.project) {
			v.outside = true
			how := "the tool call's cwd"
			if r.Moved != "" {
				how = "after `" + r.Moved + "`"
			}
			return fmt.Sprintf("it ran in %s (%s), outside the session's project %s", r.Dir, how, v.project)
		}
	}
	return ""
}

// next is the next step after a problem.
func (v *runView) next(cmd string, retry func(string) string) string {
	where := "with the session's changes in place (no git stash, checkout, reset or copy of the tree before it)"
	if v.outside {
		where = "in the session's project " + v.project
	}
	return fmt.Sprintf("run `%s` %s, then %s", cmd, where, retry(`{"command_substring":"`+cmd+`"}`))
}

// scope is what a run of the session's tests must select: the Go
// packages and the test files the session changed, the tests the prompt
// names and the tests that failed in earlier runs of the session.
type scope struct {
	named   []command.TestID
	failed  []failure
	changed []change
}

type failure struct {
	n    uint64
	test command.TestID
}

type change struct {
	n    uint64
	file string // the changed file, absolute
	test bool   // a test file (evidence.TestFileKind); else a Go source file
}

func newScope(ct *schemas.Contract, after []evidence.Entry) scope {
	tf := ct.TargetFields
	sc := scope{named: evidence.TestNames(append(slices.Clone(tf.BacktickTokens), tf.Keywords...))}
	for _, e := range after {
		if !e.Done {
			continue
		}
		if e.Tool == "Bash" && e.Output != "" {
			for _, t := range e.FailedTests() {
				sc.failed = append(sc.failed, failure{e.N, t})
			}
		}
		if !evidence.IsEdit(e.Tool) || e.Failed {
			continue
		}
		test := evidence.TestFileKind(e.FilePath) == evidence.TestFile
		if !test && !strings.HasSuffix(e.FilePath, ".go") {
			continue
		}
		p := e.FilePath
		if !path.IsAbs(p) && e.Cwd != "" {
			p = path.Join(e.Cwd, p)
		}
		if path.IsAbs(p) {
			sc.changed = append(sc.changed, change{e.N, path.Clean(p), test})
		}
	}
	return sc
}

// leftOut says what the run at e left out of the scope (what changed or
// failed before it, and what the prompt names): "" when it selected all
// of it, or when its selection cannot be read.
func (sc scope) leftOut(rv *runView, e evidence.Entry) string {
	var out []string
	add := func(s string) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, r := range rv.runs[e.N] {
		sel := command.SelectionOf(r.Prog)
		if !sel.Known {
			continue
		}
		for _, c := range sc.changed {
			switch {
			case c.n >= e.N || r.Dir == "":
			case strings.HasSuffix(c.file, ".go") && !sel.CoversDir(path.Dir(c.file), r.Dir):
				add(fmt.Sprintf("the package %s changed at n=%d", path.Dir(c.file), c.n))
			case c.test && !sel.CoversFile(c.file, r.Dir):
				add(fmt.Sprintf("the test file %s changed at n=%d", c.file, c.n))
			}
		}
		for _, t := range sc.named {
			if !sel.CoversTest(t) {
				add(fmt.Sprintf("%s, named in the prompt", t))
			}
		}
		for _, f := range sc.failed {
			if f.n < e.N && !sel.CoversTest(f.test) {
				add(fmt.Sprintf("%s, which failed at n=%d", f.test, f.n))
			}
		}
	}
	return strings.Join(out, "; ")
}

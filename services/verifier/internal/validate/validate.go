// Package validate decides claims. It is pure: given the ledger entries of a
// session that precede a claim, the claim and the policy, it returns PASS,
// FAIL (the evidence is not there: the reasons say what was looked for and
// what to do next) or REFUSED (the claim itself is wrong: no contract, a
// validator the claim type does not allow, weak arguments, or arguments not
// bound to the contract). Because it sees only the ledger prefix before the
// claim, the same claim always gets the same verdict.
package validate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/claimcheck/claimcheck/pkg/command"
	"github.com/claimcheck/claimcheck/pkg/evidence"
	"github.com/claimcheck/claimcheck/pkg/policy"
	"github.com/claimcheck/claimcheck/schemas"
)

// Input is everything a decision needs.
type Input struct {
	Entries []evidence.Entry // the session's entries before the claim, in order
	Claim   schemas.Claim
	Policy  *policy.Policy
}

// Result is a decision.
type Result struct {
	Verdict  string
	Reasons  []string
	NextStep string
	Matched  []schemas.Position
	Contract *schemas.Position
	// Notes are facts the verdict shows whatever it is: edits of tests
	// and of what defines the test command, declared weakenings, runs in
	// a directory that cannot be known. Each names the entry (n=).
	Notes []string
}

// env is what judging a claim needs besides its arguments.
type env struct {
	ct *schemas.Contract
	// project is the session's project directory (projectDir), "" when
	// the payloads do not say.
	project string
	retry   func(string) string
}

func refused(next string, reasons ...string) Result {
	return Result{Verdict: schemas.Refused, Reasons: reasons, NextStep: next}
}

// Evaluate decides one claim.
func Evaluate(in Input) Result {
	c := in.Claim
	p := in.Policy
	retry := func(args string) string {
		return fmt.Sprintf("claimcheck claim --claim %s --validator %s --args '%s'", c.Claim, c.Validator, args)
	}
	if _, ok := p.Claims[c.Claim]; !ok {
		return refused("use one of the claim types "+strings.Join(p.ClaimTypes(), ", "),
			fmt.Sprintf("unknown claim type %q (the policy knows %s)", c.Claim, strings.Join(p.ClaimTypes(), ", ")))
	}
	rule, known := p.Validators[c.Validator]
	allowed, list := p.Allowed(c.Claim, c.Validator)
	switch {
	case !known:
		return refused("use one of "+strings.Join(list, ", ")+" for a "+c.Claim+" claim",
			fmt.Sprintf("unknown validator %q", c.Validator))
	case !allowed:
		return refused("use one of "+strings.Join(list, ", ")+" for a "+c.Claim+" claim",
			fmt.Sprintf("validator %s may not back a %s claim (allowed: %s)", c.Validator, c.Claim, strings.Join(list, ", ")))
	}
	args, err := rule.DecodeArgs(c.Args)
	if err != nil {
		return refused("fix the arguments and run "+retry("{…}"), "invalid arguments: "+err.Error())
	}
	// The contract in force: the latest one before the claim.
	ci := -1
	for i := len(in.Entries) - 1; i >= 0; i-- {
		if in.Entries[i].Kind == schemas.EntryContract && in.Entries[i].Contract != nil {
			ci = i
			break
		}
	}
	if ci < 0 {
		return refused("a claim needs an actionable prompt (one with an action verb) earlier in this session",
			"no contract: no actionable prompt precedes this claim in the session")
	}
	ct := in.Entries[ci].Contract
	pos := in.Entries[ci].Position()
	after := in.Entries[ci+1:]
	var r Result
	if reason := bind(c.Validator, rule, args, ct); reason != "" {
		r = refused("bind the arguments to the contract of the prompt at n="+fmt.Sprint(pos.N)+" and run "+retry("…"), reason)
	} else {
		r = judgeTrusted(c, rule, args, env{ct: ct, project: projectDir(in.Entries, ci), retry: retry}, after)
	}
	r.Contract = &pos
	return r
}

// judgeTrusted judges on the tool results the agent's tool loop produced
// (evidence.Loop). When only results that did not come from it would back
// the claim, the verdict is REFUSED and names them.
func judgeTrusted(c schemas.Claim, rule policy.ValidatorRule, args policy.Args, v env, after []evidence.Entry) Result {
	untrusted := map[uint64]string{}
	trusted := after
	for i, e := range after {
		if e.Done && e.Untrusted != "" {
			if len(untrusted) == 0 {
				trusted = slices.Clone(after)
			}
			untrusted[e.N] = e.Untrusted
			trusted[i].Done = false
		}
	}
	r := judge(c, rule, args, v, trusted)
	if r.Verdict == schemas.Pass || len(untrusted) == 0 {
		return r
	}
	all := judge(c, rule, args, v, after)
	if all.Verdict != schemas.Pass {
		return r
	}
	var reasons []string
	for _, m := range all.Matched {
		if why, ok := untrusted[m.N]; ok {
			reasons = append(reasons, fmt.Sprintf("the tool result at n=%d did not come from the agent's tool loop: %s", m.N, why))
		}
	}
	return refused("make the tool call yourself (a real Bash, Edit or WebFetch call of this session), then "+v.retry("…"), reasons...)
}

// bind checks that the arguments name something the contract asked for.
// It returns "" when they do, else the refusal.
func bind(validator string, rule policy.ValidatorRule, args policy.Args, ct *schemas.Contract) string {
	tf := ct.TargetFields
	empty := len(tf.Paths)+len(tf.URLs)+len(tf.CommandHints)+len(tf.BacktickTokens)+len(tf.Keywords) == 0
	field := func(name string) []string {
		switch name {
		case "paths":
			return tf.Paths
		case "urls":
			return tf.URLs
		case "command_hints":
			return tf.CommandHints
		case "backtick_tokens":
			return tf.BacktickTokens
		case "keywords":
			return tf.Keywords
		}
		return nil
	}
	describe := func() string {
		var parts []string
		for _, b := range rule.Binds {
			if b == "ladder" {
				continue
			}
			parts = append(parts, fmt.Sprintf("%s %q", b, field(b)))
		}
		return strings.Join(parts, ", ")
	}
	if empty && !slices.Contains(rule.Binds, "ladder") {
		// Legacy contracts without target fields: soft binding to the
		// objective's words (the seed's fallback).
		for _, a := range []string{args.String("command_substring"), args.String("path"), args.String("url"), args.String("keyword")} {
			for _, w := range strings.Fields(strings.ToLower(a)) {
				if len(w) >= 4 && strings.Contains(strings.ToLower(ct.Objective), w) {
					return ""
				}
			}
		}
		return "arguments share nothing with the objective of a contract that has no target fields"
	}
	switch validator {
	case "command_zero_exit", "test_pass":
		cmd := args.String("command_substring")
		calls := command.Parse(cmd)
		if len(calls) != 1 {
			return fmt.Sprintf("command_substring %q must be one simple command (no ;, &&, |)", cmd)
		}
		// cmd runs a hint, or (two words or more) a hint runs cmd.
		argv := calls[0].Argv
		for _, b := range rule.Binds {
			for _, v := range field(b) {
				switch b {
				case "command_hints", "backtick_tokens":
					hint := command.Parse(v)
					if len(hint) == 1 && len(hint[0].Argv) > 0 && command.RunsParsed(calls, hint[0].Argv) ||
						len(argv) >= 2 && command.RunsParsed(hint, argv) {
						return ""
					}
				case "paths":
					if command.MentionsParsed(calls, v) {
						return ""
					}
				}
			}
		}
		return fmt.Sprintf(
			"command_substring %q is not bound to the contract: it must run one of, or name a path from, %s", cmd, describe())
	case "file_diff_present":
		path := args.String("path")
		for _, v := range field("paths") {
			if evidence.SamePath(path, v) {
				return ""
			}
		}
		if len(tf.Paths) == 0 {
			return fmt.Sprintf("path %q is not bound to the contract: the prompt names no paths", path)
		}
		return fmt.Sprintf("path %q is not one of the contract's paths %q", path, tf.Paths)
	case "http_2xx":
		u := args.String("url")
		for _, b := range rule.Binds {
			for _, v := range field(b) {
				if strings.HasPrefix(v, "http") &&
					(u == v || strings.HasPrefix(u, strings.TrimRight(v, "/")+"/") || strings.HasPrefix(u, v+"?")) {
					return ""
				}
			}
		}
		return fmt.Sprintf("url %q is not one of the contract's URLs (%s)", u, describe())
	case "fetch_attempt_proof":
		kw := strings.ToLower(args.String("keyword"))
		for _, b := range rule.Binds {
			for _, v := range field(b) {
				lv := strings.ToLower(v)
				if lv == kw || b != "keywords" && strings.Contains(lv, kw) {
					return ""
				}
			}
		}
		return fmt.Sprintf("keyword %q is not bound to the contract (%s)", kw, describe())
	case "ladder_exhaustion_proof":
		if len(ct.Ladder) == 0 {
			return "the contract has no capability ladder to exhaust"
		}
		return ""
	}
	return fmt.Sprintf("validator %s has no binding rule", validator)
}

// samePath compares paths given absolute or relative to some directory.

// evidence looks for what the validator requires among the entries after
// the contract.
func judge(c schemas.Claim, rule policy.ValidatorRule, args policy.Args, v env, after []evidence.Entry) Result {
	ct, retry := v.ct, v.retry
	switch c.Validator {
	case "command_zero_exit":
		return commandZeroExit(args.String("command_substring"), v, after)
	case "test_pass":
		return testPass(testClaim{cmd: args.String("command_substring"), minRuns: int(args.Int("min_runs")),
			declared: args.String("declared_test_changes")}, v, after)
	case "file_diff_present":
		return fileDiff(args.String("path"), after, retry)
	case "http_2xx":
		return http2xx(args.String("url"), after, retry)
	case "fetch_attempt_proof":
		return fetchAttempts(args.String("keyword"), rule.Params.MinDistinctTools, after)
	case "ladder_exhaustion_proof":
		return ladder(ct, after)
	}
	return refused("", "no evidence rule for validator "+c.Validator)
}

func fail(next string, reasons ...string) Result {
	return Result{Verdict: schemas.Fail, Reasons: reasons, NextStep: next}
}

func pass(matched ...evidence.Entry) Result {
	r := Result{Verdict: schemas.Pass}
	for _, m := range matched {
		r.Matched = append(r.Matched, m.Position())
	}
	return r
}

func runsOf(want []string, entries []evidence.Entry) []evidence.Entry {
	if len(want) == 0 {
		return nil
	}
	var out []evidence.Entry
	for _, e := range entries {
		if e.Done && e.Tool == "Bash" && command.RunsParsed(e.Calls(), want) {
			out = append(out, e)
		}
	}
	return out
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

func commandZeroExit(cmd string, v env, after []evidence.Entry) Result {
	retry := v.retry
	want, _ := command.Want(cmd)
	runs := runsOf(want, after)
	if len(runs) == 0 {
		return fail(fmt.Sprintf("run `%s`, then %s", cmd, retry(`{"command_substring":"`+cmd+`"}`)),
			fmt.Sprintf("looked for a Bash run of `%s` after the prompt: none found", cmd))
	}
	last := runs[len(runs)-1]
	if last.Failed {
		return fail(fmt.Sprintf("fix what fails and run `%s` again", cmd),
			fmt.Sprintf("the latest run of `%s` (n=%d) failed: %s", cmd, last.N, firstLine(last.Output)))
	}
	if why := command.NoTestsParsed(last.Calls(), want); why != "" {
		return fail(fmt.Sprintf("run `%s` so that it runs the tests (without the option named), then %s", cmd,
			retry(`{"command_substring":"`+cmd+`"}`)),
			fmt.Sprintf("the latest run of `%s` (n=%d) ran no test: %s", cmd, last.N, why))
	}
	rv := newRunView(want, v.project, after, runs)
	if why := rv.problem(last); why != "" {
		return fail(rv.next(cmd, retry),
			fmt.Sprintf("the latest run of `%s` (n=%d) is not a run of the session's change: %s", cmd, last.N, why))
	}
	if left := newScope(v.ct, after).leftOut(rv, last); left != "" {
		return fail(fmt.Sprintf("run `%s` so that it selects what was left out, then %s", cmd, retry(`{"command_substring":"`+cmd+`"}`)),
			fmt.Sprintf("the latest run of `%s` (n=%d) selected less than the session's change: it left out %s", cmd, last.N, left))
	}
	if rv.lastMove != nil && rv.lastMove.N > last.N {
		return fail(fmt.Sprintf("run `%s` again in the tree as you leave it, then %s", cmd, retry(`{"command_substring":"`+cmd+`"}`)),
			fmt.Sprintf("%s at n=%d came after the latest run of `%s` (n=%d); it no longer counts", rv.moveWhy, rv.lastMove.N, cmd, last.N))
	}
	if o := last.Observe(want); !o.Status {
		return fail(
			fmt.Sprintf("run `%s` as a command of its own (not before `||`, `;` or `|`; or after `set -o pipefail`), then %s", cmd,
				retry(`{"command_substring":"`+cmd+`"}`)),
			fmt.Sprintf("the latest run of `%s` (n=%d) exited 0 only as far as its line shows: %s", cmd, last.N, o.StatusWhy))
	}
	r := pass(last)
	r.Notes = rv.notes
	return r
}

// testClaim is a test_pass claim's arguments.
type testClaim struct {
	cmd      string
	minRuns  int
	declared string // declared_test_changes
}

// staleness is the latest entry after which earlier runs no longer count:
// an edit of a bound path, or a line that moved the tree (git stash …).
type staleness struct {
	entry *evidence.Entry
	what  string // "the edit of x.go", "`git stash` …"
	edit  string // the path edited, for the next step
}

func stalePoint(after []evidence.Entry, ct *schemas.Contract, rv *runView) staleness {
	var st staleness
	for i := range after {
		if what, ok := evidence.EditOf(after[i], ct.TargetFields.Paths); ok {
			st = staleness{entry: &after[i], what: "the edit of " + what, edit: what}
		}
	}
	if rv.lastMove != nil && (st.entry == nil || rv.lastMove.N >= st.entry.N) {
		st = staleness{entry: rv.lastMove, what: rv.moveWhy}
	}
	return st
}

// rejected are the runs of a test_pass claim that did not count, by why.
type rejected struct {
	stale                           int
	unrecognized                    int
	filtered, noTests, notTheChange []string
	narrow                          []string
}

func testPass(tc testClaim, v env, after []evidence.Entry) Result {
	cmd, retry := tc.cmd, v.retry
	minRuns := max(tc.minRuns, 1)
	want, _ := command.Want(cmd)
	runs := runsOf(want, after)
	if len(runs) == 0 {
		return fail(fmt.Sprintf("run `%s`, then %s", cmd, retry(`{"command_substring":"`+cmd+`"}`)),
			fmt.Sprintf("looked for a run of `%s` after the prompt: none found", cmd))
	}
	rv := newRunView(want, v.project, after, runs)
	stale := stalePoint(after, v.ct, rv)
	sc := newScope(v.ct, after)
	last := runs[len(runs)-1]
	lastSum := last.Summary()
	switch {
	case last.Failed:
		return fail(fmt.Sprintf("fix the failures and run `%s` again", cmd),
			fmt.Sprintf("the latest run of `%s` (n=%d) failed: %s", cmd, last.N, firstLine(last.Output)))
	case lastSum.Recognized && lastSum.Failed > 0:
		return fail(fmt.Sprintf("fix the failing tests and run `%s` again", cmd),
			fmt.Sprintf("the latest run of `%s` (n=%d) reports %d failed", cmd, last.N, lastSum.Failed))
	}
	var passing []evidence.Entry
	var rej rejected
	for _, r := range runs {
		if why := command.NoTestsParsed(r.Calls(), want); why != "" {
			rej.noTests = append(rej.noTests, fmt.Sprintf("n=%d: %s", r.N, why))
			continue
		}
		if why := rv.problem(r); why != "" {
			rej.notTheChange = append(rej.notTheChange, fmt.Sprintf("n=%d: %s", r.N, why))
			continue
		}
		if left := sc.leftOut(rv, r); left != "" {
			rej.narrow = append(rej.narrow, fmt.Sprintf("n=%d left out %s", r.N, left))
			continue
		}
		o := r.Observe(want)
		if !o.Output {
			// A filter may have cut failures out of what was recorded.
			rej.filtered = append(rej.filtered, fmt.Sprintf("n=%d: %s", r.N, o.OutputWhy))
			continue
		}
		if !o.Status {
			// The run's failure would not show in the exit status; its
			// summary decides, unless another command could have printed
			// one (`echo 'Tests: 5 passed'; npm test || true`).
			if other := otherCommand(r, want); other != "" {
				rej.filtered = append(rej.filtered, fmt.Sprintf("n=%d: %s, and `%s` ran in the same line", r.N, o.StatusWhy, other))
				continue
			}
		}
		s := r.Summary()
		if r.Failed || !s.Recognized || s.Failed > 0 || s.Passed == 0 {
			if !r.Failed && !s.Recognized {
				rej.unrecognized++
			}
			continue
		}
		if stale.entry != nil && r.N < stale.entry.N {
			rej.stale++
			continue
		}
		passing = append(passing, r)
	}
	changes := testChanges(after, tc.declared)
	notes := append(rv.notes, changes.notes...)
	if len(passing) >= minRuns && len(changes.weakening) == 0 {
		r := pass(passing...)
		r.Notes = notes
		return r
	}
	next, reasons := testPassReasons(tc, v, rv, stale, rej, len(passing), changes)
	r := fail(next, reasons...)
	r.Notes = notes
	return r
}

// testPassReasons says why a test_pass claim failed, and what to do.
func testPassReasons(tc testClaim, v env, rv *runView, stale staleness, rej rejected, passing int,
	changes testEdits) (next string, reasons []string) {
	cmd, retry, minRuns := tc.cmd, v.retry, max(tc.minRuns, 1)
	again := retry(`{"command_substring":"` + cmd + `"}`)
	next = fmt.Sprintf("run `%s` again, then %s", cmd, again)
	if rej.stale > 0 && stale.entry != nil {
		reasons = append(reasons,
			fmt.Sprintf("%s at n=%d came after the passing run(s) of `%s`; they no longer count", stale.what, stale.entry.N, cmd))
		if stale.edit != "" {
			next = fmt.Sprintf("re-run `%s` after your last edit (%s), then %s", cmd, stale.edit, again)
		} else {
			next = fmt.Sprintf("re-run `%s` in the tree as you leave it, then %s", cmd, again)
		}
	}
	if len(rej.filtered) > 0 {
		reasons = append(reasons, fmt.Sprintf(
			"%d run(s) of `%s` do not count, since the record may not show their whole, own result (a filter can cut failures, another command can print a summary): %s", len(rej.filtered), cmd, strings.Join(rej.filtered, "; ")))
		next = fmt.Sprintf(
			"run `%s` on its own, without filtering its output (no `| tail`, `| grep`, `> file`, `|| true`; `2>&1 | tee file` is fine), then %s", cmd, again)
	}
	if len(rej.noTests) > 0 {
		reasons = append(reasons, fmt.Sprintf("%d run(s) of `%s` ran no test: %s", len(rej.noTests), cmd, strings.Join(rej.noTests, "; ")))
		next = fmt.Sprintf("run `%s` so that it runs the tests (without the option named), then %s", cmd, again)
	}
	if len(rej.notTheChange) > 0 {
		reasons = append(reasons, fmt.Sprintf("%d run(s) of `%s` did not run the session's change: %s", len(rej.notTheChange), cmd,
			strings.Join(rej.notTheChange, "; ")))
		next = rv.next(cmd, retry)
	}
	if len(rej.narrow) > 0 {
		reasons = append(reasons, fmt.Sprintf("%d run(s) of `%s` selected less than the session's change: %s", len(rej.narrow), cmd,
			strings.Join(rej.narrow, "; ")))
		next = fmt.Sprintf("run `%s` so that it selects what was left out (the changed packages, the named and the failing tests), then %s",
			cmd, again)
	}
	if rej.unrecognized > 0 {
		reasons = append(reasons, fmt.Sprintf(
			"%d run(s) of `%s` had no test summary claimcheck recognises (pytest, go test, cargo test, jest, vitest, mocha, maven surefire)", rej.unrecognized, cmd))
	}
	if len(changes.weakening) > 0 {
		reasons = append(reasons, "the session weakened the tests or what runs them, and the claim does not declare it: "+
			strings.Join(changes.weakening, "; "))
		next = fmt.Sprintf("undo the weakening and run `%s` again, or declare it: %s", cmd,
			retry(`{"command_substring":"`+cmd+`","declared_test_changes":"what you changed in the tests and why"}`))
	}
	if passing < minRuns {
		reasons = append(reasons, fmt.Sprintf(
			"found %d of %d required passing run(s) with at least 1 passed and 0 failed after the last edit", passing, minRuns))
	}
	return next, reasons
}

func fileDiff(path string, after []evidence.Entry, retry func(string) string) Result {
	var failed []evidence.Entry
	for i := len(after) - 1; i >= 0; i-- {
		e := after[i]
		if !e.Done || !evidence.IsEdit(e.Tool) || !evidence.SamePath(e.FilePath, path) {
			continue
		}
		if !e.Failed {
			return pass(e)
		}
		failed = append(failed, e)
	}
	reason := fmt.Sprintf("looked for a successful Edit, Write, MultiEdit or NotebookEdit of %s after the prompt: none found", path)
	if len(failed) > 0 {
		reason += fmt.Sprintf(" (%d failed, the latest at n=%d)", len(failed), failed[0].N)
	}
	return fail(fmt.Sprintf("edit %s, then %s", path, retry(`{"path":"`+path+`"}`)), reason)
}

func urlMatches(e evidence.Entry, u string) bool {
	if e.URL != "" {
		return e.URL == u || strings.HasPrefix(e.URL, u)
	}
	return e.Command != "" && strings.Contains(e.Command, u)
}

func http2xx(u string, after []evidence.Entry, retry func(string) string) Result {
	var fetches []evidence.Entry
	var mixed []string
	for _, e := range after {
		if e.Done &&
			(e.Tool == "WebFetch" || strings.HasPrefix(evidence.FetchTool(e), "Bash:") || strings.HasPrefix(e.Tool, "mcp__") &&
				evidence.FetchTool(e) != "") && urlMatches(e, u) {
			if why := mixedFetch(e); why != "" {
				mixed = append(mixed, fmt.Sprintf("n=%d: %s", e.N, why))
				continue
			}
			fetches = append(fetches, e)
		}
	}
	if len(fetches) == 0 {
		reasons := []string{fmt.Sprintf("looked for a fetch of %s after the prompt: none found", u)}
		if len(mixed) > 0 {
			reasons = append(reasons,
				"fetches that ran with other commands do not count, since their output or exit status could come from those: "+strings.Join(mixed, "; "))
		}
		return fail(
			fmt.Sprintf("fetch %s on its own (e.g. curl -sS -o /dev/null -w '%%{http_code}\\n' %s), then %s", u, u,
				retry(`{"url":"`+u+`"}`)), reasons...)
	}
	last := fetches[len(fetches)-1]
	code := evidence.HTTPStatus(last)
	switch {
	case last.Failed:
		return fail("make "+u+" answer and fetch it again",
			fmt.Sprintf("the latest fetch of %s (n=%d) failed: %s", u, last.N, firstLine(last.Output)))
	case code >= 200 && code < 300:
		return pass(last)
	case code == 0:
		return fail(fmt.Sprintf("fetch %s so that the status is shown (curl -i, or -w '%%{http_code}')", u),
			fmt.Sprintf("the latest fetch of %s (n=%d) shows no HTTP status", u, last.N))
	}
	return fail("make "+u+" answer 2xx and fetch it again", fmt.Sprintf("the latest fetch of %s (n=%d) returned HTTP %d", u, last.N, code))
}

// mixedFetch says why a shell fetch's record is not the fetch's alone (""
// when it is, or when the entry is not a shell command): `curl URL; echo
// 'HTTP/1.1 200 OK'` prints a status curl never got, `curl URL || echo
// 'connection refused'` a failure that did not happen. A fetch counts when
// its program is the line's only command besides the benign ones (cd,
// export, sleep, tee, cat, …) and its output and exit status reach the
// record (command.Observe).
func mixedFetch(e evidence.Entry) string {
	if e.Tool != "Bash" {
		return ""
	}
	prog := strings.TrimPrefix(evidence.FetchTool(e), "Bash:")
	if other := otherCommand(e, []string{prog}); other != "" {
		return fmt.Sprintf("`%s` ran in the same command line", other)
	}
	o := e.Observe([]string{prog})
	switch {
	case !o.Output:
		return o.OutputWhy
	case !o.Status:
		return o.StatusWhy
	}
	return ""
}

// benign programs print nothing a validator reads (cd, export …) or pass
// their input through whole (tee, cat).
var benign = map[string]bool{"cd": true, "pushd": true, "popd": true, "sleep": true, "export": true, "set": true,
	"true": true, ":": true, "tee": true, "cat": true}

// otherCommand names a program in e's line other than want and the benign
// ones, or "".
func otherCommand(e evidence.Entry, want []string) string {
	for _, c := range e.Calls() {
		if command.RunsParsed([]command.Call{c}, want) {
			continue
		}
		if name, _ := c.Program(); name != "" && !benign[name] {
			return name
		}
	}
	return ""
}

func fetchFailed(e evidence.Entry) bool {
	if e.Failed {
		return true
	}
	code := evidence.HTTPStatus(e)
	if code >= 400 {
		return true
	}
	lower := strings.ToLower(e.Output)
	for _, m := range []string{"could not resolve", "connection refused", "timed out", "failed to fetch", "error fetching",
		"403 forbidden", "404 not found", "access denied", "unable to fetch", "blocked"} {
		if strings.Contains(lower, m) {
			return true
		}
	}
	return false
}

func fetchAttempts(keyword string, minTools int, after []evidence.Entry) Result {
	kw := strings.ToLower(keyword)
	failedTools := map[string]evidence.Entry{}
	var order []string
	for _, e := range after {
		tool := evidence.FetchTool(e)
		if !e.Done || tool == "" || !strings.Contains(strings.ToLower(e.Input+" "+e.Command), kw) || mixedFetch(e) != "" {
			continue
		}
		if !fetchFailed(e) {
			return fail("use what the fetch at n="+fmt.Sprint(e.N)+" returned instead of delegating",
				fmt.Sprintf("the fetch with %s at n=%d succeeded: delegation is not needed", tool, e.N))
		}
		if _, seen := failedTools[tool]; !seen {
			order = append(order, tool)
		}
		failedTools[tool] = e
	}
	if len(failedTools) >= minTools {
		var m []evidence.Entry
		for _, t := range order {
			m = append(m, failedTools[t])
		}
		return pass(m...)
	}
	return fail(
		fmt.Sprintf(
			"try %d different fetch tools (WebFetch, WebSearch, curl, wget, an MCP fetch tool) for %q before delegating", minTools, keyword),
		fmt.Sprintf("found %d distinct fetch tool(s) that tried %q and failed (%s); %d are needed", len(failedTools), keyword,
			strings.Join(order, ", "), minTools))
}

func hopAttempted(h schemas.Hop, e evidence.Entry) bool {
	if !e.Done {
		return false
	}
	toolOK := false
	for _, t := range h.Tools {
		if e.Tool == t || t == "mcp" && strings.HasPrefix(e.Tool, "mcp__") {
			toolOK = true
		}
	}
	if !toolOK {
		return false
	}
	if len(h.Tokens) == 0 {
		return true
	}
	if e.Tool == "Bash" {
		return shellAttempts(h, e)
	}
	text := strings.ToLower(e.Input + " " + e.Command + " " + e.FilePath + " " + e.URL + " " + e.Query)
	for _, tok := range h.Tokens {
		if strings.Contains(text, strings.ToLower(tok)) {
			return true
		}
	}
	return false
}

// printers only print their arguments: `echo curl https://…` attempts
// nothing.
var printers = map[string]bool{"echo": true, "printf": true, ":": true, "true": true, "false": true}

// shellAttempts: a shell command attempts a hop when a program it runs
// (not echo or printf) has a hop token in its arguments; for a hop that
// is a command (Tools is Bash alone), the line must run that command
// (command.Runs, so `echo go test` is not a run of go test).
func shellAttempts(h schemas.Hop, e evidence.Entry) bool {
	if len(h.Tools) == 1 {
		for _, tok := range h.Tokens {
			if want, ok := command.Want(tok); ok && command.RunsParsed(e.Calls(), want) {
				return true
			}
		}
		return false
	}
	for _, c := range e.Calls() {
		name, argv := c.Program()
		if name == "" || printers[name] {
			continue
		}
		text := strings.ToLower(strings.Join(argv, " "))
		for _, tok := range h.Tokens {
			if strings.Contains(text, strings.ToLower(tok)) {
				return true
			}
		}
	}
	return false
}

func ladder(ct *schemas.Contract, after []evidence.Entry) Result {
	var missing []string
	var matched []evidence.Entry
	anyFailed := false
	for _, h := range ct.Ladder {
		var hit *evidence.Entry
		for i := range after {
			if hopAttempted(h, after[i]) {
				hit = &after[i]
				if after[i].Failed || fetchFailed(after[i]) {
					anyFailed = true
				}
			}
		}
		if hit == nil {
			missing = append(missing, h.Hop)
			continue
		}
		matched = append(matched, *hit)
	}
	if len(missing) > 0 {
		return fail("try the remaining hops before claiming blocked: "+strings.Join(missing, "; "),
			fmt.Sprintf("%d of %d ladder hops not attempted after the prompt: %s", len(missing), len(ct.Ladder),
				strings.Join(missing, "; ")))
	}
	if !anyFailed {
		return fail("a blocked claim needs a failed attempt; if every hop worked, the task is not blocked",
			"every hop was attempted but none failed")
	}
	return pass(matched...)
}

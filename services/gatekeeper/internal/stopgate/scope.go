package stopgate

import (
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/policy"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/services/gatekeeper/internal/finalblock"
)

// scopeNames say in the reasons what a scope of claim asserts.
var scopeNames = map[string]string{
	finalblock.ScopeWork:      "the work is done",
	finalblock.ScopeTests:     "tests pass",
	finalblock.ScopeBuild:     "it builds",
	finalblock.ScopeChange:    "a file was changed",
	finalblock.ScopeDeploy:    "deployed or released",
	finalblock.ScopeMerge:     "merged or pushed",
	finalblock.ScopeFetch:     "it is reachable",
	finalblock.ScopeLint:      "lint or type check is clean",
	finalblock.ScopePerf:      "a performance figure",
	finalblock.ScopeCoverage:  "a coverage figure",
	finalblock.ScopeSecurity:  "a security scan is clean",
	finalblock.ScopeDeps:      "a dependency was updated",
	finalblock.ScopeMigration: "a migration was applied",
}

func scopeName(scope string) string {
	if n, ok := scopeNames[scope]; ok {
		return "a claim that " + n
	}
	return "a claim of " + scope
}

// covers reports whether an attestation backs claims of scope under the
// gate's policy. Without a policy, or for a scope the policy does not name
// (one from before scopes), any done attestation does.
func covers(in Input, scope string, a Attestation) bool {
	if a.Claim != policy.Done && a.Claim != policy.Partial {
		return false
	}
	if in.Policy == nil {
		return true
	}
	if _, ok := in.Policy.Scope(scope); !ok {
		return true
	}
	return in.Policy.Covers(scope, a.Validator, []byte(a.Args))
}

// provable reports whether some validator can back claims of scope.
func provable(in Input, scope string) bool {
	if in.Policy == nil {
		return true
	}
	r, ok := in.Policy.Scope(scope)
	return !ok || len(r.BackedBy) > 0
}

// scopeStep says how to back a claim of scope: the validator to run, with
// arguments from the contract where it has them.
func scopeStep(in Input, scope string) string {
	if in.Policy == nil {
		return suggestClaim(in.Contract)
	}
	r, ok := in.Policy.Scope(scope)
	if !ok || len(r.BackedBy) == 0 || scope == finalblock.ScopeWork {
		return suggestClaim(in.Contract)
	}
	var tf schemas.TargetFields
	if in.Contract != nil {
		tf = in.Contract.TargetFields
	}
	b := r.BackedBy[0]
	claim := func(args string) string {
		return fmt.Sprintf("`claimcheck claim --claim done --validator %s --args '%s'`", b.Validator, args)
	}
	switch {
	case len(b.Programs) > 0:
		progs := b.Programs
		if len(progs) > 4 {
			progs = progs[:4]
		}
		return fmt.Sprintf("run the command that does it (e.g. `%s`), then %s", strings.Join(progs, "`, `"),
			claim(`{"command_substring":"<that command>"}`))
	case b.Validator == "test_pass":
		hint := firstOf(tf.CommandHints, tf.BacktickTokens)
		if hint == "" {
			hint = "<the test command you ran>"
		}
		return "run the tests, then " + claim(fmt.Sprintf(`{"command_substring":%q}`, hint))
	case b.Validator == "file_diff_present":
		path := firstOf(tf.Paths)
		if path == "" {
			path = "<the file>"
		}
		return claim(fmt.Sprintf(`{"path":%q}`, path))
	case b.Validator == "http_2xx":
		u := firstOf(tf.URLs)
		if u == "" {
			u = "<the URL>"
		}
		return "fetch it, then " + claim(fmt.Sprintf(`{"url":%q}`, u))
	}
	return "run " + claim("{…}")
}

// needsChange: a done for a task that names files to change (a change verb
// of the policy) needs a change to one of them, not only a passing run: an
// edit the ledger shows after the prompt (Input.Changed), or a cited
// attestation that backs the change scope.
func needsChange(in Input, fb *finalblock.Block, usable []Attestation) (Result, bool) {
	c := in.Contract
	if fb.Type != finalblock.TypeDone || c == nil || len(c.TargetFields.Paths) == 0 || in.Policy == nil ||
		!in.Policy.ChangeTask(c.ActionVerbs) || in.Changed != "" {
		return Result{}, false
	}
	for _, a := range usable {
		if covers(in, finalblock.ScopeChange, a) {
			return Result{}, false
		}
	}
	paths := c.TargetFields.Paths
	return block(RuleNoChange,
		fmt.Sprintf("change %s, then `claimcheck claim --claim done --validator file_diff_present --args '{\"path\":%q}'` and cite it "+
			"next to the passing run; or stop as partial and say why the file did not need to change", strings.Join(paths, " or "), paths[0]),
		fmt.Sprintf("this turn's task (%q) names %s to change, and no change to one of them is recorded after the prompt (a passing "+
			"run does not show the change was made)", clip(c.Objective, 120), strings.Join(paths, ", "))), true
}

// unbackedPhrases checks each claim of the prose and of the block's prose
// members against the cited attestations: a done phrase needs one that
// backs its scope, blocked and delegation phrases a block of their type.
func unbackedPhrases(in Input, fb *finalblock.Block, usable []Attestation) (Result, bool) {
	var reasons []string
	var next, rule string
	for _, p := range in.Message.Phrases {
		where := "the message says"
		if p.Field != "" && p.Field != finalblock.FieldProse {
			where = "the block's " + p.Field + " says"
		}
		switch p.Kind {
		case finalblock.KindDone:
			backed := false
			for _, a := range usable {
				if covers(in, p.Scope, a) {
					backed = true
					break
				}
			}
			switch {
			case backed:
			case !provable(in, p.Scope):
				if fb.Type == finalblock.TypePartial {
					continue
				}
				reasons = append(reasons, fmt.Sprintf("%s %q (%s), which no validator proves yet", where, p.Text, scopeName(p.Scope)))
				if next == "" {
					rule = RuleUnprovable
					next = fmt.Sprintf("take back %q, or stop as partial with it under what_succeeded (unverified)", p.Text)
				}
			default:
				reasons = append(reasons, fmt.Sprintf("%s %q (%s) but the block cites no attestation that backs it", where, p.Text,
					scopeName(p.Scope)))
				if next == "" {
					rule = RuleUnbackedWords
					next = fmt.Sprintf("either back it (%s, and cite the attestation) or take back %q and say what is actually true",
						scopeStep(in, p.Scope), p.Text)
				}
			}
		case finalblock.KindBlocked:
			if fb.Type != finalblock.TypeBlocked && fb.Type != finalblock.TypePartial {
				return block(RuleUnbackedWords,
					"use type blocked (with a ladder_exhaustion_proof attestation) or partial, or drop the claim",
					fmt.Sprintf("%s %q but the block's type is %s", where, p.Text, fb.Type)), true
			}
		case finalblock.KindDelegation:
			if fb.Type != finalblock.TypeDelegation && fb.Type != finalblock.TypePartial {
				return block(RuleUnbackedWords,
					"use type delegation (with a fetch_attempt_proof attestation) or partial, or drop the request",
					fmt.Sprintf("%s %q but the block's type is %s", where, p.Text, fb.Type)), true
			}
		}
	}
	if len(reasons) == 0 {
		return Result{}, false
	}
	return block(rule, next, reasons...), true
}

// notes name what the gate saw but does not block on: words written in
// mixed scripts are recorded with the decision.
func notes(m finalblock.Message) []string {
	var out []string
	for _, f := range m.Findings {
		if f.Kind == finalblock.FindingMixedScript {
			out = append(out, fmt.Sprintf("note: %q mixes scripts (%s)", clip(f.Text, 60), f.Detail))
		}
	}
	return out
}

// untoldTestChanges: an attestation whose claim declared a weakening of
// the tests (test_pass's declared_test_changes: a skip added, an assertion
// loosened) backs the stop only when the final message tells the human so,
// in the prose or the block's summary, what_succeeded or what_remains.
func untoldTestChanges(m finalblock.Message, usable []Attestation) (Result, bool) {
	text := fold(m.Prose)
	if b := m.Block; b != nil {
		text += "\n" + fold(b.Summary) + "\n" + fold(b.WhatSucceeded) + "\n" + fold(b.WhatRemains)
	}
	for _, a := range usable {
		var args struct {
			Declared string `json:"declared_test_changes"`
		}
		if json.Unmarshal([]byte(a.Args), &args, json.RejectUnknownMembers(false)) != nil || strings.TrimSpace(args.Declared) == "" {
			continue
		}
		if !strings.Contains(text, fold(args.Declared)) {
			return block(RuleUntoldChange,
				fmt.Sprintf("put the declaration in the block's what_succeeded or what_remains as written: %q", args.Declared),
				fmt.Sprintf("attestation %s passed with a declared change that weakens the tests (%q), "+
					"and the final message does not say so", a.ID, clip(args.Declared, 160))), true
		}
	}
	return Result{}, false
}

// fold lower-cases s and collapses its white space.
func fold(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }

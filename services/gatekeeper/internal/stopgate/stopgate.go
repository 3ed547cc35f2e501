// Package stopgate decides the Stop gate: may the agent end its turn with
// this final message, given what the ledger holds? It is a pure function of
// the parsed message and the session's evidence; the gatekeeper supplies
// both from its view of the ledger (the evidence look-ups are the only
// I/O, under the caller's context).
//
// The rules (seed 001, ARCHITECTURE.md "The gate"):
//   - a malformed final block blocks, naming what is wrong;
//   - in an actionable turn (the latest prompt has a contract) the final
//     block is required; done needs at least one cited attestation of a done
//     claim made for this turn's contract, blocked a ladder_exhaustion_proof,
//     delegation a fetch_attempt_proof, partial the three human-readable
//     slots;
//   - every cited attestation must verify (signature, key window, session,
//     registered policy) and be fresh (no later edit of a bound path, no
//     later failing run of the same command);
//   - claim phrases in the prose need backing: "done" phrases a fresh done
//     attestation, "blocked"/"delegation" phrases a block of that type (or
//     partial) — also in turns without a contract;
//   - every block names the next step;
//   - after cap-1 consecutive blocks the stop is let through, flagged, with
//     a message for the user (Claude Code would end the turn at the cap
//     anyway); an operator override lets the next stop through.
package stopgate

import (
	"context"
	"fmt"
	"strings"

	"github.com/claimcheck/claimcheck/pkg/policy"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/services/gatekeeper/internal/finalblock"
)

// Attestation is a cited attestation as the gatekeeper's view knows it.
type Attestation struct {
	ID        string
	Claim     string // the claim type the verdict backed
	Validator string
	Args      string // canonical JSON
	Contract  uint64 // n of the contract entry the verdict was judged under
	// Stale, when set, says why the pass no longer counts (e.g. a later edit).
	Stale    string
	NextStep string // what makes it fresh again
}

// Evidence answers questions about the session's ledger.
type Evidence interface {
	// Attestation returns a cited attestation after checking it verifies and
	// belongs to the session; the error says why it cannot be used (also
	// when ctx ended before it could be looked up).
	Attestation(ctx context.Context, id string) (Attestation, error)
}

// Input is everything the decision depends on.
type Input struct {
	Message finalblock.Message
	// Contract is the contract of the latest prompt; nil when that prompt was
	// not actionable (or there was none).
	Contract  *schemas.Contract
	ContractN uint64
	Evidence  Evidence
	// StopHookActive is the payload's stop_hook_active.
	StopHookActive bool
	// ConsecutiveBlocks counts the blocks of this session's stops since the
	// last allowed stop or prompt.
	ConsecutiveBlocks int
	// Cap is the number of consecutive blocks after which the stop is let
	// through (Claude Code's CLAUDE_CODE_STOP_HOOK_BLOCK_CAP, 8); 0 never.
	Cap int
	// Override is the id of a pending operator override ("" when none).
	Override       string
	OverrideReason string
	// Policy is the gate's claim policy: its scopes say which attestations
	// back each kind of claim the prose makes, its change_verbs which tasks
	// need a change to the files they name. Nil: every done attestation
	// backs every kind (the rule before scopes).
	Policy *policy.Policy
	// Changed names a change to one of the contract's paths after the
	// contract, as the ledger shows it ("" when there is none): it backs a
	// change task's done as a cited file_diff_present does.
	Changed string
	// FailingRun is the ledger's newest failing run of a command not run
	// successfully since (nil when none): a block for an unbacked claim
	// names it.
	FailingRun *Run
	// NoMessage says the agent's stop event carries no final message
	// (Cursor, Copilot): a turn with a task is then judged on Passes, the
	// session's newest PASS of each claim type made under its contract, as
	// if the message were a done block citing them, since there is no
	// message to cite them in (or prose to check).
	NoMessage bool
	Passes    []Pass
	// ClaimCommand replaces "claimcheck claim" in the next step, for agents
	// whose commands cannot find their session by themselves (Gemini CLI,
	// Cursor, Copilot: "claimcheck claim --session ID"); "" leaves it.
	ClaimCommand string
}

// Run is a recorded run of a shell command.
type Run struct {
	N       uint64 // its ledger position
	Command string
	Summary string // the first line of its output
}

// Rules name why a stop was decided as it was.
const (
	RuleAllowed       = "stop.allowed"
	RuleNoClaims      = "stop.no_claims"
	RuleOverride      = "stop.override"
	RuleCapped        = "stop.block_cap"
	RuleMalformed     = "stop.final_block_malformed"
	RuleMissingBlock  = "stop.final_block_missing"
	RuleBadCitation   = "stop.attestation_unusable"
	RuleStale         = "stop.attestation_stale"
	RuleNoDoneClaim   = "stop.done_without_attestation"
	RuleNoLadder      = "stop.blocked_without_ladder"
	RuleNoFetches     = "stop.delegation_without_fetches"
	RulePartialSlots  = "stop.partial_slots_missing"
	RuleUnbackedWords = "stop.claim_phrases_without_evidence"
	RuleOtherContract = "stop.attestation_for_another_task"
	RuleNoChange      = "stop.done_without_change"
	RuleUnprovable    = "stop.claim_not_provable"
	RuleUnreadText    = "stop.unread_language"
	RuleUntoldChange  = "stop.test_change_not_told"
)

// Result is the decision.
type Result struct {
	Decision      string // schemas.GateAllow or schemas.GateBlock
	Rule          string
	Reasons       []string
	NextStep      string
	SystemMessage string // for the user
	Capped        bool
	Override      string
}

// Reason is the text Claude reads when the stop is blocked.
func (r Result) Reason() string {
	if r.Decision != schemas.GateBlock {
		return ""
	}
	var b strings.Builder
	b.WriteString("claimcheck blocked this stop: ")
	b.WriteString(strings.Join(r.Reasons, "; "))
	if r.NextStep != "" {
		b.WriteString("\nNext step: ")
		b.WriteString(r.NextStep)
	}
	return b.String()
}

// Decide applies the rules; ctx bounds the evidence look-ups.
func Decide(ctx context.Context, in Input) Result {
	r := decide(ctx, in)
	if in.ClaimCommand != "" {
		r.NextStep = strings.ReplaceAll(r.NextStep, "`claimcheck claim ", "`"+in.ClaimCommand+" ")
	}
	if r.Rule == RuleAllowed && in.NoMessage && in.Contract != nil && in.Message.Block == nil {
		r.Reasons = append([]string{"the agent's stop carries no final message: judged on this turn's PASS attestations"}, r.Reasons...)
	}
	if r.Decision == schemas.GateBlock && in.FailingRun != nil && unbacked(r.Rule) {
		f := in.FailingRun
		why := fmt.Sprintf("the ledger's newest run of `%s` failed (n=%d)", f.Command, f.N)
		if f.Summary != "" {
			why += ": " + clip(f.Summary, 200)
		}
		r.Reasons = append(r.Reasons, why)
		r.NextStep = fmt.Sprintf("fix what made `%s` fail and run it again; then %s", f.Command, r.NextStep)
	}
	if r.Decision == schemas.GateBlock {
		if in.Override != "" {
			return Result{Decision: schemas.GateAllow, Rule: RuleOverride, Override: in.Override,
				Reasons: append([]string{"operator override: " + in.OverrideReason}, r.Reasons...),
				SystemMessage: "claimcheck: this stop was let through by an operator override (" + in.OverrideReason +
					"); it would have been blocked: " + strings.Join(r.Reasons, "; ")}
		}
		if in.Cap > 0 && in.ConsecutiveBlocks+1 >= in.Cap {
			return Result{Decision: schemas.GateAllow, Rule: RuleCapped, Capped: true, Reasons: r.Reasons,
				SystemMessage: fmt.Sprintf(
					"claimcheck: %d consecutive stops were blocked; this one is let through so the turn can end, "+
						"but its claims are NOT verified: %s", in.ConsecutiveBlocks, strings.Join(r.Reasons, "; "))}
		}
	}
	return r
}

// unbacked says a rule blocks a claim for want of evidence (rather than for
// a malformed block or an unusable citation), where a failing run is what
// the agent most likely overlooked.
func unbacked(rule string) bool {
	return rule == RuleMissingBlock || rule == RuleNoDoneClaim || rule == RuleUnbackedWords || rule == RuleNoChange
}

func block(rule, next string, reasons ...string) Result {
	return Result{Decision: schemas.GateBlock, Rule: rule, Reasons: reasons, NextStep: next}
}

const blockTemplate = "end your final message with a fenced ```claimcheck block: {\"type\":\"done|partial|blocked|delegation\",\"summary\":\"…\",\"claims\":[{\"claim_type\":\"done\",\"attestation_id\":\"<id printed by claimcheck claim>\"}],\"what_succeeded\":\"…\",\"what_remains\":\"…\",\"next_route_or_question\":\"…\"}"

// Pass is a PASS attestation of the session (Input.Passes).
type Pass struct {
	ID    string
	Claim string
}

func decide(ctx context.Context, in Input) Result {
	if in.NoMessage && in.Contract != nil && in.Message.Block == nil && in.Message.BlockErr == nil {
		if len(in.Passes) == 0 {
			return block(RuleMissingBlock, suggestClaim(in.Contract)+", then stop again (this agent's stop carries no final message: "+
				"claimcheck takes the PASS attestations of this turn's task as its claims)",
				fmt.Sprintf("this turn has a task (%q) and no attestation of this session backs it yet", clip(in.Contract.Objective, 120)))
		}
		fb := &finalblock.Block{Type: finalblock.TypeDone}
		kinds := map[string]bool{}
		for _, p := range in.Passes {
			fb.Claims = append(fb.Claims, finalblock.Claim{ClaimType: p.Claim, AttestationID: p.ID})
			kinds[p.Claim] = true
		}
		switch {
		case kinds[policy.Done] || kinds[policy.Partial]:
		case kinds[policy.Blocked]:
			fb.Type = finalblock.TypeBlocked
		case kinds[policy.Delegation]:
			fb.Type = finalblock.TypeDelegation
		}
		in.Message.Block = fb
	}
	m := in.Message
	if m.BlockErr != nil {
		return block(RuleMalformed, "fix the block and stop again; "+blockTemplate,
			"the claimcheck block is malformed: "+m.BlockErr.Error())
	}
	fb := m.Block
	if fb == nil {
		if in.Contract != nil {
			return block(RuleMissingBlock, suggestClaim(in.Contract)+", then "+blockTemplate,
				fmt.Sprintf("this turn has a task (%q) and the message has no claimcheck block", clip(in.Contract.Objective, 120)))
		}
		return phrasesWithoutBlock(in)
	}
	// Check every citation first: a bad one blocks whatever the type.
	var done, ladder, fetch, usable []Attestation
	for i, c := range fb.Claims {
		a, err := in.Evidence.Attestation(ctx, c.AttestationID)
		if err != nil {
			return block(RuleBadCitation, "cite only attestation ids that `claimcheck claim` printed with PASS in this session",
				fmt.Sprintf("claims[%d]: attestation %s cannot be used: %v", i, c.AttestationID, err))
		}
		if a.Claim != c.ClaimType {
			return block(RuleBadCitation,
				fmt.Sprintf("cite it as claim_type %q, or back the %s claim with its own attestation", a.Claim, c.ClaimType),
				fmt.Sprintf("claims[%d]: attestation %s backs a %s claim, not %s", i, a.ID, a.Claim, c.ClaimType))
		}
		if a.Stale != "" {
			next := a.NextStep
			if next == "" {
				next = "produce the evidence again and re-run `claimcheck claim`"
			}
			return block(RuleStale, next, fmt.Sprintf("claims[%d]: attestation %s is stale: %s", i, a.ID, a.Stale))
		}
		if in.Contract != nil && a.Contract != in.ContractN {
			return block(RuleOtherContract, suggestClaim(in.Contract)+" for this turn's task, and cite the new attestation",
				fmt.Sprintf("claims[%d]: attestation %s was made for an earlier task (contract n=%d), not this turn's (n=%d)", i, a.ID,
					a.Contract, in.ContractN))
		}
		usable = append(usable, a)
		switch {
		case a.Validator == "ladder_exhaustion_proof":
			ladder = append(ladder, a)
		case a.Validator == "fetch_attempt_proof":
			fetch = append(fetch, a)
		case a.Claim == policy.Done || a.Claim == policy.Partial:
			done = append(done, a)
		}
	}
	switch fb.Type {
	case finalblock.TypeDone:
		if len(done) == 0 {
			return block(RuleNoDoneClaim, suggestClaim(in.Contract)+", then cite the attestation id in the claimcheck block",
				"the block says done but cites no attestation of a done claim")
		}
	case finalblock.TypeBlocked:
		if len(ladder) == 0 {
			return block(RuleNoLadder,
				"try every hop of the capability ladder, then run `claimcheck claim --claim blocked --validator ladder_exhaustion_proof --args '{}'` and cite it",
				"the block says blocked but cites no ladder_exhaustion_proof attestation")
		}
	case finalblock.TypeDelegation:
		if len(fetch) == 0 {
			return block(RuleNoFetches,
				"try at least 3 different fetch tools, then run `claimcheck claim --claim delegation --validator fetch_attempt_proof --args '{\"keyword\":\"…\"}'` and cite it",
				"the block says delegation but cites no fetch_attempt_proof attestation")
		}
	case finalblock.TypePartial:
		var missing []string
		for _, s := range []struct{ name, v string }{{"what_succeeded", fb.WhatSucceeded}, {"what_remains", fb.WhatRemains},
			{"next_route_or_question", fb.NextRouteOrQuestion}} {
			if strings.TrimSpace(s.v) == "" {
				missing = append(missing, s.name)
			}
		}
		if len(missing) > 0 {
			return block(RulePartialSlots, "fill "+strings.Join(missing, ", ")+" in the claimcheck block",
				"a partial block needs what_succeeded, what_remains and next_route_or_question; empty: "+strings.Join(missing, ", "))
		}
	}
	if r, blocked := untoldTestChanges(m, usable); blocked {
		return r
	}
	if r, blocked := needsChange(in, fb, usable); blocked {
		return r
	}
	// Prose must not claim more than the block backs.
	if r, blocked := unbackedPhrases(in, fb, usable); blocked {
		return r
	}
	reasons := []string{fmt.Sprintf("%s block with %d verified attestation(s)", fb.Type, len(usable))}
	reasons = append(reasons, notes(m)...)
	return Result{Decision: schemas.GateAllow, Rule: RuleAllowed, Reasons: reasons}
}

// phrasesWithoutBlock: a turn without a contract and without a block may
// stop unless its prose claims something.
func phrasesWithoutBlock(in Input) Result {
	if len(in.Message.Phrases) == 0 {
		for _, f := range in.Message.Findings {
			if f.Kind == finalblock.FindingUnreadLanguage {
				return block(RuleUnreadText,
					"end the message with a claimcheck block that says what is and is not done (type partial when nothing is attested: "+
						"what_succeeded, what_remains, next_route_or_question), or write the result in a language claimcheck reads",
					fmt.Sprintf("the message reports results (%s) in %q, in a language claimcheck's claim tables do not cover, "+
						"so it cannot tell a claim from an honest report", f.Detail, clip(f.Text, 80)))
			}
		}
		return Result{Decision: schemas.GateAllow, Rule: RuleNoClaims,
			Reasons: append([]string{"no task in this turn and no claims in the message"}, notes(in.Message)...)}
	}
	p := in.Message.Phrases[0]
	switch p.Kind {
	case finalblock.KindDone:
		return block(RuleUnbackedWords,
			"back it: "+scopeStep(in, p.Scope)+" and cite the attestation in a claimcheck block; or say only what you actually did and saw",
			fmt.Sprintf("the message claims %q (%s) without attested evidence", p.Text, scopeName(p.Scope)))
	case finalblock.KindBlocked:
		return block(RuleUnbackedWords,
			"back it with `claimcheck claim --claim blocked --validator ladder_exhaustion_proof --args '{}'` and a claimcheck block of type blocked, or keep working",
			fmt.Sprintf("the message claims %q without attested evidence", p.Text))
	default:
		return block(RuleUnbackedWords,
			"back it with `claimcheck claim --claim delegation --validator fetch_attempt_proof --args '{\"keyword\":\"…\"}'` and a claimcheck block of type delegation, or keep working",
			fmt.Sprintf("the message asks the human (%q) without attested evidence that the agent could not do it", p.Text))
	}
}

// suggestClaim names the claim command that fits the contract best.
func suggestClaim(c *schemas.Contract) string {
	if c == nil {
		return "run `claimcheck claim --claim done --validator <validator> --args '{…}'`"
	}
	tf := c.TargetFields
	for _, ev := range c.ExpectedVerification {
		if strings.Contains(ev, "test") {
			hint := firstOf(tf.CommandHints, tf.BacktickTokens)
			if hint == "" {
				hint = "<the test command you ran>"
			}
			return fmt.Sprintf(
				"run the tests, then `claimcheck claim --claim done --validator test_pass --args '{\"command_substring\":%q}'`", hint)
		}
	}
	switch {
	case len(tf.CommandHints) > 0:
		return fmt.Sprintf(
			"run `%s`, then `claimcheck claim --claim done --validator command_zero_exit --args '{\"command_substring\":%q}'`", tf.CommandHints[0], tf.CommandHints[0])
	case len(tf.Paths) > 0:
		return fmt.Sprintf("`claimcheck claim --claim done --validator file_diff_present --args '{\"path\":%q}'`", tf.Paths[0])
	case len(tf.URLs) > 0:
		return fmt.Sprintf("`claimcheck claim --claim done --validator http_2xx --args '{\"url\":%q}'`", tf.URLs[0])
	}
	return "run `claimcheck claim --claim done --validator <validator> --args '{…}'` bound to this turn's task"
}

func firstOf(lists ...[]string) string {
	for _, l := range lists {
		if len(l) > 0 {
			return l[0]
		}
	}
	return ""
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

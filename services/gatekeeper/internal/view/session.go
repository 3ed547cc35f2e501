package view

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/command"
	"github.com/claimcheck/claimcheck/pkg/evidence"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
)

type pathAt struct {
	n    uint64
	path string
	// shell: a Bash command that writes files (written, or unknown ones);
	// such writes count only against a contract's named paths (see
	// evidence.EditOf).
	shell   bool
	command string
	written []string
	unknown bool
}

// Run is a recorded shell command run: its ledger position, its command
// line and the first line of its output.
type Run struct {
	N       uint64
	Command string
	Summary string
}

type runAt struct {
	n       uint64
	command string
	failed  bool
	summary string
}

// sessionState is what the view holds of one session. Its methods are
// pure state changes; the View calls them with its lock held.
type sessionState struct {
	// verifier is used by the goroutine following LEDGER alone (outside
	// the View's lock); nil until that goroutine first sees the session.
	verifier  *chain.Verifier
	broken    error
	head      schemas.Position
	promptN   uint64
	promptID  string
	contract  *schemas.Contract
	contractN uint64
	contracts map[uint64]*schemas.Contract
	edits     []pathAt
	runs      []runAt
	// passes are the session's newest PASS verdicts, oldest first: what a
	// stop without a final message is judged on (Snapshot.Passes).
	passes []Pass
	// stops maps the event ids of recent Stop events to their position.
	stops     map[string]uint64
	stopOrder []string
	// Consecutive blocked stops since the last allowed stop or prompt.
	blocks    int
	decisions map[string]bool // decision ids already applied
	override  string          // pending override event id
	overrideR string
	// host is the token of the host whose hook published the session's
	// first event ("" before it, or for sessions recorded without origins).
	host string
}

func newSessionState() *sessionState {
	return &sessionState{contracts: map[uint64]*schemas.Contract{}, stops: map[string]uint64{}, decisions: map[string]bool{}}
}

// prepared is an entry with what sessionState.apply needs decoded (outside
// the View's lock).
type prepared struct {
	e    schemas.Entry
	edit *pathAt
	// shellEdit marks a Bash command that writes files (the staleness
	// check asks command.Writes which, against the contract's paths).
	shellEdit *pathAt
	run       *runAt
	record    *schemas.GateRecord
	override  *schemas.GateOverride
}

func prepare(e schemas.Entry) prepared {
	pr := prepared{e: e}
	if e.Kind != schemas.EntryEvent {
		return pr
	}
	switch e.HookEvent {
	case schemas.HookPostToolUse, schemas.HookPostToolUseFailure:
		ev := evidence.Decode(e)
		switch {
		case evidence.IsEdit(ev.Tool) && !ev.Failed && ev.FilePath != "":
			pr.edit = &pathAt{n: e.N, path: ev.FilePath}
		case ev.Tool == "Bash" && ev.Command != "":
			sum := evidence.Summarize(ev.Output)
			failed := ev.Failed || (sum.Recognized && sum.Failed > 0)
			pr.run = &runAt{n: e.N, command: ev.Command, failed: failed, summary: summaryLine(ev.Output)}
			if written, unknown := ev.Writes(); len(written) > 0 || unknown {
				pr.shellEdit = &pathAt{n: e.N, shell: true, command: ev.Command, written: written, unknown: unknown}
			}
		}
	case schemas.GateDecisionEvent:
		var r schemas.GateRecord
		if e.Payload != nil && json.Unmarshal([]byte(*e.Payload), &r, json.RejectUnknownMembers(false)) == nil {
			pr.record = &r
		}
	case schemas.GateOverrideEvent:
		var o schemas.GateOverride
		if e.Payload != nil && json.Unmarshal([]byte(*e.Payload), &o, json.RejectUnknownMembers(false)) == nil {
			pr.override = &o
		}
	}
	return pr
}

// apply moves the session to a prepared entry, keeping at most maxTrail
// edits and runs.
func (s *sessionState) apply(pr prepared, maxTrail int) {
	e := pr.e
	s.head = schemas.Position{N: e.N, Hash: e.Hash, EventID: e.EventID}
	if h, ok := strings.CutPrefix(e.Origin, subject.OriginHook+":"); ok && s.host == "" && e.Kind == schemas.EntryEvent {
		s.host = h
	}
	switch e.Kind {
	case schemas.EntryVerdict:
		if v := e.Verdict; v != nil && v.Verdict == schemas.Pass && v.AttestationID != "" {
			p := Pass{ID: v.AttestationID, Claim: v.Claim}
			if v.Contract != nil {
				p.ContractN = v.Contract.N
			}
			s.passes = appendBounded(s.passes, p, 64)
		}
		return
	case schemas.EntryContract:
		if e.Contract == nil {
			return
		}
		s.contracts[e.N] = e.Contract
		if e.Contract.PromptEventID == s.promptID {
			s.contract, s.contractN = e.Contract, e.N
		}
		return
	case schemas.EntryEvent:
	default:
		return
	}
	switch e.HookEvent {
	case schemas.HookUserPromptSubmit:
		s.promptN, s.promptID = e.N, e.EventID
		s.contract, s.contractN = nil, 0
		s.blocks = 0
	case schemas.HookStop, schemas.HookSubagentStop:
		s.stops[e.EventID] = e.N
		s.stopOrder = append(s.stopOrder, e.EventID)
		if len(s.stopOrder) > 64 {
			delete(s.stops, s.stopOrder[0])
			s.stopOrder = s.stopOrder[1:]
		}
	case schemas.HookPostToolUse, schemas.HookPostToolUseFailure:
		switch {
		case pr.edit != nil:
			s.edits = appendBounded(s.edits, *pr.edit, maxTrail)
		case pr.run != nil:
			s.runs = appendBounded(s.runs, *pr.run, maxTrail)
		}
		if pr.shellEdit != nil {
			s.edits = appendBounded(s.edits, *pr.shellEdit, maxTrail)
		}
	case schemas.GateDecisionEvent:
		if pr.record != nil {
			s.decided(pr.record.Decision)
		}
	case schemas.GateOverrideEvent:
		if pr.override != nil {
			s.override, s.overrideR = e.EventID, pr.override.Reason
		}
	}
}

// decided counts consecutive blocks. A decision is applied once, when it
// is made (by this gatekeeper) or when its record is read (made by
// another), whichever comes first.
func (s *sessionState) decided(d schemas.GateDecision) {
	if d.HookEvent != schemas.HookStop || d.DecisionID == "" || s.decisions[d.DecisionID] {
		return
	}
	s.decisions[d.DecisionID] = true
	if len(s.decisions) > 256 {
		clear(s.decisions) // old ids never come back in practice; bound memory
		s.decisions[d.DecisionID] = true
	}
	switch d.Decision {
	case schemas.GateBlock:
		s.blocks++
	case schemas.GateAllow:
		s.blocks = 0
	}
	if d.Override != "" && d.Override == s.override {
		s.override, s.overrideR = "", ""
	}
}

func appendBounded[T any](list []T, v T, n int) []T {
	list = append(list, v)
	if len(list) > n {
		list = append(list[:0:0], list[len(list)-n:]...)
	}
	return list
}

// summaryLine is the line of a run's output that says most about it: the
// first that reports a failure (FAIL, failed, error, panic, assert), else
// the first that is not Claude Code's "Exit code N", cut to 160 bytes.
func summaryLine(s string) string {
	var first string
	for line := range strings.Lines(s) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "Exit code ") {
			continue
		}
		if first == "" {
			first = line
		}
		lower := strings.ToLower(line)
		if strings.Contains(lower, "fail") || strings.Contains(lower, "error") || strings.Contains(lower, "panic") ||
			strings.Contains(lower, "assert") {
			first = line
			break
		}
	}
	if first == "" {
		first = strings.TrimSpace(s)
	}
	if len(first) > 160 {
		first = first[:160]
		for !utf8.ValidString(first) {
			first = first[:len(first)-1] // a rune cut in half
		}
		first += "…"
	}
	return first
}

// Snapshot is what a Stop decision reads of one session.
type Snapshot struct {
	// Broken is the fault that stopped the session's chain verifying; nothing
	// after it is applied.
	Broken error
	// Head is the last entry applied.
	Head schemas.Position
	// Contract is the latest prompt's contract (nil when it was not
	// actionable), ContractN its position.
	Contract  *schemas.Contract
	ContractN uint64
	// Blocks counts the stops blocked since the last allowed stop or prompt.
	Blocks int
	// Override is the id of a pending operator override, OverrideReason
	// its reason.
	Override       string
	OverrideReason string
	// StopSeen says the Stop event waited for is in the view.
	StopSeen bool

	contracts map[uint64]*schemas.Contract
	edits     []pathAt
	runs      []runAt
	passes    []Pass
}

// Pass is a PASS verdict of the session: its attestation, claim type and
// the position of the contract it was made under (0: none).
type Pass struct {
	ID        string
	Claim     string
	ContractN uint64
}

// Passes returns the newest PASS of each claim type made under the contract
// at contractN, oldest first: the claims of a stop whose agent sends no
// final message to cite them in.
func (sn Snapshot) Passes(contractN uint64) []Pass {
	var out []Pass
	seen := map[string]bool{}
	for i := len(sn.passes) - 1; i >= 0; i-- {
		p := sn.passes[i]
		if p.ContractN == contractN && !seen[p.Claim] {
			seen[p.Claim] = true
			out = append(out, p)
		}
	}
	slices.Reverse(out)
	return out
}

// snapshot copies what a decision reads; call with the View's lock held
// (a nil session is an unknown one).
func (s *sessionState) snapshot() Snapshot {
	if s == nil {
		return Snapshot{}
	}
	return Snapshot{
		Broken: s.broken, Head: s.head, Contract: s.contract, ContractN: s.contractN,
		contracts: s.contracts, edits: s.edits, runs: s.runs, passes: s.passes, Blocks: s.blocks,
		Override: s.override, OverrideReason: s.overrideR,
	}
}

// FailingRun is the newest run in the session's trail whose command has
// not run successfully since: what an unbacked "tests pass" is most likely
// wrong about. ok is false when every command's latest run passed.
func (sn Snapshot) FailingRun() (r Run, ok bool) {
	passed := map[string]bool{}
	for i := len(sn.runs) - 1; i >= 0; i-- {
		run := sn.runs[i]
		switch {
		case passed[run.command]:
		case run.failed:
			return Run{N: run.n, Command: run.command, Summary: run.summary}, true
		default:
			passed[run.command] = true
		}
	}
	return r, false
}

// Staleness says why an attested pass no longer counts, from the entries
// after its evidence range: a later successful edit of a bound path (the
// contract's paths; any path when it names none) or a later failing run of
// the same command. It returns the reason and the next step, or "".
func (sn Snapshot) Staleness(v schemas.Verdict) (reason, next string) {
	switch v.Validator {
	case "test_pass", "command_zero_exit":
	default:
		return "", ""
	}
	var args map[string]any
	_ = json.Unmarshal(v.Args, &args)
	cmd, _ := args["command_substring"].(string)
	var paths []string
	if v.Contract != nil {
		if c := sn.contracts[v.Contract.N]; c != nil {
			paths = c.TargetFields.Paths
		}
	}
	for _, e := range sn.edits {
		if e.n <= v.Range.To {
			continue
		}
		what, bound := "", false
		if e.shell {
			if len(paths) > 0 {
				what, bound = evidence.ShellEditOf(e.command, e.written, e.unknown, paths)
			}
		} else {
			what, bound = evidence.EditOf(evidence.Entry{Done: true, Tool: "Edit", FilePath: e.path}, paths)
		}
		if bound {
			return fmt.Sprintf("%s was edited at n=%d, after the evidence (n≤%d)", what, e.n, v.Range.To),
				fmt.Sprintf(
					"re-run `%s` after your last edit, then `claimcheck claim --claim %s --validator %s --args '%s'` and cite the new attestation", cmd, v.Claim, v.Validator, v.Args)
		}
	}
	if cmd != "" {
		for _, r := range sn.runs {
			if r.n > v.Range.To && r.failed && command.Runs(r.command, cmd) {
				return fmt.Sprintf("a later run of `%s` failed at n=%d: %s", cmd, r.n, r.summary),
					fmt.Sprintf("fix the failure, re-run `%s`, then `claimcheck claim` again", cmd)
			}
		}
	}
	return "", ""
}

// Changed names the first of paths changed after position after, as far
// as the trail shows: a successful Edit/Write/MultiEdit/NotebookEdit of
// it, or a shell command that names it among the files it writes (a write
// the command line does not name does not count here: it shows no change
// to that file). ok is false when none was.
func (sn Snapshot) Changed(after uint64, paths []string) (what string, n uint64, ok bool) {
	for _, e := range sn.edits {
		if e.n <= after {
			continue
		}
		for _, p := range paths {
			switch {
			case !e.shell && evidence.SamePath(e.path, p):
				return e.path, e.n, true
			case e.shell && slices.ContainsFunc(e.written, func(w string) bool { return evidence.SamePath(w, p) }):
				return p + " (by `" + e.command + "`)", e.n, true
			}
		}
	}
	return "", 0, false
}

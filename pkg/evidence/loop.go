package evidence

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/claimcheck/claimcheck/schemas"
)

// Loop follows a session's tool loop, so that only tool results the agent's
// tool loop produced count as evidence. Claude Code and Codex give every
// tool call a tool_use_id and fire PreToolUse before the tool runs and
// PostToolUse (or PostToolUseFailure) after it, both with the call's
// tool_input. A result with no PreToolUse of the same id and the same input
// recorded before it did not come from that loop: it was published some
// other way (a payload piped into the hook by hand). Nor did one published
// by another host than the one the session's events come from.
//
// Gemini CLI, Cursor and Copilot send no tool call id (and claimcheck
// invents none). A result without one pairs with the earliest PreToolUse
// without one, of the same tool and input, recorded before it and not yet
// paired: a gated call of that very input came first, and each PreToolUse
// backs one result. Unlike an agent's id, tool and input are known to the
// command that runs, which could pipe a result for itself into the hook
// before the agent reports the real one. The agent's own result then finds
// no call left to pair with; a result of a call without an id that finds
// none, when an earlier result of the same tool and input did pair, voids
// every result of that tool and input in the session (Observe returns the
// earlier ones as Revoked). A piped result can thus take evidence away but
// never add it, unless the agent's own result never reaches the ledger.
//
// Observe the session's entries in ledger order; it marks such results
// Untrusted with the reason.
type Loop struct {
	owner string              // origin of the session's first agent event
	pre   map[string]toolCall // tool_use_id → the PreToolUse
	seen  map[string]struct{} // tool_use_ids already matched by a result
	// idless: calls without a tool_use_id, by tool and input.
	idless map[string]*idlessCall
}

type toolCall struct {
	n      uint64
	digest string // of the input as received
	input  string // the stored (scrubbed) input, when the digest is missing
}

// idlessCall is what the loop knows of one tool and input called without an
// id: its PreToolUses not yet paired, oldest first, the results paired with
// the others, and whether a result too many voided them all (at void).
type idlessCall struct {
	pending []toolCall
	paired  []uint64
	void    uint64
}

// Revoked is an earlier tool result that a later entry showed not to be
// the agent's own: its Untrusted reason is Reason from now on.
type Revoked struct {
	N      uint64
	Reason string
}

// Observe takes the session's next entry and sets e.Untrusted for a tool
// result that is not the agent's. It returns the earlier results that e
// shows were not the agent's either (see Loop), for the caller to mark.
func (l *Loop) Observe(e *Entry) []Revoked {
	if l.pre == nil {
		l.pre, l.seen, l.idless = map[string]toolCall{}, map[string]struct{}{}, map[string]*idlessCall{}
	}
	if l.owner == "" && agentOrigin(e.Origin) {
		l.owner = e.Origin
	}
	switch {
	case e.HookEvent == schemas.HookPreToolUse && e.ToolUseID != "":
		if _, dup := l.pre[e.ToolUseID]; !dup {
			l.pre[e.ToolUseID] = toolCall{n: e.N, digest: e.InputDigest, input: e.Input}
		}
	case e.HookEvent == schemas.HookPreToolUse:
		// Only the session's own host's calls: ids do not cross hosts either
		// (a result from another host is refused in judge).
		if k := callKey(e.Tool, e.InputDigest, e.Input); k != "" && e.Origin == l.owner {
			c := l.call(k)
			c.pending = append(c.pending, toolCall{n: e.N, digest: e.InputDigest, input: e.Input})
		}
	case e.Done:
		var revoked []Revoked
		e.Untrusted, revoked = l.judge(e)
		return revoked
	}
	return nil
}

func (l *Loop) call(k string) *idlessCall {
	c := l.idless[k]
	if c == nil {
		c = &idlessCall{}
		l.idless[k] = c
	}
	return c
}

func (l *Loop) judge(e *Entry) (string, []Revoked) {
	if agentOrigin(e.Origin) && l.owner != "" && e.Origin != l.owner {
		return fmt.Sprintf("published by %s, while the session's events come from %s", e.Origin, l.owner), nil
	}
	if e.ToolUseID == "" {
		return l.judgeIdless(e)
	}
	p, ok := l.pre[e.ToolUseID]
	switch {
	case !ok:
		return fmt.Sprintf("no PreToolUse of tool_use_id %s was recorded before it", e.ToolUseID), nil
	case !sameInput(p, e):
		return fmt.Sprintf("its tool_input differs from that of the PreToolUse of tool_use_id %s (n=%d)", e.ToolUseID, p.n), nil
	}
	if _, again := l.seen[e.ToolUseID]; again {
		return fmt.Sprintf("tool_use_id %s already has its result", e.ToolUseID), nil
	}
	l.seen[e.ToolUseID] = struct{}{}
	return "", nil
}

// judgeIdless pairs a result without a tool_use_id (see Loop).
func (l *Loop) judgeIdless(e *Entry) (string, []Revoked) {
	k := callKey(e.Tool, e.InputDigest, e.Input)
	if k == "" {
		return "it has no tool_use_id and its tool_input cannot be read, so no PreToolUse can pair it", nil
	}
	c := l.call(k)
	switch {
	case c.void != 0:
		return fmt.Sprintf("the result at n=%d of the same %s call found no PreToolUse left to pair with: "+
			"a result was published besides the agent's own, so no result of this call backs anything in this session", c.void, e.Tool), nil
	case len(c.pending) > 0:
		c.pending = c.pending[1:]
		c.paired = append(c.paired, e.N)
		return "", nil
	case len(c.paired) == 0:
		return "it has no tool_use_id and no unpaired PreToolUse without one, of the same tool and tool_input, " +
			"was recorded before it", nil
	}
	c.void = e.N
	why := fmt.Sprintf("the result at n=%d of the same %s call found no PreToolUse left to pair with: "+
		"a result was published besides the agent's own, so no result of this call backs anything in this session", e.N, e.Tool)
	revoked := make([]Revoked, len(c.paired))
	for i, n := range c.paired {
		revoked[i] = Revoked{N: n, Reason: why}
	}
	c.paired = nil
	return fmt.Sprintf("it has no tool_use_id and every PreToolUse of the same tool and tool_input already has its result "+
		"(at n=%d): a result was published besides the agent's own, so no result of this call backs anything in this session",
		revoked[len(revoked)-1].N), revoked
}

func agentOrigin(o string) bool {
	return strings.HasPrefix(o, "hook:") || strings.HasPrefix(o, "http:")
}

// sameInput compares the inputs as received when both digests are known,
// else their stored forms (entries recorded before ingest kept digests).
func sameInput(p toolCall, e *Entry) bool {
	if p.digest != "" && e.InputDigest != "" {
		return p.digest == e.InputDigest
	}
	a, b := canonical(p.input), canonical(e.Input)
	return a != "" && a == b
}

// callKey names a tool call without an id by its tool and input: the
// input's digest as received, else the digest of its stored canonical form.
func callKey(tool, digest, input string) string {
	if digest != "" {
		return tool + "\x00" + digest
	}
	if c := canonical(input); c != "" {
		return tool + "\x00sha256:" + c
	}
	return ""
}

func canonical(input string) string {
	v := jsontext.Value(input).Clone()
	if len(v) == 0 || v.Canonicalize() != nil {
		return ""
	}
	sum := sha256.Sum256(v)
	return hex.EncodeToString(sum[:])
}

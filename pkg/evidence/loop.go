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
// tool loop produced count as evidence. Claude Code gives every tool call a
// tool_use_id and fires PreToolUse before the tool runs and PostToolUse (or
// PostToolUseFailure) after it, both with the call's tool_input. A result
// with no PreToolUse of the same id and the same input recorded before it
// did not come from that loop: it was published some other way (a payload
// piped into the hook by hand). Nor did one published by another host than
// the one the session's events come from.
//
// Observe the session's entries in ledger order; it marks such results
// Untrusted with the reason.
type Loop struct {
	owner string              // origin of the session's first agent event
	pre   map[string]toolCall // tool_use_id → the PreToolUse
	seen  map[string]struct{} // tool_use_ids already matched by a result
}

type toolCall struct {
	n      uint64
	digest string // of the input as received
	input  string // the stored (scrubbed) input, when the digest is missing
}

// Observe takes the session's next entry and sets e.Untrusted for a tool
// result that is not the agent's.
func (l *Loop) Observe(e *Entry) {
	if l.pre == nil {
		l.pre, l.seen = map[string]toolCall{}, map[string]struct{}{}
	}
	if l.owner == "" && agentOrigin(e.Origin) {
		l.owner = e.Origin
	}
	switch {
	case e.HookEvent == schemas.HookPreToolUse && e.ToolUseID != "":
		if _, dup := l.pre[e.ToolUseID]; !dup {
			l.pre[e.ToolUseID] = toolCall{n: e.N, digest: e.InputDigest, input: e.Input}
		}
	case e.Done:
		e.Untrusted = l.judge(e)
	}
}

func (l *Loop) judge(e *Entry) string {
	if agentOrigin(e.Origin) && l.owner != "" && e.Origin != l.owner {
		return fmt.Sprintf("published by %s, while the session's events come from %s", e.Origin, l.owner)
	}
	if e.ToolUseID == "" {
		return "it has no tool_use_id, so no PreToolUse can pair it " +
			"(Claude Code sends one since 2.0.43 and Codex always; Gemini CLI, Cursor and Copilot never do)"
	}
	p, ok := l.pre[e.ToolUseID]
	switch {
	case !ok:
		return fmt.Sprintf("no PreToolUse of tool_use_id %s was recorded before it", e.ToolUseID)
	case !sameInput(p, e):
		return fmt.Sprintf("its tool_input differs from that of the PreToolUse of tool_use_id %s (n=%d)", e.ToolUseID, p.n)
	}
	if _, again := l.seen[e.ToolUseID]; again {
		return fmt.Sprintf("tool_use_id %s already has its result", e.ToolUseID)
	}
	l.seen[e.ToolUseID] = struct{}{}
	return ""
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

func canonical(input string) string {
	v := jsontext.Value(input).Clone()
	if len(v) == 0 || v.Canonicalize() != nil {
		return ""
	}
	sum := sha256.Sum256(v)
	return hex.EncodeToString(sum[:])
}

package evidence

import (
	"strings"
	"testing"

	"github.com/claimcheck/claimcheck/pkg/payload"
	"github.com/claimcheck/claimcheck/schemas"
)

func TestLoopMarksResultsNotFromTheToolLoop(t *testing.T) {
	n := uint64(0)
	entry := func(event, origin, useID, raw string, digest bool) Entry {
		n++
		e := schemas.Entry{N: n, Kind: schemas.EntryEvent, HookEvent: event, ToolName: "Bash", Origin: origin, Payload: &raw, ToolUseID: useID}
		if digest {
			e.ToolInput = payload.ToolInputDigest([]byte(raw))
		}
		return Decode(e)
	}
	pre := func(id, cmd string, digest bool) Entry {
		return entry("PreToolUse", "hook:laptop", id, `{"tool_input":{"command":"`+cmd+`"},"tool_use_id":"`+id+`"}`, digest)
	}
	post := func(id, cmd, origin string, digest bool) Entry {
		return entry("PostToolUse", origin, id, `{"tool_input":{"command":"`+cmd+`"},"tool_use_id":"`+id+`","tool_response":{"stdout":"ok"}}`, digest)
	}
	var l Loop
	tests := []struct {
		e    Entry
		want string
	}{
		{pre("t1", "go test", true), ""},
		{post("t1", "go test", "hook:laptop", true), ""},
		{post("t1", "go test", "hook:laptop", true), "already has its result"},
		{post("t2", "go test", "hook:laptop", true), "no PreToolUse of tool_use_id t2"},
		{pre("t3", "ls", true), ""},
		{post("t3", "go test", "hook:laptop", true), "tool_input differs"},
		{pre("t4", "go test", true), ""},
		{post("t4", "go test", "hook:desk", true), "published by hook:desk, while the session's events come from hook:laptop"},
		{post("", "go test", "hook:laptop", true), "has no tool_use_id"},
		// Entries recorded before ingest kept digests pair by their stored input.
		{pre("t5", "make", false), ""},
		{post("t5", "make", "hook:laptop", false), ""},
		{pre("t6", "make", false), ""},
		{post("t6", "make all", "hook:laptop", false), "tool_input differs"},
	}
	for i, tt := range tests {
		e := tt.e
		l.Observe(&e)
		if tt.want == "" && e.Untrusted != "" || tt.want != "" && !strings.Contains(e.Untrusted, tt.want) {
			t.Errorf("entry %d (%s %s): Untrusted %q, want %q", i, e.HookEvent, e.ToolUseID, e.Untrusted, tt.want)
		}
	}
}

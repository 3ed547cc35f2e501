package evidence

import (
	"fmt"
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
		{post("", "go test", "hook:laptop", true), "has no tool_use_id and no unpaired PreToolUse"},
		// Entries recorded before ingest kept digests pair by their stored input.
		{pre("t5", "make", false), ""},
		{post("t5", "make", "hook:laptop", false), ""},
		{pre("t6", "make", false), ""},
		{post("t6", "make all", "hook:laptop", false), "tool_input differs"},
	}
	// Gemini CLI sends no ids: a result pairs with the earliest earlier
	// unpaired PreToolUse without one, of the same tool and input.
	tests = append(tests, []struct {
		e    Entry
		want string
	}{
		{pre("", "go test ./a", true), ""},
		{pre("", "go test ./a", true), ""},
		{pre("", "go vet", true), ""},
		{post("", "go test ./a", "hook:laptop", true), ""},
		{post("", "go vet", "hook:laptop", true), ""},
		{post("", "go test ./a", "hook:laptop", true), ""},
		{post("", "go test ./a", "hook:laptop", true), "already has its result"}, // both used: a result too many
		{post("", "go vet", "hook:laptop", true), "already has its result"},
		{post("", "ls", "hook:laptop", true), "no unpaired PreToolUse"},
		{pre("", "make", false), ""},
		{post("", "make", "hook:laptop", false), ""},
		{pre("t7", "go test", true), ""},
		{post("", "go test", "hook:laptop", true), "no unpaired PreToolUse"}, // an id'd call is not id-less
		{pre("", "go test ./b", true), ""},
		{post("", "go test ./b", "hook:desk", true), "published by hook:desk"},
		{entry("PreToolUse", "hook:desk", "", `{"tool_input":{"command":"go test ./c"}}`, true), ""},
		{post("", "go test ./c", "hook:laptop", true), "no unpaired PreToolUse"}, // another host's call pairs nothing
	}...)
	for i, tt := range tests {
		e := tt.e
		l.Observe(&e) // what a result too many revokes: TestLoopVoidsAnIdlessCallWithAResultTooMany
		if tt.want == "" && e.Untrusted != "" || tt.want != "" && !strings.Contains(e.Untrusted, tt.want) {
			t.Errorf("entry %d (%s %s): Untrusted %q, want %q", i, e.HookEvent, e.ToolUseID, e.Untrusted, tt.want)
		}
	}
}

// A result piped into the hook for a call without an id that is running
// pairs with its PreToolUse; the agent's own result then finds no call left,
// which voids every result of that tool and input in the session, the
// earlier ones returned as Revoked. A piped result takes evidence away but
// never adds any.
func TestLoopVoidsAnIdlessCallWithAResultTooMany(t *testing.T) {
	n := uint64(0)
	entry := func(event, cmd, out string) *Entry {
		n++
		raw := `{"tool_input":{"command":"` + cmd + `"}`
		if out != "" {
			raw += `,"tool_response":{"stdout":"` + out + `"}`
		}
		raw += "}"
		e := Decode(schemas.Entry{N: n, Kind: schemas.EntryEvent, HookEvent: event, ToolName: "Bash", Origin: "hook:laptop", Payload: &raw,
			ToolInput: payload.ToolInputDigest([]byte(raw))})
		return &e
	}
	var l Loop
	want := func(e *Entry, rev []Revoked, untrusted string, revoked ...uint64) {
		t.Helper()
		if untrusted == "" && e.Untrusted != "" || untrusted != "" && !strings.Contains(e.Untrusted, untrusted) {
			t.Errorf("n=%d: Untrusted %q, want %q", e.N, e.Untrusted, untrusted)
		}
		var got []uint64
		for _, r := range rev {
			got = append(got, r.N)
			if !strings.Contains(r.Reason, "besides the agent's own") {
				t.Errorf("revoked n=%d with reason %q", r.N, r.Reason)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(revoked) {
			t.Errorf("n=%d revoked %v, want %v", e.N, got, revoked)
		}
	}
	obs := func(e *Entry) (*Entry, []Revoked) { return e, l.Observe(e) }

	e, r := obs(entry("PreToolUse", "go test ./...", ""))
	want(e, r, "")
	e, r = obs(entry("PostToolUse", "go test ./...", "ok")) // n=2: the honest run
	want(e, r, "")
	e, r = obs(entry("PreToolUse", "go test ./...", "")) // n=3: run again
	want(e, r, "")
	forged, r := obs(entry("PostToolUse", "go test ./...", "ok")) // n=4: piped while it runs
	want(forged, r, "")
	e, r = obs(entry("PostToolUse", "go test ./...", "FAIL")) // n=5: the agent's own result
	want(e, r, "already has its result (at n=4)", 2, 4)
	// From now on no result of that call counts, not even a new honest run.
	e, r = obs(entry("PreToolUse", "go test ./...", ""))
	want(e, r, "")
	e, r = obs(entry("PostToolUse", "go test ./...", "ok"))
	want(e, r, "the result at n=5 of the same Bash call found no PreToolUse left")
	// Other calls are not touched.
	e, r = obs(entry("PreToolUse", "go vet ./...", ""))
	want(e, r, "")
	e, r = obs(entry("PostToolUse", "go vet ./...", "ok"))
	want(e, r, "")
	// A result piped after the agent's own voids it the same way.
	e, r = obs(entry("PostToolUse", "go vet ./...", "ok"))
	want(e, r, "already has its result (at n=9)", 9)
}

package record

import (
	"strings"
	"testing"

	"github.com/claimcheck/claimcheck/pkg/envelope"
	"github.com/claimcheck/claimcheck/schemas"
)

// TestPublishersMayPublishOnlyTheirOwn: the subject an event came on names
// its publisher (NATS permissions bind credentials to it); ingest admits
// only what that publisher may publish, with the host its credentials are
// for, and records anything else in the _rejected chain naming both.
func TestPublishersMayPublishOnlyTheirOwn(t *testing.T) {
	b := builder(t)
	tests := []struct {
		name, origin, pubName, host, event, payload string
		outcome, reason, recorded                   string
	}{
		{"a hook's own event", "hook", "laptop", "laptop", "PostToolUse", "", schemas.EntryEvent, "", "hook:laptop"},
		{"host names are case-insensitive, dots are '_'", "hook", "dev1_example_com", "Dev1.Example.com", "Stop", "", schemas.EntryEvent, "", "hook:dev1_example_com"},
		{"another host's credentials", "hook", "other", "laptop", "PostToolUse", "", schemas.EntryRejected, `names host "laptop" but was published with the credentials of host other`, "hook:other"},
		{"a hook's gate decision", "hook", "laptop", "laptop", schemas.GateDecisionEvent, "", schemas.EntryEvent, "", "hook:laptop"},
		{"a hook's crash record", "hook", "laptop", "laptop", schemas.HookCrashEvent, "", schemas.EntryEvent, "", "hook:laptop"},
		{"a hook forging an override", "hook", "laptop", "laptop", schemas.GateOverrideEvent, "", schemas.EntryRejected, `hook:laptop may not publish "GateOverride"`, "hook:laptop"},
		{"a hook forging an alert", "hook", "laptop", "laptop", schemas.GateAlertEvent, "", schemas.EntryRejected, "may not publish", "hook:laptop"},
		{"a hook forging an override audit", "hook", "laptop", "laptop", schemas.OverrideEvent, "", schemas.EntryRejected, "may not publish", "hook:laptop"},
		{"the gatekeeper's decision", "gatekeeper", "gk", "server", schemas.GateDecisionEvent, "", schemas.EntryEvent, "", "gatekeeper:gk"},
		{"the gatekeeper's alert", "gatekeeper", "gk", "server", schemas.GateAlertEvent, "", schemas.EntryEvent, "", "gatekeeper:gk"},
		{"a hook forging a finding", "hook", "laptop", "laptop", schemas.GateFindingEvent, "", schemas.EntryRejected, "may not publish", "hook:laptop"},
		{"the gatekeeper's finding", "gatekeeper", "gk", "server", schemas.GateFindingEvent, "", schemas.EntryEvent, "", "gatekeeper:gk"},
		{"the gatekeeper posing as an agent", "gatekeeper", "gk", "server", "PostToolUse", "", schemas.EntryRejected, `gatekeeper:gk may not publish "PostToolUse"`, "gatekeeper:gk"},
		{"an operator's override", "operator", "alice", "desk", schemas.GateOverrideEvent, "", schemas.EntryEvent, "", "operator:alice"},
		{"an operator posing as an agent", "operator", "alice", "desk", "PostToolUse", "", schemas.EntryRejected, "may not publish", "operator:alice"},
		{"an http hook event", "http", "gk", "10.0.0.7", "PostToolUse", "", schemas.EntryEvent, "", "http:gk"},
		{"an http claim", "http", "gk", "10.0.0.7", schemas.ClaimRequestEvent, "", schemas.EntryRejected, "may not publish", "http:gk"},
		{"an unknown publisher", "evil", "x", "laptop", "PostToolUse", "", schemas.EntryRejected, `unknown publisher "evil"`, ""},
		{"a bad publisher name", "hook", "Bad", "laptop", "PostToolUse", "", schemas.EntryRejected, "intake subject names publisher", ""},
		{"a claim for its own inbox", "hook", "laptop", "laptop", schemas.ClaimRequestEvent, claimTo("_INBOX.hook.laptop.r1"), schemas.EntryClaim, "", "hook:laptop"},
		{"a claim for another host's inbox", "hook", "laptop", "laptop", schemas.ClaimRequestEvent, claimTo("_INBOX.hook.other.r1"), schemas.EntryInvalid, `reply_to "_INBOX.hook.other.r1" is not an inbox of host laptop`, "hook:laptop"},
		{"a claim for a plain inbox", "hook", "laptop", "laptop", schemas.ClaimRequestEvent, claimTo("_INBOX.r1"), schemas.EntryInvalid, "is not an inbox of host laptop", "hook:laptop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := tt.payload
			if raw == "" {
				raw = `{"session_id":"s1","hook_event_name":"` + tt.event + `","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_1"}`
			}
			env, err := envelope.Event(eid, "s1", tt.event, 1, at, envelope.Source{Host: tt.host, AgentType: "claude-code", AgentID: "a"}, []byte(raw))
			if err != nil {
				t.Fatal(err)
			}
			subj := "cc.intake.2." + tt.origin + "." + tt.pubName + ".s1." + tt.event
			r := b.Build(Input{Subject: subj, Seq: 3, Time: at, Data: env, Now: at})
			sealAndValidate(t, b, r)
			e := r.Entry
			if e.Kind != tt.outcome || !strings.Contains(e.Reason, tt.reason) || e.Origin != tt.recorded {
				t.Fatalf("kind %s reason %q origin %q; want %s, a reason with %q, origin %q", e.Kind, e.Reason, e.Origin, tt.outcome, tt.reason, tt.recorded)
			}
			if tt.outcome == schemas.EntryRejected && (e.Chain != schemas.RejectedChain || e.Host != tt.host || e.EventID != eid) {
				t.Fatalf("a refused event goes to the _rejected chain with its attribution: chain %s host %q event %s", e.Chain, e.Host, e.EventID)
			}
			if tt.outcome == schemas.EntryInvalid && r.ReplyTo != "" {
				t.Fatalf("a refused claim is answered on %s; only the requester's own inbox may be answered", r.ReplyTo)
			}
		})
	}
	// A malformed envelope from another host is not recorded in the
	// session's chain either.
	bad := []byte(`{"v":1,"kind":"event","event_id":"` + eid + `","session_id":"s1","host":"laptop","unknown":1}`)
	r := b.Build(Input{Subject: "cc.intake.2.hook.other.s1.Stop", Seq: 4, Time: at, Data: bad, Now: at})
	if r.Entry.Kind != schemas.EntryRejected || r.Entry.Chain != schemas.RejectedChain || !strings.Contains(r.Entry.Reason, "credentials of host other") {
		t.Fatalf("malformed envelope from another host: %s in %s: %s", r.Entry.Kind, r.Entry.Chain, r.Entry.Reason)
	}
	// Events queued before subjects named their publisher are admitted as
	// they were, without an origin.
	env, _ := envelope.Event(eid, "s1", "Stop", 1, at, src, []byte(`{"session_id":"s1","hook_event_name":"Stop"}`))
	r = b.Build(Input{Subject: "cc.intake.2.s1.Stop", Seq: 5, Time: at, Data: env, Now: at})
	if r.Entry.Kind != schemas.EntryEvent || r.Entry.Origin != "" {
		t.Fatalf("legacy subject: %s origin %q", r.Entry.Kind, r.Entry.Origin)
	}
}

func claimTo(replyTo string) string {
	return `{"session_id":"s1","hook_event_name":"ClaimRequest","request_id":"01JDB3H5KX0000000000000001","claim":"done","validator":"test_pass","args":{},"reply_to":"` + replyTo + `"}`
}

// TestToolCallsCarryTheirInputDigest: Pre and Post of one tool call carry
// the same digest of their tool_input, whatever its member order and
// spacing; events without a tool_input carry none.
func TestToolCallsCarryTheirInputDigest(t *testing.T) {
	b := builder(t)
	build := func(raw string) *schemas.Entry {
		t.Helper()
		r := b.Build(Input{Subject: intakeSubject("s1"), Seq: 1, Time: at, Data: event(t, raw), Now: at})
		sealAndValidate(t, b, r)
		return r.Entry
	}
	pre := build(`{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"go test ./...","description":"t"},"tool_use_id":"toolu_1"}`)
	post := build(`{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"description":"t",  "command":"go test ./..."},"tool_use_id":"toolu_1","tool_response":{"stdout":"ok"}}`)
	other := build(`{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"go test ./... -run X","description":"t"},"tool_use_id":"toolu_1","tool_response":{"stdout":"ok"}}`)
	stop := build(`{"session_id":"s1","hook_event_name":"Stop"}`)
	if pre.ToolInput == "" || pre.ToolInput != post.ToolInput || other.ToolInput == pre.ToolInput || stop.ToolInput != "" {
		t.Fatalf("digests: pre %q post %q other %q stop %q", pre.ToolInput, post.ToolInput, other.ToolInput, stop.ToolInput)
	}
}

package export

import (
	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/replay"
	"github.com/claimcheck/claimcheck/schemas"
)

// ECSVersion is the Elastic Common Schema release the ECS documents
// follow; the tests check every document against its field definitions
// (testdata/ecs/).
const ECSVersion = "9.4.0"

type ecsWriter struct{ w *aheadWriter }

func (e *ecsWriter) Write(r *replay.Record) error {
	b, err := json.Marshal(ECSDocument(r), json.Deterministic(true))
	if err != nil {
		return err
	}
	if _, err := e.w.Write(b); err != nil {
		return err
	}
	return e.w.WriteByte('\n')
}

func (e *ecsWriter) Flush() error { return e.w.Flush() }
func (e *ecsWriter) Close() error { return e.w.Close() }

// class is how an entry is categorised in ECS.
type class struct {
	kind     string   // event.kind
	category []string // event.category
	typ      []string // event.type
	outcome  string   // event.outcome, when the entry says
}

// classify maps an entry to ECS's categorisation fields: tool calls are API
// calls (start at PreToolUse, end at PostToolUse), gate decisions and
// override prompts intrusion detection (allowed, denied), operator
// overrides IAM administration, alerts and findings alerts, hook crashes a
// process that ended in failure, verdicts and claims API calls with an
// outcome, rotator records configuration changes and deletions.
func classify(d *Decoded) class {
	e := &d.Entry
	switch e.Kind {
	case schemas.EntryInvalid, schemas.EntryRejected:
		return class{kind: "pipeline_error"}
	case schemas.EntryContract:
		return class{"event", []string{"configuration"}, []string{"creation"}, ""}
	case schemas.EntryClaim:
		return class{"event", []string{"api"}, []string{"start"}, ""}
	case schemas.EntryVerdict:
		o := "failure"
		if d.Verdict == schemas.Pass {
			o = "success"
		}
		return class{"event", []string{"api"}, []string{"info"}, o}
	case schemas.EntryRotator:
		if e.HookEvent == schemas.RotatorSegmentDeleted {
			return class{"event", []string{"file"}, []string{"deletion"}, "success"}
		}
		return class{"event", []string{"configuration"}, []string{"change"}, "success"}
	}
	switch e.HookEvent {
	case schemas.HookSessionStart:
		return class{"event", []string{"session"}, []string{"start"}, ""}
	case schemas.HookSessionEnd:
		return class{"event", []string{"session"}, []string{"end"}, ""}
	case schemas.HookPreToolUse, schemas.ClaimRequestEvent:
		return class{"event", []string{"api"}, []string{"start"}, ""}
	case schemas.HookPostToolUse:
		return class{"event", []string{"api"}, []string{"end"}, "success"}
	case schemas.HookPostToolUseFailure:
		return class{"event", []string{"api"}, []string{"end"}, "failure"}
	case schemas.GateDecisionEvent:
		switch d.Decision {
		case schemas.GateAllow:
			return class{"event", []string{"intrusion_detection"}, []string{"allowed"}, ""}
		case schemas.GateBlock, schemas.GateDeny:
			return class{"event", []string{"intrusion_detection"}, []string{"denied"}, ""}
		}
		return class{"event", []string{"intrusion_detection"}, []string{"info"}, ""}
	case schemas.GateOverrideEvent:
		return class{"event", []string{"iam"}, []string{"admin"}, "success"}
	case schemas.OverrideEvent:
		return class{"event", []string{"intrusion_detection"}, []string{"info"}, ""}
	case schemas.GateAlertEvent:
		return class{"alert", []string{"intrusion_detection"}, []string{"info"}, ""}
	case schemas.GateFindingEvent:
		return class{"alert", []string{"configuration"}, []string{"info"}, ""}
	case schemas.HookCrashEvent:
		return class{"event", []string{"process"}, []string{"end"}, "failure"}
	}
	return class{"event", []string{"session"}, []string{"info"}, ""}
}

// ECSDocument maps one record to an ECS document. ECS fields carry what
// ECS has a field for; everything else of the entry is under "claimcheck"
// (a custom field set, as ECS recommends), and event.original holds the
// entry as stored, so a SIEM keeps what its hash covers.
func ECSDocument(r *replay.Record) map[string]any {
	d := Decode(r)
	e := &d.Entry
	c := classify(&d)
	ts := e.ReceivedAt
	if ts == "" {
		ts = e.IngestedAt
	}
	ev := map[string]any{"kind": c.kind, "module": "claimcheck", "dataset": "claimcheck.ledger", "original": string(r.Raw)}
	if c.category != nil {
		ev["category"], ev["type"] = c.category, c.typ
	}
	set(ev, "outcome", c.outcome)
	set(ev, "action", actionOf(e))
	set(ev, "id", e.EventID)
	set(ev, "hash", e.Hash)
	set(ev, "created", e.ReceivedAt)
	set(ev, "ingested", e.IngestedAt)
	set(ev, "provider", e.Origin)
	set(ev, "reason", first(d.Reason, e.Reason))
	if e.N > 0 {
		ev["sequence"] = e.N
	}
	doc := map[string]any{"@timestamp": ts, "ecs": map[string]any{"version": ECSVersion}, "event": ev,
		"message": d.Summary, "tags": []string{"claimcheck"}}
	if e.Host != "" {
		doc["host"] = map[string]any{"name": e.Host}
	}
	if d.Command != "" {
		doc["process"] = map[string]any{"command_line": d.Command}
	}
	if d.FilePath != "" {
		doc["file"] = map[string]any{"path": d.FilePath}
	}
	if d.URL != "" {
		doc["url"] = map[string]any{"full": d.URL}
	}
	if d.Rule != "" {
		doc["rule"] = map[string]any{"name": d.Rule}
	}
	if d.Error != "" {
		doc["error"] = map[string]any{"message": d.Error}
	}
	if len(e.Redactions) > 0 {
		hashes := make([]string, 0, len(e.Redactions))
		for _, x := range e.Redactions {
			hashes = append(hashes, x.Digest)
		}
		doc["related"] = map[string]any{"hash": hashes}
		doc["tags"] = []string{"claimcheck", "secret_redacted"}
	}
	doc["claimcheck"] = custom(r, &d)
	return doc
}

// custom is the "claimcheck" field set: the entry's own fields and how the
// replay checked it.
func custom(r *replay.Record, d *Decoded) map[string]any {
	e := &d.Entry
	cc := map[string]any{"pos": r.Pos.String(), "chain": r.Chain, "check": string(r.Check), "source": string(r.Source)}
	for k, v := range map[string]string{
		"check_reason": r.Reason, "kind": e.Kind, "hook_event": e.HookEvent, "session_id": e.SessionID,
		"tool_name": e.ToolName, "tool_use_id": e.ToolUseID, "prev_hash": e.PrevHash, "hash": e.Hash,
		"payload_digest": e.PayloadDigest, "bundle": e.Bundle, "origin": e.Origin, "agent_type": e.AgentType,
		"agent_id": e.AgentID, "decision": d.Decision, "decision_source": d.DecisionSource, "claim": d.Claim,
		"validator": d.Validator, "verdict": d.Verdict, "attestation_id": d.AttestationID, "decode_error": errString(d.Err),
	} {
		set(cc, k, v)
	}
	if e.N > 0 {
		cc["n"] = e.N
	}
	if len(e.Redactions) > 0 {
		cc["redactions"] = e.Redactions
	}
	return cc
}

func actionOf(e *schemas.Entry) string {
	if e.HookEvent != "" {
		return e.HookEvent
	}
	return e.Kind
}

func set(m map[string]any, k, v string) {
	if v != "" {
		m[k] = v
	}
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

package record

import (
	"fmt"
	"strings"

	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
)

// claimcheck's own records travel through INTAKE like agent events; each
// may come from one kind of publisher only.
var records = map[string]string{
	schemas.ClaimRequestEvent: subject.OriginHook,       // `claimcheck claim` on the agent's host
	schemas.HookCrashEvent:    subject.OriginHook,       // claimcheck-hook failed
	schemas.GateOverrideEvent: subject.OriginOperator,   // `claimcheck gate override`
	schemas.OverrideEvent:     subject.OriginGatekeeper, // a prompt asked to bypass the gate
	schemas.GateAlertEvent:    subject.OriginGatekeeper, // a threshold was crossed
	schemas.GateFindingEvent:  subject.OriginGatekeeper, // hook configuration drift, an ungated session
}

// originOf is the entry's origin ("hook:<host token>", …); "" for a legacy
// subject, which names no publisher, and for one that names no publisher
// claimcheck knows (its record says so in its reason).
func originOf(st subject.Stored) string {
	switch {
	case st.Legacy, id.CheckName(st.Name) != nil:
		return ""
	case st.Origin == subject.OriginHook, st.Origin == subject.OriginHTTP,
		st.Origin == subject.OriginGatekeeper, st.Origin == subject.OriginOperator:
		return st.Origin + ":" + st.Name
	}
	return ""
}

// admit says why the publisher the subject names may not publish env, or ""
// when it may. NATS permissions bind each publisher to its subjects (a
// hook's credentials to its host's), so the subject is who published:
//   - a hook publishes its own host's agent events, claim requests, its
//     own gate decisions and crash records, and the envelope must name
//     that host;
//   - the http endpoint publishes agent events (hosts as the http client
//     named them);
//   - a gatekeeper publishes its decisions, override audits and alerts;
//   - an operator publishes gate overrides.
//
// Legacy subjects (queued by a claimcheck before credentials) are admitted
// as they were.
func admit(st subject.Stored, env *schemas.Envelope) string {
	if st.Legacy {
		return ""
	}
	if err := id.CheckName(st.Name); err != nil {
		return fmt.Sprintf("intake subject names publisher %s: %v", id.Quote(st.Name), err)
	}
	who := st.Origin + ":" + st.Name
	switch st.Origin {
	case subject.OriginHook:
		tok, err := id.HostToken(env.Host)
		if err != nil || tok != st.Name {
			return fmt.Sprintf("envelope names host %s but was published with the credentials of host %s", id.Quote(env.Host), st.Name)
		}
	case subject.OriginHTTP, subject.OriginGatekeeper, subject.OriginOperator:
	default:
		return fmt.Sprintf("intake subject names an unknown publisher %s", id.Quote(st.Origin))
	}
	if env.Kind == schemas.KindRejected {
		if st.Origin == subject.OriginHook || st.Origin == subject.OriginHTTP {
			return ""
		}
		return fmt.Sprintf("%s may not publish rejected-input records", who)
	}
	event := env.HookEvent
	owner, isRecord := records[event]
	switch {
	case event == schemas.GateDecisionEvent:
		// Decisions are recorded by the gatekeeper that made them and by
		// the hook that acted on them (or decided alone, failing closed).
		if st.Origin == subject.OriginHook || st.Origin == subject.OriginGatekeeper {
			return ""
		}
	case isRecord:
		if st.Origin == owner {
			return ""
		}
	case st.Origin == subject.OriginHook || st.Origin == subject.OriginHTTP:
		return "" // an agent's hook event
	}
	return fmt.Sprintf("%s may not publish %s events", who, id.Quote(event))
}

// checkReplyTo says why a hook's claim request may not ask for its verdict
// at replyTo, or "": the verdict must go to the requesting host's own
// inbox, which only that host's credentials can read.
func checkReplyTo(st subject.Stored, replyTo string) string {
	if st.Legacy || st.Origin != subject.OriginHook {
		return ""
	}
	own := subject.Inbox(subject.OriginHook, st.Name) + "."
	if !strings.HasPrefix(replyTo, own) {
		return fmt.Sprintf("reply_to %s is not an inbox of host %s (%s…)", id.Quote(replyTo), st.Name, own)
	}
	return ""
}

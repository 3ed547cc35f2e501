// Package subject builds every NATS subject claimcheck uses, from validated
// tokens only (session ids checked by package id, event tokens from
// id.EventToken, host tokens from id.HostToken). It has no dependencies so
// that lean clients (claimcheck-hook) can use it.
//
// Identity is carried by subjects: a subscriber never learns which user
// published a message, so every subject a client publishes on names who
// it is (an INTAKE origin and name, a gate request's host), and the NATS
// permissions of its credentials (package identity) allow it that subject
// and no other.
package subject

import (
	"strconv"
	"strings"
)

// Subject prefixes.
const (
	IntakePrefix = "cc.intake"
	LedgerPrefix = "cc.ledger"
	ClaimsPrefix = "cc.claims"
	AttestPrefix = "cc.attest"
	GatePrefix   = "cc.gate"
	InboxPrefix  = "_INBOX"
)

// Origins: who publishes on INTAKE. The origin and the publisher's name
// are the first two tokens of an intake subject.
const (
	// OriginHook is claimcheck-hook and `claimcheck claim` on an agent's
	// host; the name is the host's token (id.HostToken).
	OriginHook = "hook"
	// OriginGatekeeper is a gatekeeper's own records (decisions, override
	// audit, alerts); the name is the gatekeeper's identity name.
	OriginGatekeeper = "gatekeeper"
	// OriginHTTP is an event a gatekeeper received on its http hook
	// endpoint and publishes on the agent's behalf.
	OriginHTTP = "http"
	// OriginOperator is `claimcheck gate override`.
	OriginOperator = "operator"
)

// Gate request kinds: cc.gate.<host>.<kind> (request/reply, queue group
// "gatekeeper").
const (
	GateStop    = "stop"
	GatePreTool = "pretool"
	GatePrompt  = "prompt"
	// GatePostTool inspects a tool's result (PostToolUse, PostToolUseFailure).
	GatePostTool = "posttool"
	// GatePing answers "ok" when a gatekeeper is serving (the hook self-test).
	GatePing = "ping"
)

// GateLevel is where `claimcheck gate level --set` asks a gatekeeper to
// change a degradation level (request/reply, queue group "gatekeeper");
// only the operator role may publish on it.
const GateLevel = "cc.level.set"

// RotatorKeys is where `claimcheck keys rotate|revoke` ask the rotator,
// the key registry's only writer (request/reply, queue group "rotator").
const RotatorKeys = "cc.rotator.keys"

// IntakeGroup is the pinned-client priority group of the ingest consumers.
const IntakeGroup = "ingest"

// Intake is where an event is published: cc.intake.<origin>.<name>.<chain>.<event>.
// chain is a validated session id or schemas.RejectedChain; eventToken
// comes from id.EventToken; name is the publisher's host token or identity
// name.
func Intake(origin, name, chain, eventToken string) string {
	return IntakePrefix + "." + origin + "." + name + "." + chain + "." + eventToken
}

// IntakeAll matches every intake subject as published.
const IntakeAll = IntakePrefix + ".*.*.*.*"

// IntakePartition is the stored-subject filter of intake partition p.
func IntakePartition(p int) string {
	return IntakePrefix + "." + strconv.Itoa(p) + ".>"
}

// Stored is a stored (partitioned) intake subject, split.
type Stored struct {
	Origin, Name string // empty for Legacy
	Chain, Event string
	// Legacy: stored before subjects named their publisher
	// (cc.intake.<p>.<chain>.<event>, claimcheck before credentials).
	Legacy bool
}

// ParseIntake splits a stored intake subject
// cc.intake.<p>.<origin>.<name>.<chain>.<event>, or a legacy
// cc.intake.<p>.<chain>.<event>.
func ParseIntake(subject string) (Stored, bool) {
	rest, found := strings.CutPrefix(subject, IntakePrefix+".")
	if !found {
		return Stored{}, false
	}
	parts := strings.Split(rest, ".")
	for _, p := range parts {
		if p == "" {
			return Stored{}, false
		}
	}
	switch len(parts) {
	case 5:
		return Stored{Origin: parts[1], Name: parts[2], Chain: parts[3], Event: parts[4]}, true
	case 3:
		return Stored{Chain: parts[1], Event: parts[2], Legacy: true}, true
	}
	return Stored{}, false
}

// Gate is the subject of a gate request of one kind from one host.
func Gate(host, kind string) string { return GatePrefix + "." + host + "." + kind }

// GateAll is what the gatekeepers serve for one kind: every host's requests.
func GateAll(kind string) string { return GatePrefix + ".*." + kind }

// ParseGate splits cc.gate.<host>.<kind>.
func ParseGate(subject string) (host, kind string, ok bool) {
	rest, found := strings.CutPrefix(subject, GatePrefix+".")
	if !found {
		return "", "", false
	}
	host, kind, ok = strings.Cut(rest, ".")
	if !ok || host == "" || kind == "" || strings.Contains(kind, ".") {
		return "", "", false
	}
	return host, kind, true
}

// Inbox is the reply-subject prefix of an identity: _INBOX.<role>.<name>.
// Each identity may subscribe under its own prefix only, so no client can
// read another's replies.
func Inbox(role, name string) string { return InboxPrefix + "." + role + "." + name }

// Claims is where ingest queues a session's claim requests for the verifiers.
func Claims(session string) string { return ClaimsPrefix + "." + session }

// Attestation is the subject of one attestation in ATTEST. Each
// attestation has a subject of its own so that it can be written once
// (compare-and-set against "no message yet").
func Attestation(session, attestationID string) string {
	return AttestPrefix + "." + session + "." + attestationID
}

// ContractKey is the key of a contract in the contracts bucket.
func ContractKey(session, promptEventID string) string { return session + "." + promptEventID }

// Ledger is the subject of one chain in LEDGER.
func Ledger(chain string) string { return LedgerPrefix + "." + chain }

// LedgerAll matches every chain.
const LedgerAll = LedgerPrefix + ".>"

// ChainOf returns the chain of a LEDGER subject.
func ChainOf(subject string) (string, bool) {
	c, ok := strings.CutPrefix(subject, LedgerPrefix+".")
	if !ok || c == "" || strings.Contains(c, ".") {
		return "", false
	}
	return c, true
}

// ValidReply reports whether s is a reply subject a claim request may name
// (claim.v1's reply_to pattern): _INBOX.<role>.<name>.<id> under an
// identity's inbox, or a plain _INBOX.<id> of a claimcheck before
// credentials.
func ValidReply(s string) bool {
	rest, ok := strings.CutPrefix(s, InboxPrefix+".")
	if !ok {
		return false
	}
	parts := strings.Split(rest, ".")
	switch len(parts) {
	case 1:
		return token(parts[0], 128, false)
	case 3:
		return lowerWord(parts[0]) && token(parts[1], 63, true) && token(parts[2], 128, false)
	}
	return false
}

func lowerWord(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}

// token: 1..n of [A-Za-z0-9_-] (lower case only, starting with a letter or
// digit, when lower).
func token(s string, n int, lower bool) bool {
	if s == "" || len(s) > n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' || !lower && c >= 'A' && c <= 'Z'
		if !ok || lower && i == 0 && (c == '_' || c == '-') {
			return false
		}
	}
	return true
}

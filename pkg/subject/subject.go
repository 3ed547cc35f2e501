// Package subject builds every NATS subject claimcheck uses, from validated
// tokens only (session ids checked by package id, event tokens from
// id.EventToken). It has no dependencies so that lean clients
// (claimcheck-hook) can use it.
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
)

// Gate request subjects (request/reply, queue group "gatekeeper").
const (
	GateStop    = "cc.gate.stop"
	GatePreTool = "cc.gate.pretool"
	GatePrompt  = "cc.gate.prompt"
	// GatePing answers "ok" when a gatekeeper is serving (the hook self-test).
	GatePing = "cc.gate.ping"
)

// RotatorKeys is where `claimcheck keys rotate|revoke` ask the rotator,
// the key registry's only writer (request/reply, queue group "rotator").
const RotatorKeys = "cc.rotator.keys"

// IntakeGroup is the pinned-client priority group of the ingest consumers.
const IntakeGroup = "ingest"

// Intake is where claimcheck-hook publishes an event. chain is a
// validated session id or schemas.RejectedChain; eventToken comes from
// id.EventToken.
func Intake(chain, eventToken string) string {
	return IntakePrefix + "." + chain + "." + eventToken
}

// IntakePartition is the stored-subject filter of intake partition p.
func IntakePartition(p int) string {
	return IntakePrefix + "." + strconv.Itoa(p) + ".>"
}

// ParseIntake splits a stored (partitioned) intake subject
// cc.intake.<p>.<chain>.<event> into its chain and event tokens.
func ParseIntake(subject string) (chain, event string, ok bool) {
	rest, found := strings.CutPrefix(subject, IntakePrefix+".")
	if !found {
		return "", "", false
	}
	parts := strings.Split(rest, ".")
	if len(parts) != 3 {
		return "", "", false
	}
	return parts[1], parts[2], true
}

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

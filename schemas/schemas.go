// Package schemas holds claimcheck's wire formats: the JSON Schemas (draft
// 2020-12) of every message claimcheck writes, embedded, and the Go types that
// mirror them. It has no behaviour beyond naming; validation against the
// schemas lives in package validation so that lean clients (claimcheck-hook)
// can use the types without compiling schemas.
package schemas

import (
	"embed"

	"github.com/go-json-experiment/json/jsontext"
)

// Files holds the schema documents, named by their file names.
//
//go:embed *.schema.json
var Files embed.FS

// Policies holds the built-in claim policies (policy.v1 documents).
//
//go:embed policy/*.json
var Policies embed.FS

// DefaultPolicy is the built-in policy's path in Policies.
const DefaultPolicy = "policy/default.json"

// DefaultPretoolPolicy is the built-in PreToolUse policy's path in Policies
// (a pretool.v1 document).
const DefaultPretoolPolicy = "policy/pretool.default.json"

// Schema file names; each is also the last segment of the schema's $id.
const (
	EventV1     = "event.v1.schema.json"
	EntryV1     = "entry.v1.schema.json"
	ContractV1  = "contract.v1.schema.json"
	PolicyV1    = "policy.v1.schema.json"
	ClaimV1     = "claim.v1.schema.json"
	VerdictV1   = "verdict.v1.schema.json"
	StatementV1 = "statement.v1.schema.json"
	KeysV1      = "keys.v1.schema.json"
	PretoolV1   = "pretool.v1.schema.json"
)

// BaseURL prefixes every schema's $id.
const BaseURL = "https://claimcheck.dev/schemas/"

// Envelope kinds.
const (
	KindEvent    = "event"    // a hook payload, carried verbatim
	KindRejected = "rejected" // an input the hook refused; only its digest and reason travel
)

// Entry kinds.
const (
	EntryEvent    = "event"    // a valid hook event of a session
	EntryInvalid  = "invalid"  // an envelope for a valid session whose content failed validation
	EntryRejected = "rejected" // an input that cannot be attributed to a valid session (chain _rejected)
	EntryContract = "contract" // the contract derived from an actionable prompt
	EntryClaim    = "claim"    // a claim request, chained in order with the session's events
	EntryVerdict  = "verdict"  // the verifier's answer to a claim request
	EntryRotator  = "rotator"  // the rotator's own record (chain _rotator): a key registry change, an archive deletion
)

// ClaimRequestEvent is the hook_event_name of claim requests.
const ClaimRequestEvent = "ClaimRequest"

// Claude Code's hook_event_name values that claimcheck acts on (see
// docs/gate.md and the hooks reference for their payloads).
const (
	HookSessionStart       = "SessionStart"
	HookUserPromptSubmit   = "UserPromptSubmit"
	HookPreToolUse         = "PreToolUse"
	HookPostToolUse        = "PostToolUse"
	HookPostToolUseFailure = "PostToolUseFailure"
	HookNotification       = "Notification"
	HookSubagentStop       = "SubagentStop"
	HookStop               = "Stop"
	HookPreCompact         = "PreCompact"
	HookSessionEnd         = "SessionEnd"
)

// RejectedChain is the chain that records inputs without a valid session id.
// It cannot collide with a session: session ids start with a letter or digit.
const RejectedChain = "_rejected"

// RotatorChain is the chain of the rotator's records. Like _rejected it is
// no session id, so no hook client can write to it through INTAKE.
const RotatorChain = "_rotator"

// Rotator record types (Entry.HookEvent of EntryRotator entries).
const (
	RotatorSegmentDeleted = "ArchiveSegmentDeleted"
	RotatorKeyRotated     = "KeyRotated"
	RotatorKeyRevoked     = "KeyRevoked"
	RotatorKeyRetired     = "KeyRetired"
)

// Envelope is what claimcheck-hook publishes to INTAKE (event.v1.schema.json).
// Payload holds the agent's hook JSON exactly as received (surrounding
// whitespace trimmed); PayloadDigest is "sha256:<hex>" of those bytes.
type Envelope struct {
	V             int            `json:"v"`
	Kind          string         `json:"kind"`
	EventID       string         `json:"event_id"`
	SessionID     string         `json:"session_id,omitempty"`
	HookEvent     string         `json:"hook_event,omitempty"`
	Host          string         `json:"host"`
	AgentType     string         `json:"agent_type"`
	AgentID       string         `json:"agent_id"`
	ClientSeq     uint64         `json:"client_seq"`
	ReceivedAt    string         `json:"received_at"`
	PayloadDigest string         `json:"payload_digest"`
	PayloadSize   int            `json:"payload_size"`
	Payload       jsontext.Value `json:"payload,omitempty"`
	Rejected      *Rejected      `json:"rejected,omitzero"`
	// HookConfig, on SessionStart events only, is the hook configuration
	// the session starts under. It travels beside the payload, which stays
	// the agent's bytes.
	HookConfig *HookConfig `json:"hook_config,omitzero"`
}

// Rejected says why the hook refused an input.
type Rejected struct {
	Reason  string `json:"reason"`
	Excerpt string `json:"excerpt,omitempty"`
}

// Entry is one position of a chain in the ledger (entry.v1.schema.json).
//
// Fields are declared in the order of their JSON names, so that encoding an
// Entry yields members already in RFC 8785 order (TestEntryFieldsInCanonicalOrder
// keeps it so); chain.Seal relies on that to avoid a second pass.
type Entry struct {
	AgentID       string      `json:"agent_id,omitempty"`
	AgentType     string      `json:"agent_type,omitempty"`
	Artifact      *Artifact   `json:"artifact,omitzero"`
	Bundle        string      `json:"bundle"`
	Chain         string      `json:"chain"`
	Claim         *Claim      `json:"claim,omitzero"`
	ClientSeq     uint64      `json:"client_seq,omitzero"`
	Contract      *Contract   `json:"contract,omitzero"`
	EventID       string      `json:"event_id,omitempty"`
	Excerpt       string      `json:"excerpt,omitempty"`
	Hash          string      `json:"hash,omitempty"`
	HookConfig    *HookConfig `json:"hook_config,omitzero"`
	HookEvent     string      `json:"hook_event,omitempty"`
	Host          string      `json:"host,omitempty"`
	IngestedAt    string      `json:"ingested_at"`
	IntakeSeq     uint64      `json:"intake_seq,omitzero"`
	Kind          string      `json:"kind"`
	N             uint64      `json:"n"`
	Origin        string      `json:"origin,omitempty"`
	Payload       *string     `json:"payload,omitzero"`
	PayloadDigest string      `json:"payload_digest,omitempty"`
	PayloadElided bool        `json:"payload_elided,omitzero"`
	PayloadSize   int         `json:"payload_size,omitzero"`
	PrevHash      string      `json:"prev_hash"`
	Reason        string      `json:"reason,omitempty"`
	ReceivedAt    string      `json:"received_at,omitempty"`
	Redactions    []Redaction `json:"redactions,omitempty"`
	SessionID     string      `json:"session_id,omitempty"`
	ToolInput     string      `json:"tool_input_digest,omitempty"`
	ToolName      string      `json:"tool_name,omitempty"`
	ToolUseID     string      `json:"tool_use_id,omitempty"`
	V             int         `json:"v"`
	Verdict       *Verdict    `json:"verdict,omitzero"`
}

// Artifact names the object-store copy of a payload too large to keep inline.
type Artifact struct {
	Digest string `json:"digest"` // "sha256:<hex>" of the stored (scrubbed) bytes
	Object string `json:"object"` // object name: "sha256-<hex>"
	Size   int    `json:"size"`
}

// Redaction records one secret removed from a payload: the rule that found it
// and the SHA-256 of the secret, so a responder can check whether a known
// leaked credential passed through without the ledger holding it.
type Redaction struct {
	Digest string `json:"digest"`
	Rule   string `json:"rule"`
}

// Contract is what an actionable prompt asks for (contract.v1.schema.json).
// Fields are in JSON-name order (see Entry).
type Contract struct {
	ActionVerbs          []string     `json:"action_verbs"`
	Deriver              string       `json:"deriver"`
	ExpectedVerification []string     `json:"expected_verification"`
	Ladder               []Hop        `json:"ladder"`
	Objective            string       `json:"objective"`
	PromptDigest         string       `json:"prompt_digest"`
	PromptEventID        string       `json:"prompt_event_id"`
	PromptID             string       `json:"prompt_id,omitempty"`
	SessionID            string       `json:"session_id"`
	TargetFields         TargetFields `json:"target_fields"`
	V                    int          `json:"v"`
}

// TargetFields are the structured parts of a prompt that validator
// arguments must bind to.
type TargetFields struct {
	BacktickTokens []string `json:"backtick_tokens"`
	CommandHints   []string `json:"command_hints"`
	Keywords       []string `json:"keywords"`
	Paths          []string `json:"paths"`
	URLs           []string `json:"urls"`
}

// Hop is one rung of the capability ladder: an attempt counts when one of
// Tools was used with an input containing one of Tokens.
type Hop struct {
	Hop    string   `json:"hop"`
	Tokens []string `json:"tokens"`
	Tools  []string `json:"tools"`
}

// Claim is a claim request (claim.v1.schema.json) as chained.
type Claim struct {
	Args      jsontext.Value `json:"args"`
	Claim     string         `json:"claim"`
	ReplyTo   string         `json:"reply_to"`
	RequestID string         `json:"request_id"`
	Validator string         `json:"validator"`
}

// ClaimWork is what ingest queues on CLAIMS after chaining a claim: the
// verifier finds the claim in the session's chain by its event id.
type ClaimWork struct {
	ClaimEventID string `json:"claim_event_id"`
	ReplyTo      string `json:"reply_to,omitempty"` // where to report a request that cannot be decided
	RequestID    string `json:"request_id"`
	SessionID    string `json:"session_id"`
	V            int    `json:"v"`
}

// ClaimError is the answer to a claim request that could not be decided
// at all (ingest refused the request): the requester shows Error and no
// verdict is recorded.
type ClaimError struct {
	Error string `json:"error"`
}

// Verdict outcomes.
const (
	Pass    = "PASS"
	Fail    = "FAIL"
	Refused = "REFUSED"
)

// Verdict is the verifier's answer (verdict.v1.schema.json).
type Verdict struct {
	Args            jsontext.Value `json:"args"`
	AttestationID   string         `json:"attestation_id,omitempty"`
	Claim           string         `json:"claim"`
	Contract        *Position      `json:"contract,omitzero"`
	Matched         []Position     `json:"matched,omitempty"`
	NextStep        string         `json:"next_step,omitempty"`
	Policy          PolicyRef      `json:"policy"`
	Range           Range          `json:"range"`
	Reasons         []string       `json:"reasons"`
	RequestID       string         `json:"request_id"`
	SessionID       string         `json:"session_id"`
	StatementDigest string         `json:"statement_digest,omitempty"`
	V               int            `json:"v"`
	Validator       string         `json:"validator"`
	Verdict         string         `json:"verdict"`
	Verifier        string         `json:"verifier"`
}

// Position names one ledger entry.
type Position struct {
	EventID string `json:"event_id,omitempty"`
	Hash    string `json:"hash"`
	N       uint64 `json:"n"`
}

// Range is the ledger prefix a verdict was computed over.
type Range struct {
	From     uint64 `json:"from"`
	HeadHash string `json:"head_hash"`
	To       uint64 `json:"to"`
}

// PolicyRef identifies the policy a verdict applied.
type PolicyRef struct {
	Digest  string `json:"digest"`
	Version string `json:"version"`
}

// In-toto and DSSE constants of claimcheck attestations.
const (
	StatementType     = "https://in-toto.io/Statement/v1"
	PredicateType     = "https://claimcheck.dev/attestation/claim/v1"
	AttestationFormat = "application/vnd.in-toto+json" // the DSSE payloadType
)

// Statement is an in-toto Statement v1 (statement.v1.schema.json).
type Statement struct {
	Type          string    `json:"_type"`
	Predicate     Predicate `json:"predicate"`
	PredicateType string    `json:"predicateType"`
	Subject       []Subject `json:"subject"`
}

// Subject of a statement: the session and ledger range.
type Subject struct {
	Digest map[string]string `json:"digest"`
	Name   string            `json:"name"`
}

// Predicate of a claimcheck statement.
type Predicate struct {
	AttestationID string    `json:"attestation_id"`
	SignedAt      string    `json:"signed_at"`
	Verdict       Verdict   `json:"verdict"`
	VerdictEntry  *Position `json:"verdict_entry,omitzero"`
}

// Key is one entry of the signing key registry (keys.v1.schema.json).
type Key struct {
	Algorithm    string  `json:"algorithm"`
	Fingerprint  string  `json:"fingerprint,omitempty"`
	KeyID        string  `json:"keyid"`
	KMSRef       string  `json:"kms_ref,omitempty"` // the private key lives in a KMS (sigstore key reference)
	PublicKeyPEM string  `json:"public_key_pem"`
	RevokedAt    *string `json:"revoked_at"`
	Status       string  `json:"status"`
	ValidFrom    string  `json:"valid_from"`
	ValidUntil   *string `json:"valid_until"`
}

// KeyRequest asks the rotator to change the key registry (subject
// cc.rotator.keys): Op "rotate" (Algorithm or KMSRef, Overlap in Go
// duration syntax) or "revoke" (KeyID, At in RFC 3339).
type KeyRequest struct {
	Op        string `json:"op"`
	Algorithm string `json:"algorithm,omitempty"`
	KMSRef    string `json:"kms,omitempty"`
	Overlap   string `json:"overlap,omitempty"`
	KeyID     string `json:"keyid,omitempty"`
	At        string `json:"at,omitempty"`
}

// KeyReply is the rotator's answer to a KeyRequest.
type KeyReply struct {
	Error   string `json:"error,omitempty"`
	Key     *Key   `json:"key,omitempty"`     // the new or the revoked key
	Retired []Key  `json:"retired,omitempty"` // keys whose window the rotation closed
}

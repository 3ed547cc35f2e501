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

// Schema file names; each is also the last segment of the schema's $id.
const (
	EventV1 = "event.v1.schema.json"
	EntryV1 = "entry.v1.schema.json"
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
)

// RejectedChain is the chain that records inputs without a valid session id.
// It cannot collide with a session: session ids start with a letter or digit.
const RejectedChain = "_rejected"

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
	ClientSeq     uint64      `json:"client_seq,omitzero"`
	EventID       string      `json:"event_id,omitempty"`
	Excerpt       string      `json:"excerpt,omitempty"`
	Hash          string      `json:"hash,omitempty"`
	HookEvent     string      `json:"hook_event,omitempty"`
	Host          string      `json:"host,omitempty"`
	IngestedAt    string      `json:"ingested_at"`
	IntakeSeq     uint64      `json:"intake_seq,omitzero"`
	Kind          string      `json:"kind"`
	N             uint64      `json:"n"`
	Payload       *string     `json:"payload,omitzero"`
	PayloadDigest string      `json:"payload_digest,omitempty"`
	PayloadElided bool        `json:"payload_elided,omitzero"`
	PayloadSize   int         `json:"payload_size,omitzero"`
	PrevHash      string      `json:"prev_hash"`
	Reason        string      `json:"reason,omitempty"`
	ReceivedAt    string      `json:"received_at,omitempty"`
	Redactions    []Redaction `json:"redactions,omitempty"`
	SessionID     string      `json:"session_id,omitempty"`
	ToolName      string      `json:"tool_name,omitempty"`
	ToolUseID     string      `json:"tool_use_id,omitempty"`
	V             int         `json:"v"`
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

package schemas

import "github.com/go-json-experiment/json/jsontext"

// Gate decisions: what the gatekeeper answers to the Stop and PreToolUse
// hooks, signed, and recorded in the session's chain.
const (
	// GateDecisionType is the DSSE payload type of a signed gate decision.
	GateDecisionType = "application/vnd.claimcheck.gate-decision+json"

	GateAllow = "allow" // Stop and PreToolUse: let it happen (answered by silence)
	GateBlock = "block" // Stop: keep working
	GateDeny  = "deny"  // PreToolUse: refuse the tool call
	GateAsk   = "ask"   // PreToolUse: ask the human

	// Synthetic hook_event_name values of records claimcheck itself puts
	// into a session's chain (through INTAKE, like hook events).
	GateDecisionEvent = "GateDecision"    // a decision, signed by the gatekeeper or made by the hook
	GateOverrideEvent = "GateOverride"    // claimcheck gate override: the next Stop passes
	HookCrashEvent    = "HookCrash"       // claimcheck-hook failed (panic, no valid gate answer)
	OverrideEvent     = "OverrideRequest" // a prompt asked to bypass the gate (override audit)
	GateAlertEvent    = "GateAlert"       // a threshold was crossed (override prompts, hook crashes)

	// Rules of decisions made without a gatekeeper's judgement: the hook
	// (or the HTTP endpoint) could not get one and failed closed, failed
	// open as configured, or let a stop through at its block cap.
	RuleHookFailClosed = "hook.fail_closed"
	RuleHookFailOpen   = "hook.fail_open"
	RuleHookBlockCap   = "hook.block_cap"
	RuleHTTPFailClosed = "http.fail_closed"

	// Decision sources.
	SourceGatekeeper = "gatekeeper" // decided and signed by a gatekeeper
	SourceHook       = "hook"       // decided by claimcheck-hook because no valid answer came (fail closed or open)
)

// GateRequest is what claimcheck-hook sends on cc.gate.<event> and what
// POST /v1/hooks/claude builds from its body.
type GateRequest struct {
	V         int            `json:"v"`
	Nonce     string         `json:"nonce"`    // fresh per request; the signed decision must carry it
	EventID   string         `json:"event_id"` // the event's id in INTAKE ("" when it was not recorded)
	SessionID string         `json:"session_id"`
	HookEvent string         `json:"hook_event_name"`
	Host      string         `json:"host,omitempty"`
	AgentType string         `json:"agent_type,omitempty"`
	AgentID   string         `json:"agent_id,omitempty"`
	Payload   jsontext.Value `json:"payload"` // the hook payload as the agent sent it
}

// GateDecision is the signed answer (the DSSE payload).
type GateDecision struct {
	V          int    `json:"v"`
	DecisionID string `json:"decision_id"`
	SessionID  string `json:"session_id"`
	HookEvent  string `json:"hook_event_name"`
	EventID    string `json:"event_id,omitempty"`
	Nonce      string `json:"nonce"`
	Decision   string `json:"decision"`
	// Reason goes to the agent for block and deny, to the human for ask.
	Reason   string   `json:"reason,omitempty"`
	Reasons  []string `json:"reasons,omitempty"`
	Rule     string   `json:"rule,omitempty"`
	NextStep string   `json:"next_step,omitempty"`
	// SystemMessage is shown to the user (e.g. when the block cap let a stop through).
	SystemMessage string `json:"system_message,omitempty"`
	// AdditionalContext is added to the agent's context (UserPromptSubmit alerts).
	AdditionalContext string `json:"additional_context,omitempty"`
	// UpdatedToolOutput is a PostToolUse result's tool_response with every
	// secret in it redacted ([REDACTED:rule]), the same shape: what the
	// model is to read instead (Claude Code's updatedToolOutput).
	UpdatedToolOutput jsontext.Value `json:"updated_tool_output,omitzero"`
	// Level is the degradation level the decision was made at, when it is
	// not NORMAL (every refusal the level causes names it).
	Level             string     `json:"level,omitempty"`
	ConsecutiveBlocks int        `json:"consecutive_blocks,omitempty"`
	Capped            bool       `json:"capped,omitempty"`
	Override          string     `json:"override,omitempty"` // the override event that let this stop through
	LedgerHead        Position   `json:"ledger_head"`
	Policy            *PolicyRef `json:"policy,omitzero"`
	Source            string     `json:"source"`
	Gatekeeper        string     `json:"gatekeeper,omitempty"`
	IssuedAt          string     `json:"issued_at"`
	ExpiresAt         string     `json:"expires_at"`
}

// GateRecord is the payload of a GateDecisionEvent record.
type GateRecord struct {
	SessionID string       `json:"session_id"`
	HookEvent string       `json:"hook_event_name"` // GateDecisionEvent
	Decision  GateDecision `json:"decision"`
	Signed    *SignedRef   `json:"signed,omitzero"` // the signatures of the envelope, when there is one
	Error     string       `json:"error,omitempty"` // why the hook decided itself
}

// SignedRef keeps what a ledger record needs of a signed decision's DSSE
// envelope to check it later: the payload is the decision itself in its
// deterministic JSON encoding (the record carries the decision in the
// clear, so the base64 payload is not stored twice), its digest pins the
// bytes, and the signatures are kept whole.
type SignedRef struct {
	PayloadType   string      `json:"payload_type"`
	PayloadSHA256 string      `json:"payload_sha256"`
	Signatures    []Signature `json:"signatures"`
}

// Signature is one DSSE signature as a decision record keeps it. The key
// id is named "signer", not DSSE's "keyid": the word "key" anywhere in a
// record sends it through gitleaks' generic-api-key expression, which made
// scrubbing a decision record 25× dearer (pkg/scrub
// BenchmarkScrub).
type Signature struct {
	KeyID string `json:"signer"`
	Sig   string `json:"sig"`
}

// GateOverride is the payload of a GateOverrideEvent record.
type GateOverride struct {
	SessionID string `json:"session_id"`
	HookEvent string `json:"hook_event_name"` // GateOverrideEvent
	Reason    string `json:"reason"`
	Operator  string `json:"operator"`
}

// HookCrash is the payload of a HookCrashEvent record: claimcheck-hook
// could not do its job for a hook event.
type HookCrash struct {
	SessionID string `json:"session_id"`
	HookEvent string `json:"hook_event_name"` // HookCrashEvent
	Event     string `json:"event"`           // the hook event that failed
	EventID   string `json:"event_id,omitempty"`
	Kind      string `json:"kind"` // panic | gate (no valid gatekeeper answer) | record (neither delivered nor spooled)
	Error     string `json:"error"`
	Version   string `json:"version,omitempty"`
}

// Hook crash kinds.
const (
	CrashPanic  = "panic"
	CrashGate   = "gate"
	CrashRecord = "record"
)

// OverrideRequest is the payload of an OverrideEvent record.
type OverrideRequest struct {
	SessionID   string `json:"session_id"`
	HookEvent   string `json:"hook_event_name"` // OverrideEvent
	PromptEvent string `json:"prompt_event_id"`
	Phrase      string `json:"phrase"`
	Host        string `json:"host,omitempty"`
}

// GateAlert is the payload of a GateAlertEvent record.
type GateAlert struct {
	SessionID string `json:"session_id"`
	HookEvent string `json:"hook_event_name"` // GateAlertEvent
	Kind      string `json:"kind"`            // override_pattern | hook_crashes
	Host      string `json:"host"`
	Event     string `json:"event,omitempty"` // the failing hook event (hook_crashes)
	Day       string `json:"day"`             // UTC date; one alert per kind, host (and event) per day
	Count     int    `json:"count"`
	Message   string `json:"message"`
}

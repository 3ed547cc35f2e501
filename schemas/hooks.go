package schemas

// HookEvent is one Claude Code hook event claimcheck records, with the
// timeout (seconds) `claimcheck hooks install` sets for its handler.
type HookEvent struct {
	Name    string
	Timeout int
}

// HookEvents are the Claude Code events claimcheck records: the events
// `claimcheck hooks install` installs claimcheck-hook for, and the events a
// session's hook configuration must hand to claimcheck-hook for the session
// to count as gated (see HookConfig). Claude Code's own default timeout is
// 600 s; a hook that hangs must not hold the agent that long. Gate events
// get more room.
var HookEvents = []HookEvent{
	{HookSessionStart, 10},
	{HookUserPromptSubmit, 30},
	{HookPreToolUse, 30},
	{"PermissionRequest", 10},
	{"PermissionDenied", 10},
	{HookPostToolUse, 10},
	{HookPostToolUseFailure, 10},
	{HookNotification, 10},
	{"SubagentStart", 10},
	{HookSubagentStop, 30},
	{HookStop, 30},
	{"StopFailure", 10},
	{HookPreCompact, 10},
	{"PostCompact", 10},
	{HookSessionEnd, 5},
}

// HookConfigV1 is the schema of the hook configuration a session started
// under (carried by SessionStart envelopes and entries as hook_config).
const HookConfigV1 = "hookconfig.v1.schema.json"

// Hook configuration verdicts (HookConfig.Verdict).
const (
	// HooksGated: every event of HookEvents has a claimcheck-hook handler
	// in a layer whose hooks run, with the command install recorded (when
	// it recorded one).
	HooksGated = "gated"
	// HooksChanged: every event is handled, but a handler's command is not
	// the one `claimcheck hooks install` recorded.
	HooksChanged = "changed"
	// HooksMissing: some events have no claimcheck-hook handler that runs.
	HooksMissing = "missing"
	// HooksNone: no event has a claimcheck-hook handler that runs.
	HooksNone = "none"
)

// Hook configuration layers, in Claude Code's order of precedence.
const (
	LayerManaged  = "managed"   // /etc/claude-code/managed-settings.json
	LayerManagedD = "managed.d" // /etc/claude-code/managed-settings.d/*.json
	LayerUser     = "user"      // ~/.claude/settings.json
	LayerProject  = "project"   // <project>/.claude/settings.json
	LayerLocal    = "local"     // <project>/.claude/settings.local.json
)

// HookConfig is the hook configuration a session started under, as
// claimcheck-hook read it at SessionStart (hookconfig.v1.schema.json). It
// carries digests, never the settings' contents or command lines, so that
// nothing secret in a settings file reaches the ledger. Fields are in
// JSON-name order (it is part of Entry).
type HookConfig struct {
	// Error says why the configuration could not be read whole.
	Error string `json:"error,omitempty"`
	// Expected is the digest of the handlers `claimcheck hooks install`
	// recorded (Handlers of a layer it wrote); "" without a record.
	Expected string      `json:"expected,omitempty"`
	Layers   []HookLayer `json:"layers"`
	// Missing lists the events of HookEvents no effective layer hands to
	// claimcheck-hook.
	Missing []string `json:"missing,omitempty"`
	// Reasons explain a verdict other than gated, in words.
	Reasons []string `json:"reasons,omitempty"`
	V       int      `json:"v"`
	Verdict string   `json:"verdict"`
}

// HookLayer is one settings file of a HookConfig. Fields are in JSON-name
// order.
type HookLayer struct {
	AllowManagedHooksOnly bool `json:"allow_managed_hooks_only,omitzero"`
	// Commands are the SHA-256 digests of the distinct claimcheck-hook
	// command lines in the file.
	Commands []string `json:"commands,omitempty"`
	// Digest is the SHA-256 of the file's bytes.
	Digest          string `json:"digest,omitempty"`
	DisableAllHooks bool   `json:"disable_all_hooks,omitzero"`
	// Effective says the file's hooks run (allowManagedHooksOnly or
	// disableAllHooks elsewhere do not turn them off).
	Effective bool   `json:"effective"`
	Error     string `json:"error,omitempty"`
	// Events are the events of HookEvents with a claimcheck-hook handler
	// in the file (for every tool: no matcher, "" or "*").
	Events []string `json:"events,omitempty"`
	// Handlers is the digest of the file's (event, command) pairs of
	// claimcheck-hook handlers, comparable with HookConfig.Expected.
	Handlers string `json:"handlers,omitempty"`
	Layer    string `json:"layer"`
	Parsed   bool   `json:"parsed,omitzero"`
	Path     string `json:"path"`
	Present  bool   `json:"present"`
	Size     int    `json:"size,omitzero"`
}

// Gate findings: what the gatekeeper finds wrong with a session's
// evidence as a whole rather than with one of its events, signed and
// recorded in the session's chain (once per kind and session).
const (
	// GateFindingType is the DSSE payload type of a signed finding.
	GateFindingType = "application/vnd.claimcheck.gate-finding+json"
	// GateFindingEvent is the hook_event_name of a finding record.
	GateFindingEvent = "GateFinding"

	// FindingHookConfigDrift: the session started with claimcheck's hooks
	// missing or changed (its SessionStart's hook_config is not gated).
	FindingHookConfigDrift = "hook_config_drift"
	// FindingUngated: the session's events stopped before it ended its turn
	// or itself, while its host went on with another session.
	FindingUngated = "ungated_session"
	// FindingInjection: a tool's result holds text that reads as
	// instructions to the agent (pkg/inject), at or above the flag level.
	FindingInjection = "injection"
	// FindingSecret: a tool's result holds a secret (ingest's gitleaks
	// rules, pkg/scrub); the finding locates it and never holds it.
	FindingSecret = "secret"
	// FindingLevel: a session's, host's or the fleet's degradation level
	// changed (escalation rule or operator).
	FindingLevel = "level_change"
)

// GateFinding is a finding (the DSSE payload the gatekeeper signs).
type GateFinding struct {
	V         int    `json:"v"`
	FindingID string `json:"finding_id"`
	Kind      string `json:"kind"`
	SessionID string `json:"session_id"`
	Host      string `json:"host"`
	// EventID is the event the finding is about: the SessionStart whose
	// hook_config drifted, or the session's last event (ungated).
	EventID string `json:"event_id,omitempty"`
	// Verdict, Missing and Reasons repeat the SessionStart's hook_config.
	Verdict string   `json:"verdict,omitempty"`
	Missing []string `json:"missing,omitempty"`
	Reasons []string `json:"reasons,omitempty"`
	// LastEventAt is the time of the session's last event and NextStartAt
	// that of the host's later SessionStart (ungated).
	LastEventAt string `json:"last_event_at,omitempty"`
	NextStartAt string `json:"next_start_at,omitempty"`
	// Injection findings: the tool whose result was flagged, its call id,
	// the result's content-source tag, the highest confidence, every match
	// (rule, confidence, byte offsets into the scanned text, digest of the
	// flagged bytes) and how much was scanned.
	Tool       string           `json:"tool,omitempty"`
	ToolUseID  string           `json:"tool_use_id,omitempty"`
	Source     string           `json:"source,omitempty"`
	Confidence string           `json:"confidence,omitempty"`
	Matches    []InjectionMatch `json:"matches,omitempty"`
	TextSHA256 string           `json:"text_sha256,omitempty"`
	Scanned    int              `json:"scanned,omitempty"`
	Truncated  bool             `json:"truncated,omitempty"`
	// Secret findings: the tool, its call id and source as above, and
	// where each secret lies in the scanned text (rule, byte offsets,
	// digest of its bytes); text_sha256 and scanned as above.
	Secrets []SecretMatch `json:"secrets,omitempty"`
	// Level changes: the scope (session, host, fleet) and its name, the
	// level before and after, the rule that raised it (or "operator") and
	// the KV revision the change was written at.
	Scope      string `json:"scope,omitempty"`
	Name       string `json:"name,omitempty"`
	From       string `json:"from,omitempty"`
	Level      string `json:"level,omitempty"`
	Rule       string `json:"rule,omitempty"`
	Operator   string `json:"operator,omitempty"`
	Revision   uint64 `json:"revision,omitempty"`
	Message    string `json:"message"`
	Gatekeeper string `json:"gatekeeper,omitempty"`
	IssuedAt   string `json:"issued_at"`
}

// InjectionMatch is one flagged span of a tool's result.
type InjectionMatch struct {
	Rule       string `json:"rule"`
	Confidence string `json:"confidence"`
	Start      int    `json:"start"`
	End        int    `json:"end"`
	Digest     string `json:"digest"`
}

// SecretMatch is one secret in a tool's result: the rule that found it,
// its byte offsets into the scanned text and the digest of its bytes (as
// in the Redaction ingest records for it); never the secret.
type SecretMatch struct {
	Rule   string `json:"rule"`
	Start  int    `json:"start"`
	End    int    `json:"end"`
	Digest string `json:"digest"`
}

// FindingRecord is the payload of a GateFindingEvent record: the finding
// in the clear and the signatures of its envelope (see SignedRef).
type FindingRecord struct {
	SessionID string      `json:"session_id"`
	HookEvent string      `json:"hook_event_name"` // GateFindingEvent
	Finding   GateFinding `json:"finding"`
	Signed    *SignedRef  `json:"signed,omitzero"`
}

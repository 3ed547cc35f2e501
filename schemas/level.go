package schemas

// Degradation levels (seed 002, FR-SEC-035): what a session, a host or the
// whole fleet may still do after security events. The effective level of a
// request is the highest of its session's, its host's and the fleet's.
const (
	LevelNormal     = "NORMAL"     // the policy alone decides
	LevelRestrict   = "RESTRICT"   // read-only tools only; writes and commands are denied
	LevelCheckpoint = "CHECKPOINT" // every write or command asks the human
	LevelContain    = "CONTAIN"    // every tool call is denied; the agent is told to stop
	LevelHalt       = "HALT"       // every tool call of the host or fleet is denied until an operator lifts it

	// Level scopes.
	ScopeSession = "session"
	ScopeHost    = "host"
	ScopeFleet   = "fleet"

	// LevelChain is the chain that records host and fleet level changes
	// (a session's own changes go into the session's chain).
	LevelChain = "claimcheck-levels"

	// Rules of level changes and of the refusals they cause.
	RuleLevelDenials   = "level.denials"   // repeated denials of one session's tool calls
	RuleLevelInjection = "level.injection" // an injection finding at or above a threshold
	RuleLevelCrashes   = "level.crashes"   // a burst of claimcheck-hook failures on a host
	RuleLevelContained = "level.contained" // sessions of one host contained by rule within a window
	RuleLevelAnomaly   = "level.anomaly"   // a session's activity stayed far above its agent type's baseline
	RuleLevelOperator  = "level.operator"  // `claimcheck gate level --set`
	RuleLevelEnforced  = "level.enforced"  // a refusal the level caused
	RuleLevelUnknown   = "level.unavailable"
)

// Levels lists the levels from least to most restrictive.
var Levels = []string{LevelNormal, LevelRestrict, LevelCheckpoint, LevelContain, LevelHalt}

// LevelRank is a level's place in Levels (-1 for an unknown name).
func LevelRank(level string) int {
	for i, l := range Levels {
		if l == level {
			return i
		}
	}
	return -1
}

// LevelState is the value of a key in the levels bucket
// (session.<session>, host.<host token>, fleet), updated by compare and set.
type LevelState struct {
	V     int    `json:"v"`
	Scope string `json:"scope"`
	Name  string `json:"name,omitempty"`
	Level string `json:"level"`
	// Rule and Cause say why the level is what it is; Operator names who
	// set it by hand.
	Rule      string `json:"rule,omitempty"`
	Cause     string `json:"cause,omitempty"`
	Operator  string `json:"operator,omitempty"`
	ChangedAt string `json:"changed_at,omitempty"`
	ChangedBy string `json:"changed_by,omitempty"` // the gatekeeper that wrote the change
	// FindingID is the signed level_change record of the last change.
	FindingID string `json:"finding_id,omitempty"`
	// Denials and Injections count the session's events since the level
	// was last set by hand (the escalation rules' counters).
	Denials    int `json:"denials,omitempty"`
	Injections int `json:"injections,omitempty"`
	// DenialsBy counts the denials per agent of the session: the hook
	// payload's agent_id for a sub-agent, "" for the main thread (the
	// seed's "3x same agent").
	DenialsBy map[string]int `json:"denials_by,omitempty"`
	// LastAnomaly is the key of the last anomaly counted (each raises the
	// level once, however many gatekeepers report it).
	LastAnomaly string `json:"last_anomaly,omitempty"`
	// InjectionEvents are the events of the last flagged tool results
	// counted (a retried inspection of one result counts once).
	InjectionEvents []string `json:"injection_events,omitempty"`
	// Contained are a host's sessions contained by rule within the
	// contained rule's window (each once, however many report it).
	Contained []ContainedSession `json:"contained,omitempty"`
	// Notice is a change the session's user has not been shown yet (one
	// made by an operator or on another request); the next answer in the
	// session carries it as a systemMessage and clears it.
	Notice string `json:"notice,omitempty"`
}

// A ContainedSession is a session of a host that a rule raised to
// CONTAIN, and when.
type ContainedSession struct {
	Session string `json:"session"`
	At      string `json:"at"` // RFC 3339
}

// LevelRequest is what `claimcheck gate level --set` sends on
// subject.GateLevel; the answer is a LevelReply.
type LevelRequest struct {
	V        int    `json:"v"`
	Scope    string `json:"scope"`
	Name     string `json:"name,omitempty"`
	Level    string `json:"level"`
	Reason   string `json:"reason"`
	Operator string `json:"operator"`
}

// LevelReply answers a LevelRequest.
type LevelReply struct {
	State LevelState `json:"state"`
	Error string     `json:"error,omitempty"`
}

// Package envelope builds the event.v1 documents claimcheck-hook publishes:
// the hook's attribution fields plus the agent's payload spliced in verbatim,
// so that ingest can verify payload_digest over exactly the bytes received.
package envelope

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/schemas"
)

// Source attributes an event.
type Source struct {
	Host      string
	AgentType string // e.g. "claude-code"
	AgentID   string
}

// TimeFormat is RFC 3339 in UTC with milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// Event returns an event.v1 envelope carrying raw (already checked by
// payload.Inspect) verbatim. It is written by hand rather than by the
// reflection-based encoder: claimcheck-hook builds one envelope per process,
// and first-use reflection costs more than the rest of the envelope.
func Event(eventID, sessionID, hookEvent string, seq uint64, received time.Time, src Source, raw []byte) ([]byte, error) {
	return event(eventID, sessionID, hookEvent, seq, received, src, raw, nil)
}

// SessionStart returns the event.v1 envelope of a SessionStart payload,
// carrying beside it (not inside it: the payload stays the agent's bytes)
// the hook configuration the session starts under. A nil cfg gives Event's
// envelope.
func SessionStart(eventID, sessionID string, seq uint64, received time.Time, src Source, raw []byte,
	cfg *schemas.HookConfig) ([]byte, error) {
	return event(eventID, sessionID, schemas.HookSessionStart, seq, received, src, raw, cfg)
}

func event(eventID, sessionID, hookEvent string, seq uint64, received time.Time, src Source, raw []byte,
	cfg *schemas.HookConfig) ([]byte, error) {
	b := make([]byte, 0, len(raw)+512)
	var err error
	str := func(name, v string) {
		if err != nil {
			return
		}
		b = append(b, ',', '"')
		b = append(b, name...)
		b = append(b, '"', ':')
		b, err = jsontext.AppendQuote(b, v)
	}
	num := func(name string, v uint64) {
		b = append(b, ',', '"')
		b = append(b, name...)
		b = append(b, '"', ':')
		b = strconv.AppendUint(b, v, 10)
	}
	b = append(b, `{"v":1`...)
	str("kind", schemas.KindEvent)
	str("event_id", eventID)
	str("session_id", sessionID)
	str("hook_event", hookEvent)
	str("host", src.Host)
	str("agent_type", src.AgentType)
	str("agent_id", src.AgentID)
	num("client_seq", seq)
	str("received_at", received.UTC().Format(TimeFormat))
	str("payload_digest", digest.SHA256(raw))
	num("payload_size", uint64(len(raw)))
	if err != nil {
		return nil, fmt.Errorf("envelope: %w", err)
	}
	if cfg != nil {
		enc, err := json.Marshal(cfg, json.Deterministic(true))
		if err != nil {
			return nil, fmt.Errorf("envelope: hook_config: %w", err)
		}
		b = append(b, `,"hook_config":`...)
		b = append(b, enc...)
	}
	b = append(b, `,"payload":`...)
	b = append(b, raw...)
	return append(b, '}'), nil
}

// Rejected returns an event.v1 envelope recording an input the hook refused:
// the digest and size of the whole input, the reason and a short excerpt
// (scrubbed by ingest before it is stored). sessionID is whatever could be
// read, possibly hostile; it only travels inside JSON.
func Rejected(eventID, sessionID, hookEvent string, seq uint64, received time.Time, src Source, inputDigest string, inputSize int,
	excerpt []byte, reason string) ([]byte, error) {
	if len(excerpt) > 1024 {
		excerpt = excerpt[:1024]
	}
	return json.Marshal(schemas.Envelope{
		V: 1, Kind: schemas.KindRejected, EventID: eventID, SessionID: clip(sessionID, 4096), HookEvent: clip(hookEvent, 256),
		Host: src.Host, AgentType: src.AgentType, AgentID: src.AgentID, ClientSeq: seq,
		ReceivedAt: received.UTC().Format(TimeFormat), PayloadDigest: inputDigest, PayloadSize: inputSize,
		Rejected: &schemas.Rejected{Reason: clip(reason, 2048), Excerpt: clip(string(excerpt), 8192)},
	})
}

func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

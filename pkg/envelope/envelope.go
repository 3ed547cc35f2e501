// Package envelope builds the event.v1 documents claimcheck-hook publishes:
// the hook's attribution fields plus the agent's payload spliced in verbatim,
// so that ingest can verify payload_digest over exactly the bytes received.
package envelope

import (
	"bytes"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"

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
// payload.Inspect) verbatim.
func Event(eventID, sessionID, hookEvent string, seq uint64, received time.Time, src Source, raw []byte) ([]byte, error) {
	head, err := json.Marshal(schemas.Envelope{
		V: 1, Kind: schemas.KindEvent, EventID: eventID, SessionID: sessionID, HookEvent: hookEvent,
		Host: src.Host, AgentType: src.AgentType, AgentID: src.AgentID, ClientSeq: seq,
		ReceivedAt: received.UTC().Format(TimeFormat), PayloadDigest: digest.SHA256(raw), PayloadSize: len(raw),
	})
	if err != nil {
		return nil, fmt.Errorf("envelope: %w", err)
	}
	if len(head) < 2 || head[len(head)-1] != '}' {
		return nil, fmt.Errorf("envelope: unexpected encoding")
	}
	var b bytes.Buffer
	b.Grow(len(head) + len(raw) + 16)
	b.Write(head[:len(head)-1])
	b.WriteString(`,"payload":`)
	b.Write(raw)
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Rejected returns an event.v1 envelope recording an input the hook refused:
// the digest and size of the whole input, the reason and a short excerpt
// (scrubbed by ingest before it is stored). sessionID is whatever could be
// read, possibly hostile; it only travels inside JSON.
func Rejected(eventID, sessionID, hookEvent string, seq uint64, received time.Time, src Source, inputDigest string, inputSize int, excerpt []byte, reason string) ([]byte, error) {
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

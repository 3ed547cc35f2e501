// Package payload reads and checks agent hook payloads (the JSON an agent CLI
// writes to a hook's stdin) strictly: bounded size, one JSON object, no
// duplicate member names at any depth, valid UTF-8, bounded nesting, and the
// two members every event carries (session_id, hook_event_name) present as
// strings. Unknown events and unknown members are kept: only what is
// malformed is refused. It is shared by claimcheck-hook and ingest.
package payload

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// DefaultMaxBytes is the default input cap (256 KiB).
const DefaultMaxBytes = 256 << 10

// DefaultMaxDepth bounds object/array nesting.
const DefaultMaxDepth = 128

// Errors wrapped by Read and Inspect; the message names the exact problem.
var (
	ErrTooLarge  = errors.New("hook payload too large")
	ErrMalformed = errors.New("malformed hook payload")
	ErrMissing   = errors.New("hook payload lacks a required member")
)

// Read reads all of r up to max bytes and returns the bytes with surrounding
// whitespace trimmed. A longer input yields ErrTooLarge without reading the
// rest.
func Read(r io.Reader, max int) ([]byte, error) {
	if max <= 0 {
		max = DefaultMaxBytes
	}
	b, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err != nil {
		return nil, fmt.Errorf("read hook payload: %w", err)
	}
	if len(b) > max {
		return nil, fmt.Errorf("%w: more than %d bytes (limit set by hook.max_input_bytes)", ErrTooLarge, max)
	}
	return bytes.TrimSpace(b), nil
}

// Info holds the members of a payload that claimcheck routes and indexes on.
// Absent optional members are "".
type Info struct {
	SessionID string
	HookEvent string
	ToolName  string
	ToolUseID string
	AgentID   string
	AgentType string
	PromptID  string
}

// indexed maps the top-level members Info records to their fields.
var indexed = map[string]func(*Info) *string{
	"session_id":      func(i *Info) *string { return &i.SessionID },
	"hook_event_name": func(i *Info) *string { return &i.HookEvent },
	"tool_name":       func(i *Info) *string { return &i.ToolName },
	"tool_use_id":     func(i *Info) *string { return &i.ToolUseID },
	"agent_id":        func(i *Info) *string { return &i.AgentID },
	"agent_type":      func(i *Info) *string { return &i.AgentType },
	"prompt_id":       func(i *Info) *string { return &i.PromptID },
}

// Inspect checks raw strictly and extracts its Info. maxDepth <= 0 means
// DefaultMaxDepth. Top-level member names that differ only in letter case are
// refused as ambiguous (encoding/json would merge them).
func Inspect(raw []byte, maxDepth int) (Info, error) {
	var info Info
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	if len(raw) == 0 {
		return info, fmt.Errorf("%w: empty input", ErrMalformed)
	}
	dec := jsontext.NewDecoder(bytes.NewReader(raw)) // rejects duplicate names and invalid UTF-8 by default
	tok, err := dec.ReadToken()
	if err != nil {
		return info, malformed(err)
	}
	if tok.Kind() != '{' {
		return info, fmt.Errorf("%w: top level is a JSON %s, not an object", ErrMalformed, kindName(tok.Kind()))
	}
	folded := map[string]string{}
	for dec.PeekKind() != '}' {
		nameTok, err := dec.ReadToken()
		if err != nil {
			return info, malformed(err)
		}
		name := nameTok.String()
		lower := strings.ToLower(name)
		if prev, dup := folded[lower]; dup {
			return info, fmt.Errorf("%w: members %q and %q differ only in letter case", ErrMalformed, prev, name)
		}
		folded[lower] = name
		if field, ok := indexed[name]; ok && dec.PeekKind() == '"' {
			v, err := dec.ReadToken()
			if err != nil {
				return info, malformed(err)
			}
			*field(&info) = v.String()
			continue
		}
		if err := skip(dec, maxDepth); err != nil {
			return info, err
		}
	}
	if _, err := dec.ReadToken(); err != nil { // the closing '}'
		return info, malformed(err)
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		if err == nil {
			return info, fmt.Errorf("%w: trailing data after the JSON object at byte %d", ErrMalformed, dec.InputOffset())
		}
		return info, malformed(err)
	}
	switch {
	case info.SessionID == "":
		return info, fmt.Errorf("%w: session_id (a non-empty string)", ErrMissing)
	case info.HookEvent == "":
		return info, fmt.Errorf("%w: hook_event_name (a non-empty string)", ErrMissing)
	}
	return info, nil
}

// skip consumes one value, enforcing the depth limit (the decoder itself
// validates syntax, names and UTF-8 as it goes).
func skip(dec *jsontext.Decoder, maxDepth int) error {
	base := dec.StackDepth()
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return malformed(err)
		}
		switch tok.Kind() {
		case '{', '[':
			if dec.StackDepth() > maxDepth {
				return fmt.Errorf("%w: nested deeper than %d levels at byte %d", ErrMalformed, maxDepth, dec.InputOffset())
			}
		}
		if dec.StackDepth() == base {
			return nil
		}
	}
}

func malformed(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: truncated JSON", ErrMalformed)
	}
	msg := strings.TrimPrefix(err.Error(), "jsontext: ")
	return fmt.Errorf("%w: %s", ErrMalformed, msg)
}

func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	case '[':
		return "array"
	}
	return "value"
}

// ToolInputDigest returns "sha256:<hex>" of the RFC 8785 canonical form of
// the payload's top-level tool_input member, or "" when it has none (or raw
// is not a JSON object). Claude Code sends a tool call's input in its
// PreToolUse and again in its PostToolUse: equal digests pair the two,
// whatever the spacing or member order of either.
func ToolInputDigest(raw []byte) string {
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return ""
	}
	for dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil {
			return ""
		}
		if name.String() != "tool_input" {
			if dec.SkipValue() != nil {
				return ""
			}
			continue
		}
		v, err := dec.ReadValue()
		if err != nil {
			return ""
		}
		c := v.Clone()
		if c.Canonicalize() != nil {
			return ""
		}
		sum := sha256.Sum256(c)
		return "sha256:" + hex.EncodeToString(sum[:])
	}
	return ""
}

// Package id makes and checks the identifiers claimcheck puts on the wire:
// event ids (ULIDs), session ids and the subject tokens derived from them. An
// identifier that fails these checks never reaches a NATS subject or a file
// path.
package id

import (
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/oklog/ulid/v2"

	"github.com/claimcheck/claimcheck/pkg/clock"
)

// Generator makes ULIDs that increase strictly within one Generator, even
// when the injected clock stalls or steps backwards. It is safe for
// concurrent use.
type Generator struct {
	mu      sync.Mutex
	clock   clock.Clock
	entropy *ulid.MonotonicEntropy
	lastMS  uint64
}

// NewGenerator returns a Generator reading time from c and randomness from r
// (crypto/rand when r is nil; see FastEntropy).
func NewGenerator(c clock.Clock, r io.Reader) *Generator {
	if r == nil {
		r = rand.Reader
	}
	if c == nil {
		c = clock.Real{}
	}
	return &Generator{clock: c, entropy: ulid.Monotonic(r, 0)}
}

// New returns the next ULID as its 26-character string.
func (g *Generator) New() (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	ms := ulid.Timestamp(g.clock.Now())
	if ms < g.lastMS {
		ms = g.lastMS // never go backwards: keep the monotonic entropy in the same millisecond
	}
	u, err := ulid.New(ms, g.entropy)
	if err != nil {
		// Entropy overflow within one millisecond: move to the next one.
		ms++
		if u, err = ulid.New(ms, g.entropy); err != nil {
			return "", fmt.Errorf("new ulid: %w", err)
		}
	}
	g.lastMS = ms
	return u.String(), nil
}

// Derived returns a ULID fixed by t (millisecond) and seed: the same inputs
// always give the same id. ingest uses it for records that arrive without a
// usable event id, so that a redelivered message maps to the same record.
func Derived(t time.Time, seed []byte) string {
	sum := sha256.Sum256(seed)
	var u ulid.ULID
	_ = u.SetTime(ulid.Timestamp(t))
	_ = u.SetEntropy(sum[:10])
	return u.String()
}

// FastEntropy reads from the runtime's ChaCha8 generator (math/rand/v2),
// which the Go runtime seeds from the operating system's randomness. Ids stay
// unpredictable, without the one-time cost of crypto/rand's DRBG start-up,
// which dominates a short-lived process such as claimcheck-hook.
type FastEntropy struct{}

// Read fills p.
func (FastEntropy) Read(p []byte) (int, error) {
	for i := 0; i < len(p); i += 8 {
		v := mrand.Uint64()
		for j := 0; j < 8 && i+j < len(p); j++ {
			p[i+j] = byte(v >> (8 * j))
		}
	}
	return len(p), nil
}

// ValidULID reports whether s is a canonical (upper-case) ULID string:
// ^[0-7][0-9A-HJKMNP-TV-Z]{25}$ (Crockford base32, at most 128 bits).
func ValidULID(s string) bool {
	if len(s) != 26 || s[0] < '0' || s[0] > '7' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		digit := c >= '0' && c <= '9'
		letter := c >= 'A' && c <= 'Z' && c != 'I' && c != 'L' && c != 'O' && c != 'U'
		if !digit && !letter {
			return false
		}
	}
	return true
}

// MaxSessionLen bounds session ids.
const MaxSessionLen = 128

// ErrBadSession is wrapped by every session-id rejection.
var ErrBadSession = errors.New("invalid session id")

// CheckSession accepts ids of 1..128 characters from [A-Za-z0-9_-] starting
// with a letter or digit (Claude Code uses UUIDs). It rejects everything else
// (dots, slashes, wildcards, spaces, control characters, non-ASCII) with a
// reason that quotes the id safely.
func CheckSession(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("%w: empty", ErrBadSession)
	case len(s) > MaxSessionLen:
		return fmt.Errorf("%w: %d bytes long, the limit is %d", ErrBadSession, len(s), MaxSessionLen)
	case !sessionChars(s):
		return fmt.Errorf("%w %s: only letters, digits, '_' and '-' are allowed, starting with a letter or digit", ErrBadSession, Quote(s))
	}
	return nil
}

func sessionChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '_' && c != '-') {
			return false
		}
	}
	return true
}

// OtherEvent is the subject token for hook event names that are not plain
// identifiers.
const OtherEvent = "Other"

// EventToken maps a hook event name to a NATS subject token: the name itself
// when it is a plain identifier (PostToolUse), otherwise OtherEvent.
func EventToken(hookEvent string) string {
	if len(hookEvent) == 0 || len(hookEvent) > 64 {
		return OtherEvent
	}
	for i := 0; i < len(hookEvent); i++ {
		c := hookEvent[i]
		letter := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return OtherEvent
		}
	}
	return hookEvent
}

// Quote renders an untrusted string for an error message: Go-quoted, with
// invalid UTF-8 and control characters escaped, cut to 80 runes.
func Quote(s string) string {
	const maxRunes = 80
	if utf8.RuneCountInString(s) > maxRunes || !utf8.ValidString(s) {
		r := []rune(s)
		if len(r) > maxRunes {
			return fmt.Sprintf("%q… (%d bytes)", string(r[:maxRunes]), len(s))
		}
	}
	return fmt.Sprintf("%q", s)
}

// MaxNameLen bounds host tokens and identity names.
const MaxNameLen = 63

// ErrBadName is wrapped by every host or identity-name rejection.
var ErrBadName = errors.New("invalid name")

// HostToken maps a host name to the NATS subject token that carries it:
// lower case, dots replaced by '_' (DNS names have no '_', so distinct DNS
// names keep distinct tokens). NATS credentials bind a host to this token
// and ingest compares an envelope's host with the token of the subject it
// arrived on. Names that do not map to 1..63 characters of [a-z0-9_-],
// starting with a letter or digit, are refused.
func HostToken(host string) (string, error) {
	b := []byte(host)
	for i, c := range b {
		switch {
		case c >= 'A' && c <= 'Z':
			b[i] = c + 'a' - 'A'
		case c == '.':
			b[i] = '_'
		}
	}
	tok := string(b)
	if err := CheckName(tok); err != nil {
		return "", fmt.Errorf("host %s: %w", Quote(host), err)
	}
	return tok, nil
}

// CheckName accepts identity names and host tokens: 1..63 characters of
// [a-z0-9_-] starting with a letter or digit (NATS credential tags are
// lower case, and a name becomes one subject token).
func CheckName(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("%w: empty", ErrBadName)
	case len(s) > MaxNameLen:
		return fmt.Errorf("%w: %d bytes long, the limit is %d", ErrBadName, len(s), MaxNameLen)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '_' && c != '-') {
			return fmt.Errorf(
				"%w %s: only lower-case letters, digits, '_' and '-' are allowed, starting with a letter or digit", ErrBadName, Quote(s))
		}
	}
	return nil
}

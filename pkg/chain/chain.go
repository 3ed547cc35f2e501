// Package chain builds and verifies claimcheck's per-session hash chains.
//
// An entry's hash is SHA-256 over the RFC 8785 canonical form of the entry
// without its "hash" member; entries are stored in canonical form; entry n
// carries prev_hash = hash of entry n-1 (digest.Zero for n = 1). Verification
// recomputes everything from the stored bytes and reports the first position
// that is wrong, and why.
package chain

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/claimcheck/claimcheck/pkg/canon"
	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/schemas"
)

// Seal fills e.Hash and returns the entry's canonical bytes, the form stored
// in the ledger. e.N, e.PrevHash and e.Chain must already be set; integers
// must stay below 2^53 (the schema's bound), where RFC 8785 and Go agree.
//
// schemas.Entry declares its fields in RFC 8785 member order and the JSON
// encoder escapes strings exactly as RFC 8785 does, so the encoding is
// already canonical; the chain tests and FuzzSealIsCanonical hold Seal to it
// (and Verify refuses any stored entry that is not canonical).
func Seal(e *schemas.Entry) ([]byte, error) {
	e.Hash = ""
	c, err := json.Marshal(e) // "hash" is omitted while empty
	if err != nil {
		return nil, fmt.Errorf("seal entry: %w", err)
	}
	if e.Claim != nil || e.Verdict != nil {
		// Claims and verdicts carry the agent's arguments as raw JSON,
		// whose member order is the agent's.
		if c, err = canon.Canonicalize(c); err != nil {
			return nil, fmt.Errorf("seal entry: %w", err)
		}
	}
	e.Hash = digest.SHA256(c)
	return insertHash(c, e.Hash)
}

// insertHash adds "hash":h to a canonical encoded entry at its sorted place:
// before the first top-level member that sorts after "hash". Entry members
// that can follow "hash" and be first are hook_config, hook_event, host and
// ingested_at (required); an unescaped `,"name":` cannot occur inside a JSON string, and
// no nested object of an entry has these names.
func insertHash(c []byte, h string) ([]byte, error) {
	at := -1
	for _, next := range []string{`,"hook_config":`, `,"hook_event":`, `,"host":`, `,"ingested_at":`} {
		if i := bytes.Index(c, []byte(next)); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	if at < 0 {
		return insertMember(c, "hash", h)
	}
	member := `,"hash":"` + h + `"`
	out := make([]byte, 0, len(c)+len(member))
	out = append(out, c[:at]...)
	out = append(out, member...)
	return append(out, c[at:]...), nil
}

// insertMember adds "name":"value" (both plain ASCII needing no escapes) to
// the canonical object c at its sorted position, keeping c canonical.
func insertMember(c []byte, name, value string) ([]byte, error) {
	member := `"` + name + `":"` + value + `"`
	dec := jsontext.NewDecoder(bytes.NewReader(c))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, errors.New("seal entry: not an object")
	}
	at := -1
	for dec.PeekKind() == '"' {
		off := dec.InputOffset()
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, fmt.Errorf("seal entry: %w", err)
		}
		if n := tok.String(); n == name {
			return nil, fmt.Errorf("seal entry: member %q already present", name)
		} else if n > name { // ASCII names: byte order is UTF-16 order
			at = int(off)
			break
		}
		if err := dec.SkipValue(); err != nil {
			return nil, fmt.Errorf("seal entry: %w", err)
		}
	}
	out := make([]byte, 0, len(c)+len(member)+1)
	switch {
	case at < 0: // goes last
		out = append(out, c[:len(c)-1]...)
		if len(c) > 2 {
			out = append(out, ',')
		}
		out = append(out, member...)
		out = append(out, '}')
	default:
		if c[at] == ',' {
			at++ // InputOffset sits before the separator
		}
		out = append(out, c[:at]...)
		out = append(out, member...)
		out = append(out, ',')
		out = append(out, c[at:]...)
	}
	return out, nil
}

// Hash recomputes the hash of a stored entry: SHA-256 over the canonical form
// of the entry with its "hash" member removed. It works on any JSON object,
// including entries of future versions with members this code does not know.
func Hash(stored []byte) (string, error) {
	sc := getScratch()
	var f fields
	ms, proved := sc.scan(stored, &f, sc.ms[:0])
	sc.ms = ms[:0]
	h := ""
	if proved {
		h = string(sc.hashWithout(stored, f.cut))
	}
	scratchPool.Put(sc)
	if proved { // canonical: its canonical form is itself
		return h, nil
	}
	c, err := canon.Canonicalize(stored)
	if err != nil {
		return "", fmt.Errorf("entry is not a JSON object: %w", err)
	}
	return hashCanonical(c)
}

// hashCanonical hashes a canonical entry. Removing a top-level member from
// RFC 8785 output leaves the canonical form of the rest (members stay
// sorted, nothing else moves), so the member is cut out of the bytes rather
// than decoded and re-encoded.
func hashCanonical(c []byte) (string, error) {
	rest, err := withoutMember(c, "hash")
	if err != nil {
		return "", err
	}
	return digest.SHA256(rest), nil
}

// withoutMember returns c without its top-level member name.
func withoutMember(c []byte, name string) ([]byte, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(c))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, errors.New("entry is not a JSON object")
	}
	first := true
	for dec.PeekKind() != '}' {
		start := dec.InputOffset() // before the separating comma, if any
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, fmt.Errorf("entry is not a JSON object: %w", err)
		}
		isName := tok.String() == name // before the token is voided
		if _, err := dec.ReadValue(); err != nil {
			return nil, fmt.Errorf("entry is not a JSON object: %w", err)
		}
		end := dec.InputOffset()
		if isName {
			if first && end < int64(len(c)) && c[end] == ',' {
				end++ // the first member: drop the comma after it instead
			}
			out := make([]byte, 0, len(c)-int(end-start))
			out = append(out, c[:start]...)
			return append(out, c[end:]...), nil
		}
		first = false
	}
	return c, nil
}

// Fault describes the first defect found in a chain.
type Fault struct {
	Chain  string // chain (session id or "_rejected")
	N      uint64 // the position (1-based) where the defect was found
	Reason string
}

func (f *Fault) Error() string {
	return fmt.Sprintf("chain %s: position %d: %s", f.Chain, f.N, f.Reason)
}

// ErrFault is matched by every *Fault (errors.Is(err, chain.ErrFault)).
var ErrFault = errors.New("chain fault")

// Is makes errors.Is(f, ErrFault) true.
func (f *Fault) Is(target error) bool { return target == ErrFault }

// head is the subset of an entry verification reads.
type head struct {
	V        int    `json:"v"`
	N        uint64 `json:"n"`
	PrevHash string `json:"prev_hash"`
	Hash     string `json:"hash"`
	Chain    string `json:"chain"`
	EventID  string `json:"event_id"`
}

// Verifier checks the entries of one chain, in order, one at a time.
type Verifier struct {
	chain string
	n     uint64
	prev  string
	// The event ids chained so far, with their positions: a ULID (the
	// form ingest writes) as its 128 bits, in a map without pointers that
	// the garbage collector need not scan and that holds no string per
	// entry; any other id as its string.
	ulids  map[ulid]uint64
	events map[string]uint64
	start  StartFunc
}

// ulid is an event id in the canonical ULID form, as its 128 bits.
type ulid struct{ hi, lo uint64 }

// crockford maps the 32 digits of an upper-case ULID to their values;
// every other byte to 0xff.
var crockford = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i, c := range "0123456789ABCDEFGHJKMNPQRSTVWXYZ" {
		t[c] = byte(i)
	}
	return t
}()

// parseULID reads id when it is a ULID in canonical form: 26 upper-case
// Crockford base-32 digits, the first at most 7. Distinct such ids have
// distinct values; any other id is not read (ok false), so ids in the two
// maps of a Verifier never stand for each other.
func parseULID(id []byte) (u ulid, ok bool) {
	if len(id) != 26 || id[0] > '7' {
		return u, false
	}
	for _, c := range id {
		d := crockford[c]
		if d == 0xff {
			return u, false
		}
		u.hi = u.hi<<5 | u.lo>>59
		u.lo = u.lo<<5 | uint64(d)
	}
	return u, true
}

// chained records that the entry at pos chains event id; at is the
// position of an earlier entry that chained it (dup true).
func (v *Verifier) chained(id []byte, pos uint64) (at uint64, dup bool) {
	if u, ok := parseULID(id); ok {
		if at, dup = v.ulids[u]; !dup {
			if v.ulids == nil {
				v.ulids = map[ulid]uint64{}
			}
			v.ulids[u] = pos
		}
		return at, dup
	}
	if at, dup = v.events[string(id)]; !dup {
		if v.events == nil {
			v.events = map[string]uint64{}
		}
		v.events[string(id)] = pos
	}
	return at, dup
}

// StartFunc tells where a chain trimmed by retention may begin: the hash
// of entry n when the chain's stored entries may start right after it.
type StartFunc func(n uint64) (hash string, ok bool)

// NewVerifierFrom verifies a chain from its first stored entry, which may
// be entry 1, or entry n+1 when start vouches for entry n (the rotator's
// anchor for a chain whose older entries are only in the archive).
func NewVerifierFrom(chainName string, start StartFunc) *Verifier {
	v := NewVerifier(chainName)
	v.start = start
	return v
}

// NewVerifier starts verifying chain from its first entry.
func NewVerifier(chainName string) *Verifier {
	return &Verifier{chain: chainName, prev: digest.Zero}
}

// NewVerifierAt continues verifying a chain whose entries up to n (with hash
// prev) were verified elsewhere, e.g. an archive segment.
func NewVerifierAt(chainName string, n uint64, prev string) *Verifier {
	return &Verifier{chain: chainName, n: n, prev: prev}
}

// Head returns the position and hash of the last verified entry.
func (v *Verifier) Head() (uint64, string) { return v.n, v.prev }

// Next verifies the next stored entry. On failure it returns a *Fault and the
// verifier must not be used further.
//
// An entry canon.ScanObject proves canonical is checked from that one read
// of its bytes: its head taken from the members as stored and the hash
// computed over the bytes around its "hash" member, with nothing decoded,
// re-encoded or copied. Any other entry (canonical in a form ScanObject
// does not prove, or not canonical, or not JSON) is decoded and
// canonicalized to be judged. Both paths reach the same verdict with the
// same reason (FuzzNextMatchesGeneralPath).
func (v *Verifier) Next(stored []byte) error {
	sc := getScratch()
	defer scratchPool.Put(sc)
	var f fields
	ms, proved := sc.scan(stored, &f, sc.ms[:0])
	sc.ms = ms[:0]
	if proved {
		return v.next(stored, &f, sc)
	}
	return v.nextGeneral(stored)
}

// NextScanned is Next that also returns, when the entry was checked on
// the fast path, its top-level members as canon.ScanObject read them
// (appended to ms[:0]; proved is then true): a caller that reads more of
// the entry takes it from there instead of reading the bytes again.
func (v *Verifier) NextScanned(stored []byte, ms []canon.Member) (_ []canon.Member, proved bool, _ error) {
	sc := getScratch()
	defer scratchPool.Put(sc)
	var f fields
	if ms, proved = sc.scan(stored, &f, ms[:0]); proved {
		return ms, true, v.next(stored, &f, sc)
	}
	return ms, false, v.nextGeneral(stored)
}

// fields is what Next reads of an entry: the head's members as stored
// (strings without their quotes), and where its "hash" member is.
type fields struct {
	n                             uint64
	prevHash, hash, chain, events []byte
	cut                           [2]int // the bytes of the "hash" member and its separating comma; {0, 0} without one
}

// scratch is what checking one entry needs besides the verifier's state.
type scratch struct {
	ms  []canon.Member
	sha hash.Hash
	sum [sha256.Size]byte
	hex [len(digest.Prefix) + 2*sha256.Size]byte
}

var scratchPool = sync.Pool{New: func() any {
	sc := &scratch{sha: sha256.New()}
	copy(sc.hex[:], digest.Prefix)
	return sc
}}

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

// scan proves stored canonical and reads its head from the members as
// stored. It returns false, proving nothing, when ScanObject cannot prove
// the entry canonical or a head member is not of the plain form Next's
// general path would decode the same way (a string with escapes, a number
// that is not a small non-negative integer, another type).
func (sc *scratch) scan(stored []byte, f *fields, ms []canon.Member) ([]canon.Member, bool) {
	ms, ok := canon.ScanObject(stored, ms)
	if !ok {
		return ms, false
	}
	for i, m := range ms {
		switch string(m.Name) {
		case "v":
			if _, ok := plainInt(m.Value); !ok {
				return ms, false
			}
		case "n":
			if f.n, ok = plainInt(m.Value); !ok {
				return ms, false
			}
		case "prev_hash":
			if f.prevHash, ok = plainString(m.Value); !ok {
				return ms, false
			}
		case "hash":
			if f.hash, ok = plainString(m.Value); !ok {
				return ms, false
			}
			end := m.Start + len(m.Name) + 3 + len(m.Value) // "name":value
			switch {
			case i > 0: // with the comma before it
				f.cut = [2]int{m.Start - 1, end}
			case len(ms) > 1: // the first member: with the comma after it
				f.cut = [2]int{m.Start, end + 1}
			default:
				f.cut = [2]int{m.Start, end}
			}
		case "chain":
			if f.chain, ok = plainString(m.Value); !ok {
				return ms, false
			}
		case "event_id":
			if f.events, ok = plainString(m.Value); !ok {
				return ms, false
			}
		}
	}
	return ms, true
}

// plainInt reads a number ScanObject accepted (an integer of at most 15
// digits) when it is not negative.
func plainInt(b []byte) (uint64, bool) {
	if len(b) == 0 || b[0] < '0' || b[0] > '9' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b), 10, 64)
	return n, err == nil
}

// plainString returns the content of a string ScanObject accepted when it
// has no escapes: then its bytes are its value.
func plainString(b []byte) ([]byte, bool) {
	if len(b) < 2 || b[0] != '"' || bytes.IndexByte(b, '\\') >= 0 {
		return nil, false
	}
	return b[1 : len(b)-1], true
}

// hashWithout hashes stored without the bytes cut, into sc.hex.
func (sc *scratch) hashWithout(stored []byte, cut [2]int) []byte {
	sc.sha.Reset()
	sc.sha.Write(stored[:cut[0]])
	sc.sha.Write(stored[cut[1]:])
	hex.Encode(sc.hex[len(digest.Prefix):], sc.sha.Sum(sc.sum[:0]))
	return sc.hex[:]
}

// next checks an entry scan proved canonical.
func (v *Verifier) next(stored []byte, f *fields, sc *scratch) error {
	pos, err := v.position(f.n)
	if err != nil {
		return err
	}
	return v.link(pos, f, sc.hashWithout(stored, f.cut))
}

// position is the position the next entry must have, given that it says
// it is entry n; a missing, duplicated or reordered entry is reported
// before its content.
func (v *Verifier) position(n uint64) (uint64, error) {
	pos := v.n + 1
	if v.start != nil && v.n == 0 && n > 1 {
		if hash, ok := v.start(n - 1); ok {
			v.n, v.prev, pos = n-1, hash, n
		}
	}
	v.start = nil
	if n != 0 && n != pos {
		switch {
		case n > pos:
			return pos, v.fault(pos, "expected entry n=%d, found n=%d: entries %d..%d are missing or out of order", pos, n, pos, n-1)
		default:
			return pos, v.fault(pos, "expected entry n=%d, found n=%d: entry repeated or out of order", pos, n)
		}
	}
	return pos, nil
}

func (v *Verifier) fault(pos uint64, format string, args ...any) error {
	return &Fault{Chain: v.chain, N: pos, Reason: fmt.Sprintf(format, args...)}
}

// link checks a canonical entry at position pos whose content hashes to
// computed, and makes it the chain's head.
func (v *Verifier) link(pos uint64, f *fields, computed []byte) error {
	if !bytes.Equal(f.hash, computed) {
		return v.fault(pos, "hash mismatch: entry says %s, content hashes to %s (entry modified)", f.hash, computed)
	}
	if f.n != pos {
		return v.fault(pos, "expected entry n=%d, found n=%d", pos, f.n)
	}
	if string(f.prevHash) != v.prev {
		return v.fault(pos, "prev_hash %s does not match the hash of entry %d (%s): an entry before it was changed, removed or reordered",
			f.prevHash, pos-1, v.prev)
	}
	if string(f.chain) != v.chain {
		return v.fault(pos, "entry belongs to chain %q, not %q", f.chain, v.chain)
	}
	if len(f.events) > 0 {
		if at, dup := v.chained(f.events, pos); dup {
			return v.fault(pos, "event %s is chained twice (first at position %d)", f.events, at)
		}
	}
	v.n, v.prev = pos, string(f.hash)
	return nil
}

// nextGeneral checks an entry scan could not: decoded, canonicalized and
// compared with its stored bytes.
func (v *Verifier) nextGeneral(stored []byte) error {
	var h head
	if err := json.Unmarshal(stored, &h, json.RejectUnknownMembers(false)); err != nil {
		return v.fault(v.n+1, "entry is not valid JSON: %v", err)
	}
	pos, err := v.position(h.N)
	if err != nil {
		return err
	}
	c, err := canon.Canonicalize(stored)
	if err != nil {
		return v.fault(pos, "entry is not a JSON object: %v", err)
	}
	if !bytes.Equal(c, stored) {
		return v.fault(pos, "entry is not stored in canonical (RFC 8785) form")
	}
	computed, err := hashCanonical(c)
	if err != nil {
		return v.fault(pos, "%v", err)
	}
	return v.link(pos, &fields{n: h.N, prevHash: []byte(h.PrevHash), hash: []byte(h.Hash), chain: []byte(h.Chain),
		events: []byte(h.EventID)}, []byte(computed))
}

// Verify checks a whole chain given its stored entries in order.
func Verify(chainName string, entries [][]byte) error {
	v := NewVerifier(chainName)
	for _, e := range entries {
		if err := v.Next(e); err != nil {
			return err
		}
	}
	return nil
}

package archive

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/subject"
)

// Problem is one defect, named by segment.
type Problem struct {
	Segment string `json:"segment"`
	Reason  string `json:"reason"`
	// Signature is set when the problem is only that the checkpoint's
	// signature does not count (e.g. its key was revoked before it signed).
	Signature bool `json:"signature,omitempty"`
}

func (p Problem) String() string { return p.Segment + ": " + p.Reason }

// Head is the last archived entry of a chain.
type Head struct {
	N    uint64 `json:"n"`
	Hash string `json:"hash"`
	Seq  uint64 `json:"seq"` // stream sequence of its message
}

// Report is the outcome of Verify.
type Report struct {
	Stream     string            `json:"stream"`
	Segments   int               `json:"segments"`   // verified, checkpointed segments
	Tombstones int               `json:"tombstones"` // deleted by retention
	Messages   int               `json:"messages"`
	Entries    int               `json:"entries"`
	Last       uint64            `json:"last_seq"` // the archive covers 1..Last
	Pending    []string          `json:"pending,omitempty"`
	Problems   []Problem         `json:"problems,omitempty"`
	Heads      map[string]Head   `json:"-"`
	LastManif  []byte            `json:"-"` // the last checkpointed manifest's bytes
	Manifests  map[string][]byte `json:"-"`
}

// OK reports whether no problem was found.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

func (r *Report) problem(seg, format string, args ...any) {
	r.Problems = append(r.Problems, Problem{Segment: seg, Reason: fmt.Sprintf(format, args...)})
}

// Options tune Verify.
type Options struct {
	// Keys checks checkpoint signatures (at the time they say they were made).
	Keys *keyring.Set
	// Now and Retention judge tombstones: a segment deleted before it was
	// Retention old is a problem. Zero Retention skips the check.
	Now       time.Time
	Retention time.Duration
	// Segment, when set, receives every verified segment's messages in order.
	Segment func(m Manifest, msgs []Message) error
}

// VerifyCheckpoint checks a checkpoint envelope against manifest bytes.
func VerifyCheckpoint(keys *keyring.Set, env, manifest []byte) (Checkpoint, error) {
	var cp Checkpoint
	var outer struct {
		Payload string `json:"payload"`
	}
	if err := json.Unmarshal(env, &outer, json.RejectUnknownMembers(false)); err != nil {
		return cp, fmt.Errorf("checkpoint is not a DSSE envelope: %w", err)
	}
	// The signing time is inside the signed payload: read it first, then
	// verify the signature as of that time.
	unverified, err := decodeB64(outer.Payload)
	if err != nil {
		return cp, errors.New("checkpoint payload is not base64")
	}
	if err := json.Unmarshal(unverified, &cp, json.RejectUnknownMembers(false)); err != nil {
		return cp, fmt.Errorf("checkpoint payload: %w", err)
	}
	at, err := time.Parse(TimeFormat, cp.SignedAt)
	if err != nil {
		return cp, fmt.Errorf("checkpoint signed_at: %w", err)
	}
	if _, err := keys.Verify(env, CheckpointType, at); err != nil {
		return cp, fmt.Errorf("checkpoint signature: %w", err)
	}
	if cp.ManifestSHA256 != Digest(manifest) {
		return cp, errors.New("manifest digest does not match the checkpoint (the manifest was edited)")
	}
	return cp, nil
}

// Verify checks every segment of a stream in the archive: checkpoint
// signatures, manifest and segment digests, consecutive sequences from 1
// (or from the first tombstone), each manifest's link to the previous one,
// and, for LEDGER, every entry of every chain in order across segments.
// Every problem is reported with its segment; err is only for a store
// that cannot be read at all, a cancelled ctx, or o.Segment's error.
func Verify(ctx context.Context, st *Store, streamName string, o Options) (*Report, error) {
	r := &Report{Stream: streamName, Heads: map[string]Head{}, Manifests: map[string][]byte{}}
	if o.Keys == nil {
		return nil, errors.New("archive verify: no key set")
	}
	l, err := st.List(ctx, streamName)
	if err != nil {
		return nil, err
	}
	for _, k := range l.Foreign {
		r.problem(k, "foreign object under the archive prefix")
	}
	w := &walk{r: r, st: st, stream: streamName, o: o,
		verifiers: map[string]*chain.Verifier{}, broken: map[string]bool{}, digests: map[uint64][32]byte{}}
	tombs := map[string]bool{}
	for _, t := range l.Tombstones {
		tombs[t] = true
	}
	// Walk tombstones and segments in name order.
	names := mergeNames(l)
	for i, it := range names {
		if err := ctx.Err(); err != nil {
			return r, err
		}
		first, last, _ := ParseName(it.Name)
		switch {
		case tombs[it.Name]:
			// Deleted by retention. Objects listed beside the tombstone are
			// a deletion in progress (the rotator writes the tombstone
			// first), or one a crash cut short, which its next pass ends.
			w.tombstoned(ctx, it.Name, last)
		case !it.Checkpoint && i == len(names)-1 && (it.Segment || it.Manifest):
			// The newest segment, uploaded but not yet checkpointed.
			r.Pending = append(r.Pending, it.Name)
		case !it.Checkpoint:
			r.problem(it.Name, "no checkpoint: the segment was never verified and signed (or its checkpoint was removed)")
			w.passed(it.Name, "", last)
		case !it.Manifest || !it.Segment:
			what := "manifest"
			if it.Manifest {
				what = "segment object"
			}
			r.problem(it.Name, "%s missing", what)
			w.passed(it.Name, "", last)
		default:
			if err := w.segment(ctx, it.Name, first, last); err != nil {
				return r, err
			}
		}
	}
	return r, nil
}

// walk is Verify's state as it goes through a stream's tombstones and
// segments in name order.
type walk struct {
	r      *Report
	st     *Store
	stream string
	o      Options

	verifiers map[string]*chain.Verifier // by chain, at its last entry so far
	broken    map[string]bool            // chains with a reported fault: not followed further
	digests   map[uint64][32]byte        // of the archived messages, for restored copies

	// The segment (or tombstone) before the current one: its name, its
	// manifest's digest ("" when it has none that counts) and its last
	// sequence. prevName is "" at the start.
	prevName, prevDigest string
	prevLast             uint64
}

// passed makes the segment name, ending at sequence last, the one the next
// segment must follow; digest is its manifest's, or "" when it has none
// that counts.
func (w *walk) passed(name, digest string, last uint64) {
	w.prevName, w.prevDigest, w.prevLast = name, digest, last
}

// link checks that segment name, with manifest m, continues the one before
// it: its sequences follow on, and its manifest names the previous one's
// digest.
func (w *walk) link(name string, m Manifest) {
	r := w.r
	switch {
	case w.prevName == "" && m.First != 1 && m.Prev == "":
		r.problem(name, "the archive starts at sequence %d, not 1, and nothing records the earlier segments", m.First)
	case w.prevName == "" && m.First != 1:
		r.problem(name, "the segment before it (%s) is missing and no tombstone records its deletion", m.PrevName)
	case w.prevName != "" && m.First != w.prevLast+1:
		r.problem(name, "sequences %d..%d are missing between %s and this segment (a segment was removed)",
			w.prevLast+1, m.First-1, w.prevName)
	case w.prevName != "" && m.Prev != w.prevDigest:
		r.problem(name, "does not link to the previous segment's manifest %s (a manifest was replaced)", w.prevName)
	}
}

// tombstoned follows a segment deleted by retention: its tombstone keeps the
// signed manifest, from whose chain heads the next segments continue.
func (w *walk) tombstoned(ctx context.Context, name string, last uint64) {
	r := w.r
	m, manRaw, ok := r.tombstone(ctx, w.st, w.stream, name, w.o)
	if !ok {
		w.passed(name, "", last)
		return
	}
	w.link(name, m)
	r.Tombstones++
	for _, c := range m.Chains {
		w.verifiers[c.Chain] = chain.NewVerifierAt(c.Chain, c.LastN, c.LastHash)
		r.Heads[c.Chain] = Head{N: c.LastN, Hash: c.LastHash, Seq: c.LastSeq}
	}
	w.passed(name, Digest(manRaw), last)
	r.Last = last
}

// deletedMeanwhile handles an object of segment name found missing after
// the listing (err): when retention deleted the segment since (a running
// rotator; its tombstone is written before the objects go), the segment is
// followed as tombstoned and it reports true; otherwise false, and the
// caller reports the missing object.
func (w *walk) deletedMeanwhile(ctx context.Context, err error, name string, last uint64) bool {
	if !errors.Is(err, ErrNotFound) {
		return false
	}
	if _, terr := w.st.Get(ctx, TombstoneKey(w.stream, name)); terr != nil {
		return false
	}
	w.tombstoned(ctx, name, last)
	return true
}

// segment verifies one checkpointed segment, first..last: its manifest and
// checkpoint, its link to the segment before, and its messages, which it
// then hands to o.Segment. Defects are problems of the report; the error is
// only o.Segment's.
func (w *walk) segment(ctx context.Context, name string, first, last uint64) error {
	r := w.r
	m, manRaw, trusted, ok := w.checkpointed(ctx, name, first, last)
	if !ok {
		return nil
	}
	seg, err := w.st.Get(ctx, SegmentKey(w.stream, name))
	if err != nil && w.deletedMeanwhile(ctx, err, name, last) {
		return nil
	}
	w.link(name, m)
	w.passed(name, Digest(manRaw), last)
	if err != nil {
		r.problem(name, "%v", err)
		return nil
	}
	msgs, err := Decode(seg, m)
	if err != nil {
		r.problem(name, "%v", err)
		return nil
	}
	w.messages(name, msgs)
	if w.o.Segment != nil {
		if err := w.o.Segment(m, msgs); err != nil {
			return err
		}
	}
	if !trusted {
		r.Last = last // its content was read and checked all the same
		return nil
	}
	r.Segments++
	r.Messages += m.Messages
	r.Entries += m.Entries
	r.Last = last
	r.LastManif = manRaw
	r.Manifests[name] = manRaw
	return nil
}

// checkpointed reads segment name's manifest and checkpoint, verifies the
// checkpoint, and checks that both name this stream, this segment and its
// range first..last. trusted is false when the checkpoint does not verify
// (reported; the segment is still read, so that one bad checkpoint does not
// hide what follows it). ok is false when the segment cannot be read on
// (reported).
func (w *walk) checkpointed(ctx context.Context, name string, first, last uint64) (m Manifest, manRaw []byte, trusted, ok bool) {
	r := w.r
	manRaw, err := w.st.Get(ctx, ManifestKey(w.stream, name))
	if err != nil {
		if !w.deletedMeanwhile(ctx, err, name, last) {
			r.problem(name, "%v", err)
		}
		return m, nil, false, false
	}
	cpRaw, err := w.st.Get(ctx, CheckpointKey(w.stream, name))
	if err != nil {
		if !w.deletedMeanwhile(ctx, err, name, last) {
			r.problem(name, "%v", err)
		}
		return m, nil, false, false
	}
	cp, err := VerifyCheckpoint(w.o.Keys, cpRaw, manRaw)
	trusted = err == nil
	if err != nil {
		r.problem(name, "%v", err)
		r.Problems[len(r.Problems)-1].Signature = errors.Is(err, keyring.ErrUnverified)
		cp = Checkpoint{Stream: w.stream, Name: name, First: first, Last: last}
	}
	if err := json.Unmarshal(manRaw, &m); err != nil {
		r.problem(name, "manifest unreadable: %v", err)
		return m, nil, false, false
	}
	if trusted && cp.SegmentSHA256 != m.SegmentSHA256 {
		cp.Name = "" // signed for other segment bytes: reported as another segment below
	}
	if m.Stream != w.stream || m.Name != name || m.First != first || m.Last != last || cp.Name != name ||
		cp.Stream != w.stream || cp.First != first || cp.Last != last {
		r.problem(name, "manifest or checkpoint names another stream, segment or range")
		return m, nil, false, false
	}
	return m, manRaw, trusted, true
}

// messages checks segment seg's messages in order, each in its chain (a
// chain with a reported fault is not followed further), then remembers their
// digests for the restored copies of later segments.
func (w *walk) messages(seg string, msgs []Message) {
	for _, msg := range msgs {
		name, ok := subject.ChainOf(msg.Subject)
		if !ok || w.broken[name] {
			continue
		}
		if msg.RestoredFrom != 0 {
			w.restored(seg, name, msg)
			continue
		}
		w.entries(seg, name, msg)
	}
	for _, msg := range msgs {
		w.digests[msg.Seq] = sha256.Sum256([]byte(msg.Data))
	}
}

// restored checks a copy put back by restore: it must be the archived
// message it names, which must be one the archive held.
func (w *walk) restored(seg, name string, msg Message) {
	r := w.r
	if d, ok := w.digests[msg.RestoredFrom]; ok && d != sha256.Sum256([]byte(msg.Data)) {
		r.problem(seg, "message %d claims to restore archived message %d but differs from it", msg.Seq, msg.RestoredFrom)
		w.broken[name] = true
	} else if !ok && msg.RestoredFrom > r.Last {
		r.problem(seg, "message %d claims to restore message %d, which the archive never held", msg.Seq, msg.RestoredFrom)
		w.broken[name] = true
	}
}

// entries runs chain name's verifier on over the message's entries (one a
// line) and records the chain's head.
func (w *walk) entries(seg, name string, msg Message) {
	v := w.verifiers[name]
	if v == nil {
		v = chain.NewVerifier(name)
		w.verifiers[name] = v
	}
	for raw := range bytes.SplitSeq([]byte(msg.Data), []byte{'\n'}) {
		if err := v.Next(raw); err != nil {
			w.r.problem(seg, "%v", err)
			w.broken[name] = true
			break
		}
	}
	n, h := v.Head()
	w.r.Heads[name] = Head{N: n, Hash: h, Seq: msg.Seq}
}

func (r *Report) tombstone(ctx context.Context, st *Store, streamName, name string, o Options) (Manifest, []byte, bool) {
	var m Manifest
	raw, err := st.Get(ctx, TombstoneKey(streamName, name))
	if err != nil {
		r.problem(name, "%v", err)
		return m, nil, false
	}
	var t Tombstone
	if err := json.Unmarshal(raw, &t); err != nil {
		r.problem(name, "tombstone unreadable: %v", err)
		return m, nil, false
	}
	manRaw := []byte(t.Manifest)
	if _, err := VerifyCheckpoint(o.Keys, []byte(t.Checkpoint), manRaw); err != nil {
		r.problem(name, "tombstone: %v", err)
		return m, nil, false
	}
	if err := json.Unmarshal(manRaw, &m); err != nil || m.Name != name || m.Stream != streamName {
		r.problem(name, "tombstone manifest names another segment")
		return m, nil, false
	}
	if o.Retention > 0 {
		lastT, err := time.Parse(TimeFormat, m.LastTime)
		if err != nil || lastT.After(o.Now.Add(-o.Retention)) {
			r.problem(name, "deleted before its retention period (last message %s, retention %s)", m.LastTime, o.Retention)
		}
	}
	return m, manRaw, true
}

// mergeNames lists tombstoned and present segments in name order.
func mergeNames(l Listing) []Listed {
	byName := map[string]Listed{}
	for _, s := range l.Segments {
		byName[s.Name] = s
	}
	for _, t := range l.Tombstones {
		s := byName[t]
		s.Name, s.Deleted = t, true
		byName[t] = s
	}
	out := make([]Listed, 0, len(byName))
	for _, s := range byName {
		out = append(out, s)
	}
	sortListed(out)
	return out
}

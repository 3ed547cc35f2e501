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
// that cannot be read at all.
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
	verifiers := map[string]*chain.Verifier{}
	broken := map[string]bool{}
	digests := map[uint64][32]byte{} // of the archived messages, for restored copies
	var prevDigest, prevName string
	var prevLast uint64
	link := func(name string, m Manifest) {
		switch {
		case prevName == "" && m.First != 1 && m.Prev == "":
			r.problem(name, "the archive starts at sequence %d, not 1, and nothing records the earlier segments", m.First)
		case prevName == "" && m.First != 1:
			r.problem(name, "the segment before it (%s) is missing and no tombstone records its deletion", m.PrevName)
		case prevName != "" && m.First != prevLast+1:
			r.problem(name, "sequences %d..%d are missing between %s and this segment (a segment was removed)",
				prevLast+1, m.First-1, prevName)
		case prevName != "" && m.Prev != prevDigest:
			r.problem(name, "does not link to the previous segment's manifest %s (a manifest was replaced)", prevName)
		}
	}
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
		if tombs[it.Name] && !it.Segment && !it.Manifest {
			m, manRaw, ok := r.tombstone(ctx, st, streamName, it.Name, o)
			if !ok {
				prevName, prevDigest, prevLast = it.Name, "", last
				continue
			}
			link(it.Name, m)
			r.Tombstones++
			for _, c := range m.Chains {
				verifiers[c.Chain] = chain.NewVerifierAt(c.Chain, c.LastN, c.LastHash)
				r.Heads[c.Chain] = Head{N: c.LastN, Hash: c.LastHash, Seq: c.LastSeq}
			}
			prevName, prevDigest, prevLast = it.Name, Digest(manRaw), last
			r.Last = last
			continue
		}
		if !it.Checkpoint {
			if i == len(names)-1 && (it.Segment || it.Manifest) {
				r.Pending = append(r.Pending, it.Name)
				continue
			}
			r.problem(it.Name, "no checkpoint: the segment was never verified and signed (or its checkpoint was removed)")
			prevName, prevDigest, prevLast = it.Name, "", last
			continue
		}
		if !it.Manifest || !it.Segment {
			what := "manifest"
			if it.Manifest {
				what = "segment object"
			}
			r.problem(it.Name, "%s missing", what)
			prevName, prevDigest, prevLast = it.Name, "", last
			continue
		}
		manRaw, err := st.Get(ctx, ManifestKey(streamName, it.Name))
		if err != nil {
			r.problem(it.Name, "%v", err)
			continue
		}
		cpRaw, err := st.Get(ctx, CheckpointKey(streamName, it.Name))
		if err != nil {
			r.problem(it.Name, "%v", err)
			continue
		}
		cp, err := VerifyCheckpoint(o.Keys, cpRaw, manRaw)
		trusted := err == nil
		if err != nil {
			// Reported; the segment is still read so that one bad
			// checkpoint does not hide what follows it.
			r.problem(it.Name, "%v", err)
			r.Problems[len(r.Problems)-1].Signature = errors.Is(err, keyring.ErrUnverified)
			cp = Checkpoint{Stream: streamName, Name: it.Name, First: first, Last: last}
		}
		var m Manifest
		if err := json.Unmarshal(manRaw, &m); err != nil {
			r.problem(it.Name, "manifest unreadable: %v", err)
			continue
		}
		if trusted && cp.SegmentSHA256 != m.SegmentSHA256 {
			cp.Name = ""
		}
		if m.Stream != streamName || m.Name != it.Name || m.First != first || m.Last != last || cp.Name != it.Name ||
			cp.Stream != streamName || cp.First != first || cp.Last != last {
			r.problem(it.Name, "manifest or checkpoint names another stream, segment or range")
			continue
		}
		link(it.Name, m)
		prevName, prevDigest, prevLast = it.Name, Digest(manRaw), last
		seg, err := st.Get(ctx, SegmentKey(streamName, it.Name))
		if err != nil {
			r.problem(it.Name, "%v", err)
			continue
		}
		msgs, err := Decode(seg, m)
		if err != nil {
			r.problem(it.Name, "%v", err)
			continue
		}
		for _, msg := range msgs {
			name, ok := subject.ChainOf(msg.Subject)
			if !ok || broken[name] {
				continue
			}
			if msg.RestoredFrom != 0 {
				// A copy put back by restore: it must be the archived message.
				if d, ok := digests[msg.RestoredFrom]; ok && d != sha256.Sum256([]byte(msg.Data)) {
					r.problem(it.Name, "message %d claims to restore archived message %d but differs from it", msg.Seq, msg.RestoredFrom)
					broken[name] = true
				} else if !ok && msg.RestoredFrom > r.Last {
					r.problem(it.Name, "message %d claims to restore message %d, which the archive never held", msg.Seq, msg.RestoredFrom)
					broken[name] = true
				}
				continue
			}
			v := verifiers[name]
			if v == nil {
				v = chain.NewVerifier(name)
				verifiers[name] = v
			}
			for raw := range bytes.SplitSeq([]byte(msg.Data), []byte{'\n'}) {
				if err := v.Next(raw); err != nil {
					r.problem(it.Name, "%v", err)
					broken[name] = true
					break
				}
			}
			n, h := v.Head()
			r.Heads[name] = Head{N: n, Hash: h, Seq: msg.Seq}
		}
		for _, msg := range msgs {
			digests[msg.Seq] = sha256.Sum256([]byte(msg.Data))
		}
		if o.Segment != nil {
			if err := o.Segment(m, msgs); err != nil {
				return r, err
			}
		}
		if !trusted {
			r.Last = last // its content was read and checked all the same
			continue
		}
		r.Segments++
		r.Messages += m.Messages
		r.Entries += m.Entries
		r.Last = last
		r.LastManif = manRaw
		r.Manifests[it.Name] = manRaw
	}
	return r, nil
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

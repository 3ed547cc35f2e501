package replay

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/archive"
	"github.com/claimcheck/claimcheck/pkg/subject"
)

// segment is one archived segment or tombstone, its manifest's signature
// verified.
type segment struct {
	name  string
	m     archive.Manifest
	first time.Time
	last  time.Time
	tomb  bool
}

// readArchive indexes every archived manifest whose checkpoint verifies
// (each chain's last entry per segment: the anchors of mid-chain starts),
// reads the segments that overlap the window, and returns the sequence the
// hot read starts from: after the archive's last sequence when the window
// reached into it, else 0 (the hot read starts from the window's time).
func (r *replayer) readArchive(ctx context.Context) (uint64, error) {
	segs, err := r.index(ctx)
	if err != nil {
		return 0, err
	}
	w, slack := r.cfg.Window, r.cfg.Slack
	overlaps := func(s segment) bool {
		return !s.last.Before(w.Since.Add(-slack)) && (w.Until.IsZero() || !s.first.After(w.Until.Add(slack)))
	}
	reached := false
	var next uint64 // the sequence the next segment must start at
	for _, s := range segs {
		if next != 0 && s.m.First != next {
			if s.m.First > next {
				r.gap(fmt.Sprintf("the archive holds no segment for sequences %d..%d", next, s.m.First-1))
			}
		}
		next = s.m.Last + 1
		if !overlaps(s) {
			continue
		}
		reached = true
		if s.tomb {
			r.gap(fmt.Sprintf("archive segment %s (sequences %d..%d, %s..%s) was deleted by retention", s.name, s.m.First, s.m.Last,
				s.m.FirstTime, s.m.LastTime))
			continue
		}
		if s.m.Last <= r.cfg.After.Seq {
			continue
		}
		if err := r.readSegment(ctx, s); err != nil {
			var bad badSegment
			if errors.As(err, &bad) {
				// Stop the archive part here: what follows is read hot.
				r.gap(bad.Error())
				return s.m.First, nil
			}
			return 0, err
		}
	}
	if !reached || next == 0 {
		return 0, nil
	}
	return next, nil
}

// badSegment is a segment that does not verify.
type badSegment struct{ name, reason string }

func (b badSegment) Error() string {
	return fmt.Sprintf("archive segment %s does not verify (%s): read from the hot stream on; run `claimcheck archive verify`",
		b.name, b.reason)
}

func (r *replayer) gap(s string) { r.sum.Gaps = append(r.sum.Gaps, s) }

// index lists the archive and reads every manifest whose checkpoint
// verifies, in stream order.
func (r *replayer) index(ctx context.Context) ([]segment, error) {
	st, name := r.cfg.Archive, r.cfg.Stream
	l, err := st.List(ctx, name)
	if err != nil {
		return nil, err
	}
	r.heads = map[string]map[uint64]string{}
	var out []segment
	add := func(segName string, mraw []byte, tomb bool) {
		var m archive.Manifest
		if err := json.Unmarshal(mraw, &m, json.RejectUnknownMembers(false)); err != nil {
			r.gap(fmt.Sprintf("archive segment %s: manifest unreadable: %v", segName, err))
			return
		}
		first, ferr := time.Parse(archive.TimeFormat, m.FirstTime)
		last, lerr := time.Parse(archive.TimeFormat, m.LastTime)
		if ferr != nil || lerr != nil {
			r.gap(fmt.Sprintf("archive segment %s: manifest times %q..%q unreadable", segName, m.FirstTime, m.LastTime))
			return
		}
		for _, c := range m.Chains {
			if r.heads[c.Chain] == nil {
				r.heads[c.Chain] = map[uint64]string{}
			}
			r.heads[c.Chain][c.LastN] = c.LastHash
		}
		out = append(out, segment{name: segName, m: m, first: first, last: last, tomb: tomb})
	}
	tombs := map[string]bool{}
	for _, t := range l.Tombstones {
		tombs[t] = true
	}
	names := make([]string, 0, len(l.Segments)+len(l.Tombstones))
	listed := map[string]archive.Listed{}
	for _, s := range l.Segments {
		listed[s.Name] = s
		names = append(names, s.Name)
	}
	for _, t := range l.Tombstones {
		if _, ok := listed[t]; !ok {
			names = append(names, t)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s, isSeg := listed[n]
		switch {
		case tombs[n] && (!isSeg || !s.Segment):
			raw, err := st.Get(ctx, archive.TombstoneKey(name, n))
			if err != nil {
				return nil, err
			}
			var t archive.Tombstone
			if err := json.Unmarshal(raw, &t, json.RejectUnknownMembers(false)); err != nil {
				r.gap(fmt.Sprintf("archive tombstone %s unreadable: %v", n, err))
				continue
			}
			if _, err := archive.VerifyCheckpoint(r.cfg.Keys, []byte(t.Checkpoint), []byte(t.Manifest)); err != nil {
				r.gap(fmt.Sprintf("archive tombstone %s: %v", n, err))
				continue
			}
			add(n, []byte(t.Manifest), true)
		case !s.Checkpoint || !s.Manifest:
			// Not checkpointed yet (or damaged): its messages are still hot.
		default:
			mraw, err := st.Get(ctx, archive.ManifestKey(name, n))
			if err != nil {
				return nil, err
			}
			env, err := st.Get(ctx, archive.CheckpointKey(name, n))
			if err != nil {
				return nil, err
			}
			if _, err := archive.VerifyCheckpoint(r.cfg.Keys, env, mraw); err != nil {
				r.gap(fmt.Sprintf("archive segment %s: %v", n, err))
				continue
			}
			add(n, mraw, false)
		}
	}
	return out, nil
}

// readSegment reads one verified segment's messages into the replay.
func (r *replayer) readSegment(ctx context.Context, s segment) error {
	raw, err := r.cfg.Archive.Get(ctx, archive.SegmentKey(r.cfg.Stream, s.name))
	if errors.Is(err, archive.ErrNotFound) {
		return badSegment{s.name, "its segment object is missing"}
	}
	if err != nil {
		return err
	}
	msgs, err := archive.Decode(raw, s.m)
	if err != nil {
		return badSegment{s.name, err.Error()}
	}
	r.sum.Segments++
	for _, m := range msgs {
		if err := ctx.Err(); err != nil {
			return err
		}
		c, ok := subject.ChainOf(m.Subject)
		switch {
		case !ok:
		case m.RestoredFrom != 0:
			r.sum.Restored++ // a copy of an earlier archived message
		default:
			r.add(ctx, queued{seq: m.Seq, src: SourceArchive, block: true}, c, []byte(m.Data))
			if r.q.full() {
				if _, err := r.flush(time.Time{}); err != nil {
					return err
				}
			}
		}
	}
	_, err = r.flush(time.Time{})
	return err
}

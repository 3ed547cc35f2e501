package rotator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/archive"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/stream"
)

// tail is where a stream's archive ends: the last checkpointed (or
// tombstoned) segment.
type tail struct {
	last     uint64 // sequences 1..last are archived and verified
	manifest []byte // its manifest's bytes (nil: nothing archived yet)
}

type tailItem struct {
	name string
	tomb bool
	seg  archive.Listed
}

// archiveTail lists the archive, removes the objects of segments that
// never got their checkpoint (a crash before verification: they are built
// again from the stream) and returns where the verified archive ends.
func (s *Service) archiveTail(ctx context.Context, name string) (tail, error) {
	var t tail
	l, err := s.store.List(ctx, name)
	if err != nil {
		return t, err
	}
	items := make([]tailItem, 0, len(l.Segments)+len(l.Tombstones))
	for _, seg := range l.Segments {
		items = append(items, tailItem{name: seg.Name, seg: seg})
	}
	for _, tb := range l.Tombstones {
		items = append(items, tailItem{name: tb, tomb: true})
	}
	slices.SortStableFunc(items, func(a, b tailItem) int { return strings.Compare(a.name, b.name) })
	// Only the newest complete segment (or tombstone) matters; segments
	// after it that never got a checkpoint are removed.
	var newest *tailItem
	for k := range items {
		it := &items[k]
		switch {
		case it.tomb || it.seg.Checkpoint && it.seg.Manifest && it.seg.Segment:
			newest = it
		case it.seg.Checkpoint:
			return t, fmt.Errorf(
				"archive %s/%s has a checkpoint but lacks its manifest or segment: run `claimcheck archive verify` (the archive was changed outside the rotator)", name, it.name)
		}
	}
	for _, it := range items {
		if it.tomb || it.seg.Checkpoint || newest != nil && it.name < newest.name {
			continue
		}
		// Uploaded, never verified: remove, it is built again.
		for _, k := range []string{archive.SegmentKey(name, it.name), archive.ManifestKey(name, it.name)} {
			if err := s.store.Delete(ctx, k); err != nil {
				return t, err
			}
		}
		s.set.Logger.InfoContext(ctx, "rotator: removed a segment that was uploaded but never verified; archiving it again",
			slog.String("stream", name), slog.String("segment", it.name))
	}
	if newest == nil {
		return t, nil
	}
	_, t.last, _ = archive.ParseName(newest.name)
	if newest.tomb && !newest.seg.Checkpoint {
		raw, err := s.store.Get(ctx, archive.TombstoneKey(name, newest.name))
		if err != nil {
			return t, err
		}
		var tb archive.Tombstone
		if err := json.Unmarshal(raw, &tb); err != nil {
			return t, fmt.Errorf("tombstone %s/%s: %w", name, newest.name, err)
		}
		t.manifest = []byte(tb.Manifest)
		return t, nil
	}
	raw, err := s.store.Get(ctx, archive.ManifestKey(name, newest.name))
	if err != nil {
		return t, err
	}
	t.manifest = raw
	return t, nil
}

// archiveStream archives name's messages past the archive's tail, one
// segment at a time, until it reaches the stream's last message.
func (s *Service) archiveStream(ctx context.Context, name string, now time.Time, rep *PassReport) error {
	t, err := s.archiveTail(ctx, name)
	if err != nil {
		return err
	}
	st, err := s.js.Stream(ctx, name)
	if err != nil {
		return fmt.Errorf("stream %s: %w", name, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return fmt.Errorf("stream %s: %w", name, err)
	}
	end := info.State.LastSeq
	if t.last > end {
		return fmt.Errorf(
			"stream %s ends at sequence %d but the archive holds up to %d: the stream lost messages (see `claimcheck archive verify` and `claimcheck archive restore`)", name, end, t.last)
	}
	for t.last < end {
		msgs, err := s.read(ctx, st, name, t.last+1, end)
		if err != nil {
			return err
		}
		seg, manifest, err := s.archiveSegment(ctx, name, msgs, t.manifest, now)
		if err != nil {
			return err
		}
		rep.Segments = append(rep.Segments, name+"/"+seg)
		rep.Messages += len(msgs)
		s.m.archived.WithLabelValues(name).Add(float64(len(msgs)))
		t.last, t.manifest = msgs[len(msgs)-1].Seq, manifest
	}
	return nil
}

// read returns consecutive messages from `from` (at most to, the segment
// limits). A missing sequence is an error: the stream lost it before it
// was archived.
func (s *Service) read(ctx context.Context, st jetstream.Stream, name string, from, to uint64) ([]archive.Message, error) {
	n := min(to-from+1, uint64(s.cfg.SegmentMessages))
	cons, err := st.OrderedConsumer(ctx,
		jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: from})
	if err != nil {
		return nil, fmt.Errorf("read %s from %d: %w", name, from, err)
	}
	var out []archive.Message
	size := 0
	for uint64(len(out)) < n {
		// The fetch's own goroutine ends with fctx, whatever path leaves.
		fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		batch, err := cons.Fetch(int(min(n-uint64(len(out)), 500)), jetstream.FetchContext(fctx))
		if err != nil {
			return nil, fmt.Errorf("read %s from %d: %w", name, from, err)
		}
		got := 0
		for m := range batch.Messages() {
			got++
			meta, err := m.Metadata()
			if err != nil {
				return nil, err
			}
			want := from + uint64(len(out))
			if meta.Sequence.Stream != want {
				return nil, fmt.Errorf("stream %s: sequence %d is missing (next is %d): messages were lost before they were archived",
					name, want, meta.Sequence.Stream)
			}
			restored, _ := strconv.ParseUint(m.Headers().Get(archive.RestoredHeader), 10, 64)
			out = append(out,
				archive.Message{Seq: meta.Sequence.Stream, Subject: m.Subject(), Time: messageTime(name, m.Data(), meta.Timestamp),
					Data: string(m.Data()), RestoredFrom: restored})
			size += len(m.Data()) + len(m.Subject()) + 64
			if size >= s.cfg.SegmentBytes || uint64(len(out)) == n {
				break
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
			return nil, fmt.Errorf("read %s from %d: %w", name, from, err)
		}
		if size >= s.cfg.SegmentBytes {
			break
		}
		if got == 0 {
			return nil, fmt.Errorf("read %s from %d: no messages where the stream info says %d..%d exist", name, from, from, to)
		}
	}
	return out, nil
}

// messageTime is a message's age reference: for LEDGER the ingested_at of
// its last entry (chained, so it cannot change unnoticed, and from
// ingest's clock), for other streams when the stream stored it.
func messageTime(name string, data []byte, stored time.Time) string {
	if name == stream.Ledger {
		entries := ledger.SplitBlock(data)
		if len(entries) > 0 {
			var e struct {
				IngestedAt string `json:"ingested_at"`
			}
			if json.Unmarshal(entries[len(entries)-1], &e, json.RejectUnknownMembers(false)) == nil {
				if t, err := time.Parse(time.RFC3339Nano, e.IngestedAt); err == nil {
					return t.UTC().Format(archive.TimeFormat)
				}
			}
		}
	}
	return stored.UTC().Format(archive.TimeFormat)
}

// archiveSegment uploads one segment and its manifest, reads both back and
// compares them with what was read from the stream, then signs and uploads
// the checkpoint and reads that back too. Only then does the segment count.
func (s *Service) archiveSegment(ctx context.Context, name string, msgs []archive.Message, prev []byte,
	now time.Time) (string, []byte, error) {
	b, err := archive.Build(name, msgs, prev, now)
	if err != nil {
		return "", nil, err
	}
	m := b.Manifest
	manifest, err := json.Marshal(m, json.Deterministic(true))
	if err != nil {
		return "", nil, err
	}
	if err := s.store.Put(ctx, archive.SegmentKey(name, m.Name), b.Segment, "application/zstd"); err != nil {
		return "", nil, err
	}
	if err := s.store.Put(ctx, archive.ManifestKey(name, m.Name), manifest, "application/json"); err != nil {
		return "", nil, err
	}
	s.crash("uploaded")
	// Read back: nothing is trusted until it is read and compared.
	gotMan, err := s.store.Get(ctx, archive.ManifestKey(name, m.Name))
	if err != nil {
		return "", nil, err
	}
	if !bytes.Equal(gotMan, manifest) {
		return "", nil, fmt.Errorf("archive %s/%s: the manifest read back differs from the one written", name, m.Name)
	}
	gotSeg, err := s.store.Get(ctx, archive.SegmentKey(name, m.Name))
	if err != nil {
		return "", nil, err
	}
	back, err := archive.DecodeMessages(gotSeg, m) // equal to msgs below, so its chain ranges are m's
	if err != nil {
		return "", nil, fmt.Errorf("archive %s/%s read back: %w", name, m.Name, err)
	}
	if !slices.Equal(back, msgs) {
		return "", nil, fmt.Errorf("archive %s/%s: the segment read back differs from the stream", name, m.Name)
	}
	keys, err := s.reg.List(ctx)
	if err != nil {
		return "", nil, err
	}
	signer, err := keyring.NewSigner(keys, keyring.Dir{Path: s.cfg.KeyDir}, now)
	if err != nil {
		return "", nil, fmt.Errorf("checkpoint signer: %w", err)
	}
	cp := archive.Checkpoint{V: 1, Stream: name, Name: m.Name, First: m.First, Last: m.Last, ManifestSHA256: archive.Digest(manifest),
		SegmentSHA256: m.SegmentSHA256, Prev: m.Prev, SignedAt: now.UTC().Format(archive.TimeFormat)}
	payload, err := json.Marshal(cp, json.Deterministic(true))
	if err != nil {
		return "", nil, err
	}
	env, err := signer.SignAt(ctx, now, archive.CheckpointType, payload)
	if err != nil {
		return "", nil, fmt.Errorf("sign checkpoint: %w", err)
	}
	if err := s.store.Put(ctx, archive.CheckpointKey(name, m.Name), env, "application/json"); err != nil {
		return "", nil, err
	}
	gotCP, err := s.store.Get(ctx, archive.CheckpointKey(name, m.Name))
	if err != nil {
		return "", nil, err
	}
	set, err := keyring.NewSet(keys)
	if err != nil {
		return "", nil, err
	}
	if _, err := archive.VerifyCheckpoint(set, gotCP, manifest); err != nil {
		return "", nil, fmt.Errorf("archive %s/%s: checkpoint read back: %w", name, m.Name, err)
	}
	s.crash("verified")
	return m.Name, manifest, nil
}

package rotator

import (
	"context"
	"fmt"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/archive"
	"github.com/claimcheck/claimcheck/schemas"
)

// SegmentDeleted is the payload of an ArchiveSegmentDeleted record.
type SegmentDeleted struct {
	Stream         string `json:"stream"`
	Segment        string `json:"segment"`
	First          uint64 `json:"first_seq"`
	Last           uint64 `json:"last_seq"`
	LastTime       string `json:"last_time"`
	SegmentSHA256  string `json:"segment_sha256"`
	ManifestSHA256 string `json:"manifest_sha256"`
	Retention      string `json:"retention"`
}

// expire deletes, oldest first, the checkpointed segments whose newest
// message is older than the archive retention: a ledger record with the
// segment's digest first, then a tombstone keeping its manifest and
// checkpoint (so the next segment's link still verifies), then the objects.
func (s *Service) expire(ctx context.Context, name string, now time.Time, rep *PassReport) error {
	l, err := s.store.List(ctx, name)
	if err != nil {
		return err
	}
	cut := now.Add(-s.cfg.ArchiveRetention)
	tomb := map[string]bool{}
	for _, t := range l.Tombstones {
		tomb[t] = true
	}
	for _, seg := range l.Segments {
		if tomb[seg.Name] {
			// A deletion a crash interrupted: its record and tombstone exist.
			if err := s.deleteObjects(ctx, name, seg.Name); err != nil {
				return err
			}
			continue
		}
		if !seg.Checkpoint || !seg.Manifest {
			break
		}
		manRaw, err := s.store.Get(ctx, archive.ManifestKey(name, seg.Name))
		if err != nil {
			return err
		}
		var m archive.Manifest
		if err := json.Unmarshal(manRaw, &m); err != nil {
			return fmt.Errorf("archive %s/%s: manifest: %w", name, seg.Name, err)
		}
		lastT, err := time.Parse(archive.TimeFormat, m.LastTime)
		if err != nil {
			return fmt.Errorf("archive %s/%s: manifest last_time: %w", name, seg.Name, err)
		}
		if !lastT.Before(cut) {
			break
		}
		cp, err := s.store.Get(ctx, archive.CheckpointKey(name, seg.Name))
		if err != nil {
			return err
		}
		d := SegmentDeleted{Stream: name, Segment: seg.Name, First: m.First, Last: m.Last, LastTime: m.LastTime,
			SegmentSHA256: m.SegmentSHA256, ManifestSHA256: archive.Digest(manRaw), Retention: s.cfg.ArchiveRetention.String()}
		key := name + "/" + seg.Name + "/" + m.SegmentSHA256
		if _, err := s.rec.record(ctx, now, lastT, schemas.RotatorSegmentDeleted, key,
			fmt.Sprintf("archive segment %s/%s (sequences %d..%d, newest message %s) deleted: older than the retention of %s", name,
				seg.Name, m.First, m.Last, m.LastTime, s.cfg.ArchiveRetention), d); err != nil {
			return err
		}
		tomb, err := json.Marshal(archive.Tombstone{V: 1, Name: seg.Name, Manifest: string(manRaw), Checkpoint: string(cp),
			DeletedAt: now.UTC().Format(archive.TimeFormat), EventID: eventID(lastT,
				schemas.RotatorSegmentDeleted+"\x00"+key)}, json.Deterministic(true))
		if err != nil {
			return err
		}
		if err := s.store.Put(ctx, archive.TombstoneKey(name, seg.Name), tomb, "application/json"); err != nil {
			return err
		}
		if err := s.deleteObjects(ctx, name, seg.Name); err != nil {
			return err
		}
		rep.Deleted = append(rep.Deleted, name+"/"+seg.Name)
		s.m.deleted.Inc()
	}
	return nil
}

func (s *Service) deleteObjects(ctx context.Context, streamName, seg string) error {
	for _, k := range []string{archive.SegmentKey(streamName, seg), archive.CheckpointKey(streamName, seg),
		archive.ManifestKey(streamName, seg)} {
		if err := s.store.Delete(ctx, k); err != nil {
			return err
		}
	}
	return nil
}

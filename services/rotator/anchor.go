package rotator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/archive"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/stream"
)

// repairAnchor puts a chain's anchor back when its first hot entry links
// to an entry the anchor does not name. The torture test saw this after
// storage errors injected into nats-server: an anchor written (and
// acknowledged) before a trim's purge was gone after the server restarted,
// while the purge stayed; readers then report the trimmed entries missing
// and appends to the chain fail closed. The start is taken only from the
// verified archive: a checkpointed segment whose manifest says, or whose
// messages show, that the chain's entry first.firstN-1 has the hash the hot
// entry links to. Anything else (a chain cut by someone, an archive that
// does not have the entry) is left for readers to report.
func (s *Service) repairAnchor(ctx context.Context, c string, first *blockHead) error {
	if first == nil || first.firstN <= 1 {
		return nil
	}
	want := ledger.Start{N: first.firstN - 1, Hash: first.firstPrev}
	an, rev, ok, err := s.anchors.Get(ctx, c)
	if err != nil {
		return err
	}
	if ok && slices.Contains(an.Starts, want) {
		return nil
	}
	seg, err := s.archivedEntry(ctx, c, want)
	if err != nil {
		s.m.anchorUnrepaired.Inc()
		s.set.Logger.ErrorContext(ctx,
			"rotator: a chain's first hot entry follows an entry its anchor does not name, and the archive does not vouch for it; readers report the gap",
			slog.String("chain", c), slog.Any("first_hot_n", first.firstN), slog.Any("err", err))
		return nil
	}
	starts := []ledger.Start{want}
	if ok {
		starts = append(starts, an.Starts...)
		if len(starts) > 2 {
			starts = starts[:2]
		}
	}
	if err := s.anchors.Put(ctx, ledger.Anchor{Chain: c, Starts: starts, Segment: seg,
		At: time.Now().UTC().Format(archive.TimeFormat)}, rev); err != nil {
		return err
	}
	s.m.anchorRepairs.Inc()
	s.set.Logger.WarnContext(ctx, "rotator: put back a chain's anchor from the archive (it was lost by the NATS store)",
		slog.String("chain", c), slog.Any("start_n", want.N), slog.String("segment", seg), slog.Bool("had_anchor", ok))
	return nil
}

// errNotArchived: no checkpointed segment holds the entry with that hash.
var errNotArchived = errors.New("no checkpointed archive segment holds that entry with that hash")

// archivedEntry finds the checkpointed LEDGER segment holding chain c's
// entry want.N with hash want.Hash, checking each segment it relies on: the
// checkpoint's signature, the manifest's digest and, when it has to read
// the segment, the segment against its manifest.
func (s *Service) archivedEntry(ctx context.Context, c string, want ledger.Start) (string, error) {
	keys, err := s.reg.List(ctx)
	if err != nil {
		return "", err
	}
	set, err := keyring.NewSet(keys)
	if err != nil {
		return "", err
	}
	l, err := s.store.List(ctx, stream.Ledger)
	if err != nil {
		return "", err
	}
	for _, it := range slices.Backward(l.Segments) { // the entry is most likely recent
		if !it.Checkpoint || !it.Manifest || !it.Segment {
			continue
		}
		manRaw, err := s.store.Get(ctx, archive.ManifestKey(stream.Ledger, it.Name))
		if err != nil {
			return "", err
		}
		var m archive.Manifest
		if err := json.Unmarshal(manRaw, &m, json.RejectUnknownMembers(false)); err != nil {
			return "", fmt.Errorf("manifest %s: %w", it.Name, err)
		}
		i := slices.IndexFunc(m.Chains, func(r archive.ChainRange) bool {
			return r.Chain == c && r.FirstN <= want.N && want.N <= r.LastN
		})
		if i < 0 {
			continue
		}
		cpRaw, err := s.store.Get(ctx, archive.CheckpointKey(stream.Ledger, it.Name))
		if err != nil {
			return "", err
		}
		if _, err := archive.VerifyCheckpoint(set, cpRaw, manRaw); err != nil {
			return "", fmt.Errorf("segment %s: %w", it.Name, err)
		}
		if r := m.Chains[i]; r.LastN == want.N {
			if r.LastHash != want.Hash {
				return "", mismatch(it.Name, c, want, r.LastHash)
			}
			return it.Name, nil
		}
		segRaw, err := s.store.Get(ctx, archive.SegmentKey(stream.Ledger, it.Name))
		if err != nil {
			return "", err
		}
		msgs, err := archive.Decode(segRaw, m) // checks the segment's digest
		if err != nil {
			return "", fmt.Errorf("segment %s: %w", it.Name, err)
		}
		for _, msg := range msgs {
			for _, e := range ledger.SplitBlock([]byte(msg.Data)) {
				var h struct {
					Chain string `json:"chain"`
					N     uint64 `json:"n"`
					Hash  string `json:"hash"`
				}
				if json.Unmarshal(e, &h, json.RejectUnknownMembers(false)) != nil || h.Chain != c || h.N != want.N {
					continue
				}
				if h.Hash != want.Hash {
					return "", mismatch(it.Name, c, want, h.Hash)
				}
				return it.Name, nil
			}
		}
	}
	return "", errNotArchived
}

func mismatch(seg, c string, want ledger.Start, got string) error {
	return fmt.Errorf("segment %s has entry %d of %s with hash %s; the first hot entry links to %s", seg, want.N, c, got, want.Hash)
}

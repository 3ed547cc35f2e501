package rotator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/archive"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
)

// trim removes from LEDGER the messages that are archived (and verified),
// older than the hot window, of chains with no entry inside the protection
// window, never a chain's last message (the per-chain compare-and-set of
// appends keeps its baseline) and never the rotator's own chain. Before
// each purge the chain's anchor records where its hot entries will begin.
func (s *Service) trim(ctx context.Context, now time.Time, rep *PassReport) error {
	st, err := s.js.Stream(ctx, stream.Ledger)
	if err != nil {
		return fmt.Errorf("stream %s: %w", stream.Ledger, err)
	}
	if !stream.Trimmable(st.CachedInfo().Config) {
		rep.TrimDisabled = "LEDGER was created with deny_purge (by claimcheck before the rotator trimmed); it is archived but not trimmed"
		return nil
	}
	t, err := s.archiveTail(ctx, stream.Ledger)
	if err != nil {
		return err
	}
	// Nothing leaves the hot ledger before a checkpoint of the Merkle tree
	// covers it: the tree is built from LEDGER alone.
	logged, err := s.tlog.CatchUp(ctx)
	if err != nil {
		return err
	}
	if err := s.archiveCheckpoint(ctx); err != nil {
		return err
	}
	t.last = min(t.last, uint64(logged.N))
	if t.last == 0 {
		return nil
	}
	hot, protect := now.Add(-s.cfg.HotWindow), now.Add(-s.cfg.ProtectWindow)
	chains, err := ledger.NewReader(s.js, stream.Ledger).Chains(ctx)
	if err != nil {
		return err
	}
	for _, c := range chains {
		if c == schemas.RotatorChain {
			continue
		}
		purged, err := s.trimChain(ctx, st, c, t.last, hot, protect)
		if err != nil {
			return fmt.Errorf("trim %s: %w", c, err)
		}
		if purged > 0 {
			rep.TrimmedChains++
			rep.TrimmedMsgs += purged
			s.m.trimmed.Add(float64(purged))
		}
	}
	return nil
}

type blockHead struct {
	firstN    uint64
	firstPrev string
	lastN     uint64
	lastHash  string
	at        time.Time
}

func readBlock(data []byte) (blockHead, error) {
	var b blockHead
	entries := ledger.SplitBlock(data)
	if len(entries) == 0 {
		return b, errors.New("empty block")
	}
	var first, last struct {
		N          uint64 `json:"n"`
		PrevHash   string `json:"prev_hash"`
		Hash       string `json:"hash"`
		IngestedAt string `json:"ingested_at"`
	}
	if err := json.Unmarshal(entries[0], &first, json.RejectUnknownMembers(false)); err != nil {
		return b, err
	}
	if err := json.Unmarshal(entries[len(entries)-1], &last, json.RejectUnknownMembers(false)); err != nil {
		return b, err
	}
	at, err := time.Parse(time.RFC3339Nano, last.IngestedAt)
	if err != nil {
		return b, fmt.Errorf("ingested_at: %w", err)
	}
	return blockHead{firstN: first.N, firstPrev: first.PrevHash, lastN: last.N, lastHash: last.Hash, at: at}, nil
}

// trimChain purges one chain's messages below the first one to keep and
// returns how many it removed.
func (s *Service) trimChain(ctx context.Context, st jetstream.Stream, c string, archived uint64, hot, protect time.Time) (uint64, error) {
	subj := subject.Ledger(c)
	last, err := st.GetLastMsgForSubject(ctx, subj)
	if err != nil {
		return 0, err
	}
	lh, err := readBlock(last.Data)
	if err != nil {
		return 0, fmt.Errorf("last block (seq %d): %w", last.Sequence, err)
	}
	if !lh.at.Before(protect) {
		return 0, nil // active: never trimmed
	}
	// Walk from the first hot message while messages may go.
	var first *blockHead
	var keep uint64 // the first sequence that stays
	var through blockHead
	count := uint64(0)
	for seq := uint64(1); ; {
		m, err := st.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subj))
		if err != nil {
			return 0, fmt.Errorf("read from seq %d: %w", seq, err)
		}
		h, err := readBlock(m.Data)
		if err != nil {
			return 0, fmt.Errorf("block %d: %w", m.Sequence, err)
		}
		if first == nil {
			first = &h
		}
		if m.Sequence >= last.Sequence || m.Sequence > archived || !h.at.Before(hot) {
			keep = m.Sequence
			break
		}
		through = h
		count++
		seq = m.Sequence + 1
	}
	if err := s.repairAnchor(ctx, c, first); err != nil {
		return 0, err
	}
	if count == 0 {
		s.compactAnchor(ctx, c, first)
		return 0, nil
	}
	an, rev, ok, err := s.anchors.Get(ctx, c)
	if err != nil {
		return 0, err
	}
	newStart := ledger.Start{N: through.lastN, Hash: through.lastHash}
	starts := []ledger.Start{newStart}
	if first.firstN > 1 {
		// The start in effect now, so readers keep verifying until the purge.
		starts = append(starts, ledger.Start{N: first.firstN - 1, Hash: first.firstPrev})
	}
	seg := ""
	if ok {
		seg = an.Segment
	}
	if err := s.anchors.Put(ctx,
		ledger.Anchor{Chain: c, Starts: starts, Segment: seg, At: time.Now().UTC().Format(archive.TimeFormat)}, rev); err != nil {
		return 0, err
	}
	if err := st.Purge(ctx, jetstream.WithPurgeSubject(subj), jetstream.WithPurgeSequence(keep)); err != nil {
		return 0, fmt.Errorf("purge below seq %d: %w", keep, err)
	}
	s.crash("trimmed")
	// Bookkeeping: the anchor keeps only the start now in effect.
	after := &blockHead{firstN: newStart.N + 1, firstPrev: newStart.Hash}
	s.compactAnchor(ctx, c, after)
	return count, nil
}

// compactAnchor drops anchor starts other than the one the chain's first
// hot entry uses (left over from a crash between an anchor update and its
// purge, or from the purge just done).
func (s *Service) compactAnchor(ctx context.Context, c string, first *blockHead) {
	if first == nil {
		return
	}
	an, rev, ok, err := s.anchors.Get(ctx, c)
	if err != nil || !ok || len(an.Starts) < 2 {
		return
	}
	for _, st := range an.Starts {
		if st.N == first.firstN-1 && st.Hash == first.firstPrev {
			an.Starts = []ledger.Start{st}
			if err := s.anchors.Put(ctx, an, rev); err != nil {
				s.set.Logger.WarnContext(ctx, "rotator: anchor bookkeeping failed; the next pass retries",
					slog.String("chain", c), slog.Any("err", err))
			}
			return
		}
	}
}

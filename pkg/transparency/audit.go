package transparency

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/mod/sumdb/tlog"
)

// ErrMismatch is wrapped by the problems Audit and Consistent find: the
// ledger, or a checkpoint, is not what another checkpoint committed to.
var ErrMismatch = errors.New("the ledger does not match a checkpoint")

// Consistent checks that older (a checkpoint someone else holds: a
// witness's, one kept from an earlier verification) and newer (the log's
// newest) are one history: newer extends older by a consistency proof from
// the tiles, which are themselves checked against newer. A smaller newer
// is a rollback; a proof that fails, a fork or a rewrite.
func Consistent(ctx context.Context, store TileStore, newer, older tlog.Tree) error {
	switch {
	case older.N > newer.N:
		return fmt.Errorf(
			"%w: the log's newest checkpoint covers %d messages, a checkpoint of %d exists: the log was rolled back or cut short",
			ErrMismatch, newer.N, older.N)
	case older.N == newer.N && older.Hash != newer.Hash:
		return fmt.Errorf("%w: two checkpoints of %d messages with different roots (%s, %s): a fork", ErrMismatch, older.N,
			older.Hash, newer.Hash)
	case older.N == 0 || older.N == newer.N:
		return nil
	}
	p, err := ProveTree(ctx, store, newer, older.N)
	if err != nil {
		return fmt.Errorf("%w: no consistency proof from %d to %d: %w", ErrMismatch, older.N, newer.N, err)
	}
	if err := tlog.CheckTree(p, newer.N, newer.Hash, older.N, older.Hash); err != nil {
		return fmt.Errorf("%w: the checkpoint of %d is not an extension of the one of %d (a fork, or history rewritten): %w",
			ErrMismatch, newer.N, older.N, err)
	}
	return nil
}

// AuditReport is what Audit checked.
type AuditReport struct {
	First, Last int64 // the stream's first and last sequence
	Checked     int64 // messages compared with their leaf
	// Absent are messages the checkpoint covers that the stream no longer
	// holds: the rotator's trims (behind a verified archive; the chains'
	// anchors and archive verify account for them).
	Absent int64
}

// Audit compares the messages of streamName (LEDGER, or a copy of it)
// with the leaves of tree: a stream shorter than the tree was cut short;
// a message whose hash is not its leaf was changed after it was logged.
// Messages the rotator trimmed are not in the stream and are counted as
// absent (the chains' anchors and the archive's own checks cover them). It
// returns the first problem, wrapping ErrMismatch.
func Audit(ctx context.Context, js jetstream.JetStream, streamName string, store TileStore, tree tlog.Tree) (AuditReport, error) {
	var rep AuditReport
	st, err := js.Stream(ctx, streamName)
	if err != nil {
		return rep, fmt.Errorf("audit %s: %w", streamName, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return rep, fmt.Errorf("audit %s: %w", streamName, err)
	}
	rep.First, rep.Last = int64(info.State.FirstSeq), int64(info.State.LastSeq)
	if rep.Last < tree.N {
		return rep, fmt.Errorf("%w: %s ends at message %d, the checkpoint covers %d: cut short or rolled back", ErrMismatch, streamName,
			rep.Last, tree.N)
	}
	end := tree.N
	if info.State.Msgs == 0 || end < rep.First {
		rep.Absent = end
		return rep, nil
	}
	cons, err := js.OrderedConsumer(ctx, streamName, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: uint64(rep.First)})
	if err != nil {
		return rep, fmt.Errorf("audit %s: %w", streamName, err)
	}
	lc := NewLeafChecker(ctx, store, tree)
	prev := int64(0)
	for past := false; prev < end && !past; {
		batch, err := cons.Fetch(4096, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			return rep, fmt.Errorf("audit %s: %w", streamName, err)
		}
		got := 0
		for m := range batch.Messages() {
			got++
			md, err := m.Metadata()
			if err != nil {
				return rep, fmt.Errorf("audit %s: %w", streamName, err)
			}
			seq := int64(md.Sequence.Stream)
			if seq > end {
				past = true // newer than the checkpoint
				continue
			}
			if seq <= prev {
				continue
			}
			if err := lc.Check(seq, LeafHash(m.Data())); err != nil {
				return rep, fmt.Errorf("%s: %w", streamName, err)
			}
			rep.Checked++
			rep.Absent += seq - prev - 1
			prev = seq
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
			return rep, fmt.Errorf("audit %s: %w", streamName, err)
		}
		if got == 0 {
			break
		}
	}
	rep.Absent += end - prev
	return rep, nil
}

// LeafChecker compares messages with the leaves of a tree, message i+1
// with leaf i, reading one verified tile per 256 consecutive messages.
type LeafChecker struct {
	leaves    tlog.HashReader
	tree      tlog.Tree
	tileFirst int64
	want      []tlog.Hash
}

// NewLeafChecker checks against tree, whose tiles are in store.
func NewLeafChecker(ctx context.Context, store TileStore, tree tlog.Tree) *LeafChecker {
	return &LeafChecker{leaves: Verified(ctx, store, tree), tree: tree, tileFirst: -1}
}

// Check compares the leaf hash of message seq (LeafHash of its bytes as
// stored) with the tree's leaf seq-1. A message the tree does not cover
// (seq beyond its size) is not an error: the tree is older than it. A
// mismatch wraps ErrMismatch and says "message <seq> differs ...", for the
// caller to prefix with where the message came from.
func (c *LeafChecker) Check(seq int64, leafHash tlog.Hash) error {
	if seq < 1 {
		return fmt.Errorf("%w: message sequence %d: sequences start at 1", ErrMismatch, seq)
	}
	if seq > c.tree.N {
		return nil
	}
	leaf := seq - 1
	if first := leaf &^ (1<<TileHeight - 1); first != c.tileFirst {
		idx := make([]int64, 0, 1<<TileHeight)
		for l := first; l < min(first+1<<TileHeight, c.tree.N); l++ {
			idx = append(idx, tlog.StoredHashIndex(0, l))
		}
		want, err := c.leaves.ReadHashes(idx)
		if err != nil {
			c.tileFirst = -1
			return fmt.Errorf("%w: the tiles of messages %d..%d do not match the checkpoint: %w", ErrMismatch, first+1,
				first+int64(len(idx)), err)
		}
		c.tileFirst, c.want = first, want
	}
	if leafHash != c.want[leaf-c.tileFirst] {
		return fmt.Errorf("%w: message %d differs from leaf %d of the checkpoint of %d: changed after it was logged",
			ErrMismatch, seq, leaf, c.tree.N)
	}
	return nil
}

package transparency

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/claimcheck/claimcheck/pkg/clock"
	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/stream"
)

// Keys of the tlog bucket.
const (
	keyOrigin     = "origin"
	keyCheckpoint = "checkpoint"
	tilePrefix    = "tile."
)

// ErrNoCheckpoint is returned by Latest before the first checkpoint.
var ErrNoCheckpoint = errors.New("no checkpoint yet")

// ArchiveKey is the archive object holding the largest checkpoint of the
// tree the rotator has archived: a second place, beside witnesses, that a
// store rolled back to an older copy cannot take along.
const ArchiveKey = "tlog/checkpoint"

// Tiles is the tile store of the tlog bucket.
func Tiles(kv jetstream.KeyValue) TileStore { return prefixed{KVTiles{KV: kv}} }

// prefixed keeps tiles under "tile." beside the bucket's other keys.
type prefixed struct{ kv KVTiles }

func (p prefixed) ReadTiles(ctx context.Context, tiles []tlog.Tile) ([][]byte, error) {
	return p.kv.readTiles(ctx, tiles, tilePrefix)
}

func (p prefixed) SaveTiles(ctx context.Context, tiles []tlog.Tile, data [][]byte) error {
	return p.kv.saveTiles(ctx, tiles, data, tilePrefix)
}

// OpenBucket returns the tlog bucket.
func OpenBucket(ctx context.Context, js jetstream.JetStream) (jetstream.KeyValue, error) {
	kv, err := js.KeyValue(ctx, stream.BucketTlog)
	if err != nil {
		return nil, fmt.Errorf("tlog bucket: %w", err)
	}
	return kv, nil
}

// Origin returns the log's origin line, creating it on first use: a name
// unique to this deployment (claimcheck.ledger/<ULID>), kept for ever,
// since witnesses and clients know the log by it.
func Origin(ctx context.Context, kv jetstream.KeyValue) (string, error) {
	e, err := kv.Get(ctx, keyOrigin)
	if err == nil {
		o := string(e.Value())
		if !validOrigin(o) {
			return "", fmt.Errorf("tlog origin %q: not a valid origin line", o)
		}
		return o, nil
	}
	if !errors.Is(err, jetstream.ErrKeyNotFound) {
		return "", fmt.Errorf("tlog origin: %w", err)
	}
	u, err := id.NewGenerator(clock.Real{}, rand.Reader).New()
	if err != nil {
		return "", fmt.Errorf("tlog origin: %w", err)
	}
	o := "claimcheck.ledger/" + strings.ToLower(u)
	if _, err := kv.Create(ctx, keyOrigin, []byte(o)); err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
		return "", fmt.Errorf("tlog origin: %w", err)
	}
	e, err = kv.Get(ctx, keyOrigin) // another process may have created it first
	if err != nil {
		return "", fmt.Errorf("tlog origin: %w", err)
	}
	return string(e.Value()), nil
}

// ReadOrigin returns the log's origin line without making one:
// ErrNoCheckpoint when the log never ran.
func ReadOrigin(ctx context.Context, kv jetstream.KeyValue) (string, error) {
	e, err := kv.Get(ctx, keyOrigin)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return "", ErrNoCheckpoint
	}
	if err != nil {
		return "", fmt.Errorf("tlog origin: %w", err)
	}
	if o := string(e.Value()); validOrigin(o) {
		return o, nil
	}
	return "", fmt.Errorf("tlog origin %q: not a valid origin line", e.Value())
}

// Latest returns the newest checkpoint as stored (a signed note) and its
// bucket revision; ErrNoCheckpoint before the first.
func Latest(ctx context.Context, kv jetstream.KeyValue) ([]byte, uint64, error) {
	e, err := kv.Get(ctx, keyCheckpoint)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, 0, ErrNoCheckpoint
	}
	if err != nil {
		return nil, 0, fmt.Errorf("newest checkpoint: %w", err)
	}
	return e.Value(), e.Revision(), nil
}

// Log follows LEDGER in stream order, appends each entry's hash to the
// tree and issues a signed checkpoint: Run does so every Every entries, or
// after Interval when entries are waiting; CatchUp does so at once (the
// rotator calls it before it trims, so that nothing leaves the hot ledger
// before a checkpoint covers it). One Log runs per deployment (the
// rotator's); a second is refused by the checkpoint's compare-and-set.
type Log struct {
	JS       jetstream.JetStream
	KV       jetstream.KeyValue // the tlog bucket
	Every    int
	Interval time.Duration
	// Signers returns the note signers of the keys in force now.
	Signers func(ctx context.Context, origin string) ([]note.Signer, error)
	// Witnesses are asked to cosign every checkpoint before it is stored.
	Witnesses []*WitnessClient
	// Issued, when set, sees every checkpoint issued; WitnessFailed every
	// witness that did not cosign one.
	Issued        func(signed []byte, tree tlog.Tree)
	WitnessFailed func(w *WitnessClient, err error)
	Logger        *slog.Logger

	mu     sync.Mutex
	origin string
	tree   *Tree
	root   tlog.Hash
	rev    uint64
	cons   jetstream.Consumer // follows LEDGER; it has delivered up to consAt
	consAt int64
}

// maxAppend bounds the leaves appended at once (an append holds two hashes
// a leaf in memory until its tiles are saved).
const maxAppend = 1 << 16

// Run catches up every Every entries, or after Interval when entries are
// waiting, until ctx ends.
func (l *Log) Run(ctx context.Context) error {
	if _, err := l.CatchUp(ctx); err != nil {
		if ctx.Err() != nil {
			return nil // stopped
		}
		return err
	}
	st, err := l.JS.Stream(ctx, stream.Ledger)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("tlog: %w", err)
	}
	tick := time.NewTicker(min(l.Interval, 200*time.Millisecond))
	defer tick.Stop()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		info, err := st.Info(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			l.Logger.WarnContext(ctx, "tlog: ledger state", slog.Any("error", err))
			continue
		}
		l.mu.Lock()
		// No tree: a catch-up that failed (here or in the rotator's
		// pass) dropped it; the next one reopens it from the store.
		waiting := int64(info.State.LastSeq)
		if l.tree != nil {
			waiting -= l.tree.Size()
		}
		l.mu.Unlock()
		if waiting <= 0 || waiting < int64(l.Every) && time.Since(last) < l.Interval {
			continue
		}
		if _, err := l.CatchUp(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		last = time.Now()
	}
}

// CatchUp logs every LEDGER entry there is and issues a checkpoint of
// them; it returns the tree the newest checkpoint covers.
func (l *Log) CatchUp(ctx context.Context) (tlog.Tree, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.open(ctx); err != nil {
		return tlog.Tree{}, err
	}
	st, err := l.JS.Stream(ctx, stream.Ledger)
	if err != nil {
		return tlog.Tree{}, fmt.Errorf("tlog: %w", err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return tlog.Tree{}, fmt.Errorf("tlog: %w", err)
	}
	target := int64(info.State.LastSeq)
	if target <= l.tree.Size() {
		return tlog.Tree{N: l.tree.Size(), Hash: l.root}, nil
	}
	// One ordered consumer follows the ledger from one catch-up to the
	// next; a new one starts where the tree ends after a failure.
	if l.cons == nil || l.consAt != l.tree.Size() {
		if l.cons, err = l.JS.OrderedConsumer(ctx, stream.Ledger, jetstream.OrderedConsumerConfig{
			DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: uint64(l.tree.Size()) + 1}); err != nil {
			return tlog.Tree{}, fmt.Errorf("tlog: follow %s from %d: %w", stream.Ledger, l.tree.Size()+1, err)
		}
		l.consAt = l.tree.Size()
	}
	for l.tree.Size() < target {
		leaves, err := l.read(l.cons, min(maxAppend, target-l.tree.Size()))
		if err != nil {
			l.cons = nil
			return tlog.Tree{}, err
		}
		l.consAt += int64(len(leaves))
		if l.root, err = l.tree.Append(ctx, leaves); err != nil {
			l.cons = nil
			return tlog.Tree{}, fmt.Errorf("tlog: %w", err)
		}
	}
	return l.issue(ctx)
}

// read returns the next n leaves of cons, which delivers the messages
// after the tree's.
func (l *Log) read(cons jetstream.Consumer, n int64) ([]tlog.Hash, error) {
	leaves := make([]tlog.Hash, 0, n)
	for int64(len(leaves)) < n {
		batch, err := cons.Fetch(int(min(n-int64(len(leaves)), 4096)), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return nil, fmt.Errorf("tlog: read %s: %w", stream.Ledger, err)
		}
		got := 0
		for m := range batch.Messages() {
			got++
			md, err := m.Metadata()
			if err != nil {
				return nil, fmt.Errorf("tlog: %w", err)
			}
			want := uint64(l.tree.Size()) + uint64(len(leaves)) + 1
			if md.Sequence.Stream != want {
				return nil, fmt.Errorf("tlog: %s message %d follows %d: the entries between are gone before they were logged",
					stream.Ledger, md.Sequence.Stream, want-1)
			}
			leaves = append(leaves, LeafHash(m.Data()))
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
			return nil, fmt.Errorf("tlog: read %s: %w", stream.Ledger, err)
		}
		if got == 0 {
			return nil, fmt.Errorf("tlog: %s delivered nothing after message %d, though it holds more",
				stream.Ledger, l.tree.Size()+int64(len(leaves)))
		}
	}
	return leaves, nil
}

// open reads the log's origin and newest checkpoint, once, and checks
// that the tiles hold the checkpoint's tree.
func (l *Log) open(ctx context.Context) error {
	if l.tree != nil {
		return nil
	}
	origin, err := Origin(ctx, l.KV)
	if err != nil {
		return err
	}
	signed, rev, err := Latest(ctx, l.KV)
	if errors.Is(err, ErrNoCheckpoint) {
		l.origin, l.tree = origin, OpenTree(Tiles(l.KV), 0)
		l.root, _ = l.tree.Root(ctx)
		return nil
	}
	if err != nil {
		return fmt.Errorf("tlog: %w", err)
	}
	cp, err := ParseUnverified(signed, origin)
	if err != nil {
		return fmt.Errorf("tlog: stored checkpoint: %w", err)
	}
	tree := OpenTree(Tiles(l.KV), cp.Tree.N)
	root, err := tree.Root(ctx)
	if err != nil {
		return fmt.Errorf("tlog: the tiles of the stored checkpoint (%d leaves): %w", cp.Tree.N, err)
	}
	if root != cp.Tree.Hash {
		return fmt.Errorf("tlog: the tiles hash to %s, the stored checkpoint of %d leaves says %s", root, cp.Tree.N, cp.Tree.Hash)
	}
	l.origin, l.tree, l.root, l.rev = origin, tree, root, rev
	return nil
}

// issue signs the checkpoint of the tree and stores it in place of the
// previous one.
func (l *Log) issue(ctx context.Context) (tlog.Tree, error) {
	tree := tlog.Tree{N: l.tree.Size(), Hash: l.root}
	// After any failure the tree in memory is ahead of the stored
	// checkpoint: it is dropped, and the next catch-up starts over from the
	// store (else no checkpoint would be issued until more entries came).
	signers, err := l.Signers(ctx, l.origin)
	if err != nil {
		l.tree, l.cons = nil, nil
		return tlog.Tree{}, fmt.Errorf("tlog: signing keys: %w", err)
	}
	signed, err := Sign(Body(l.origin, tree), signers...)
	if err != nil {
		l.tree, l.cons = nil, nil
		return tlog.Tree{}, fmt.Errorf("tlog: %w", err)
	}
	if signed, err = l.cosign(ctx, signed, tree); err != nil {
		l.tree, l.cons = nil, nil
		return tlog.Tree{}, err
	}
	var next uint64
	if l.rev == 0 {
		next, err = l.KV.Create(ctx, keyCheckpoint, signed)
	} else {
		next, err = l.KV.Update(ctx, keyCheckpoint, signed, l.rev)
	}
	if err != nil {
		// The tree in memory is ahead of the stored checkpoint: start over
		// from the store next time.
		l.tree, l.cons = nil, nil
		return tlog.Tree{}, fmt.Errorf("tlog: store the checkpoint of %d leaves (another log writing?): %w", tree.N, err)
	}
	l.rev = next
	if l.Issued != nil {
		l.Issued(signed, tree)
	}
	return tree, nil
}

// cosign asks every witness to cosign and appends their cosignatures. A
// witness that fails is reported and skipped; one that holds a larger tree
// stops the log (ErrRolledBack).
func (l *Log) cosign(ctx context.Context, signed []byte, tree tlog.Tree) ([]byte, error) {
	out := signed
	prove := func(old int64) (tlog.TreeProof, error) { return ProveTree(ctx, Tiles(l.KV), tree, old) }
	for _, w := range l.Witnesses {
		sigs, err := w.Cosign(ctx, signed, tree, prove)
		if errors.Is(err, ErrRolledBack) {
			return nil, fmt.Errorf("tlog: %w", err)
		}
		if err != nil {
			if l.WitnessFailed != nil {
				l.WitnessFailed(w, err)
			}
			l.Logger.WarnContext(ctx, "tlog: a witness did not cosign", slog.String("witness", w.URL), slog.Int64("size", tree.N),
				slog.Any("error", err))
			continue
		}
		out = append(out, sigs...)
	}
	return out, nil
}

// ParseUnverified reads a checkpoint's text without checking signatures:
// for the log's own stored state, never for evidence.
func ParseUnverified(signed []byte, origin string) (*Checkpoint, error) {
	text, _, ok := strings.Cut(string(signed), "\n\n")
	if !ok {
		return nil, errors.New("not a signed note")
	}
	n := &note.Note{Text: text + "\n"}
	return parseText(n.Text, origin, signed)
}

package transparency

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/rfc6962"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/keyring/keyringtest"
	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
)

// logEnv is a JetStream server with claimcheck's streams, a registry key
// and the tlog bucket.
type logEnv struct {
	js     jetstream.JetStream
	kv     jetstream.KeyValue
	signer func(context.Context, string) ([]note.Signer, error)
	keys   func(origin string) []note.Verifier
	key    keyringtest.Key
	next   int64 // entries appended so far
	msgs   [][]byte
}

func newLogEnv(t *testing.T) *logEnv {
	t.Helper()
	_, _, k := logKey(t, keyring.ECDSA)
	return newLogEnvWith(t, k)
}

// newLogEnvWith is a logEnv whose log signs with k.
func newLogEnvWith(t *testing.T, k keyringtest.Key) *logEnv {
	t.Helper()
	srv := natstest.RunServer(t)
	_, js := natstest.Connect(t, srv.ClientURL())
	natstest.Bootstrap(t, js, nil)
	kv, err := OpenBucket(t.Context(), js)
	if err != nil {
		t.Fatal(err)
	}
	return &logEnv{js: js, kv: kv, key: k,
		signer: func(_ context.Context, origin string) ([]note.Signer, error) {
			s, err := NoteSigner(origin, k.Key, k.Raw)
			return []note.Signer{s}, err
		},
		keys: func(origin string) []note.Verifier {
			vs, err := LogVerifiers(origin, k.Keys())
			if err != nil {
				t.Fatal(err)
			}
			return vs
		}}
}

// append publishes n entries to LEDGER, spread over three chains.
func (e *logEnv) append(t *testing.T, n int) {
	t.Helper()
	for range n {
		h := entryHash(e.next)
		data := fmt.Sprintf(`{"n":%d,"hash":"sha256:%s","payload":{"x":"y"}}`, e.next, hex.EncodeToString(h))
		if _, err := e.js.Publish(t.Context(), subject.Ledger(fmt.Sprintf("s%d", e.next%3)), []byte(data)); err != nil {
			t.Fatal(err)
		}
		e.msgs = append(e.msgs, []byte(data))
		e.next++
	}
}

// running is a Log started by run.
type running struct {
	stop func() error    // stops it and returns what Run returned
	done <-chan struct{} // closed when Run returned
	err  func() error    // what Run returned, once done
}

// run starts a Log.
func (e *logEnv) run(t *testing.T, every int) running {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	l := &Log{JS: e.js, KV: e.kv, Every: every, Interval: 50 * time.Millisecond, Signers: e.signer, Logger: slog.New(slog.DiscardHandler)}
	var err error
	done := make(chan struct{})
	go func() { err = l.Run(ctx); close(done) }()
	r := running{done: done, err: func() error { <-done; return err }}
	r.stop = func() error { cancel(); return r.err() }
	t.Cleanup(func() { _ = r.stop() })
	return r
}

// failed waits until r's Run returned an error naming want.
func failed(t *testing.T, r running, want ...string) {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		t.Fatalf("Run still runs, want an error naming %q", want)
	}
	err := r.err()
	for _, w := range want {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Fatalf("Run: %v, want an error naming %q", err, w)
		}
	}
}

// checkpoint waits until the newest checkpoint covers n entries and
// returns it, verified.
func (e *logEnv) checkpoint(t *testing.T, n int64) *Checkpoint {
	t.Helper()
	origin, err := Origin(t.Context(), e.kv)
	if err != nil {
		t.Fatal(err)
	}
	var cp *Checkpoint
	natstest.Eventually(t, 10*time.Second, func() error {
		signed, _, err := Latest(t.Context(), e.kv)
		if err != nil {
			return err
		}
		if cp, err = Open(signed, origin, e.keys(origin), nil); err != nil {
			return err
		}
		if cp.Tree.N != n {
			return fmt.Errorf("checkpoint of %d entries, want %d", cp.Tree.N, n)
		}
		return nil
	})
	return cp
}

// TestLogIssuesCheckpoints: the Log follows LEDGER, every checkpoint is
// signed by the registry's key over the reference root of the entries'
// hashes, in stream order; restarted, it goes on from its checkpoint; a
// second Log beside it is refused.
func TestLogIssuesCheckpoints(t *testing.T) {
	e := newLogEnv(t)
	e.append(t, 37)
	first := e.run(t, 10)
	cp := e.checkpoint(t, 37)
	if want := messagesRoot(t, e.msgs[:37]); string(cp.Tree.Hash[:]) != string(want) {
		t.Fatalf("root %x, want the reference %x", cp.Tree.Hash, want)
	}
	e.append(t, 300)
	cp = e.checkpoint(t, 337)
	if err := first.stop(); err != nil {
		t.Fatalf("Log.Run: %v", err)
	}
	e.append(t, 5)
	again := e.run(t, 1000)
	cp2 := e.checkpoint(t, 342)
	if want := messagesRoot(t, e.msgs[:342]); string(cp2.Tree.Hash[:]) != string(want) {
		t.Fatalf("after a restart: root %x, want %x", cp2.Tree.Hash, want)
	}
	p, err := ProveTree(t.Context(), Tiles(e.kv), cp2.Tree, cp.Tree.N)
	if err != nil {
		t.Fatal(err)
	}
	if err := tlog.CheckTree(p, cp2.Tree.N, cp2.Tree.Hash, cp.Tree.N, cp.Tree.Hash); err != nil {
		t.Fatalf("the restarted log is not an extension of the first: %v", err)
	}
	// A second log beside it: whichever stores a checkpoint second is
	// refused.
	second := e.run(t, 1)
	e.append(t, 3)
	select {
	case <-again.done:
		failed(t, again, "another log")
	case <-second.done:
		failed(t, second, "another log")
	case <-time.After(10 * time.Second):
		t.Fatal("two logs ran side by side")
	}
}

// TestLogRefusesGaps: messages gone from LEDGER before they were logged
// stop the log with an error naming them.
func TestLogRefusesGaps(t *testing.T) {
	t.Run("gap", func(t *testing.T) {
		e := newLogEnv(t)
		e.append(t, 5)
		s, err := e.js.Stream(t.Context(), stream.Ledger)
		if err != nil {
			t.Fatal(err)
		}
		// Purging a chain (as the rotator's trim does) is how entries
		// leave the ledger: s0 held messages 1 and 4.
		if err := s.Purge(t.Context(), jetstream.WithPurgeSubject(subject.Ledger("s0"))); err != nil {
			t.Fatal(err)
		}
		failed(t, e.run(t, 100), "message 2 follows 0", "gone before they were logged")
	})
}

// messagesRoot is the reference root (transparency-dev/merkle) of the
// stored messages.
func messagesRoot(t *testing.T, msgs [][]byte) []byte {
	t.Helper()
	f := compact.RangeFactory{Hash: rfc6962.DefaultHasher.HashChildren}
	r := f.NewEmptyRange(0)
	for _, m := range msgs {
		if err := r.Append(rfc6962.DefaultHasher.HashLeaf(m), nil); err != nil {
			t.Fatal(err)
		}
	}
	root, err := r.GetRootHash(nil)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestLogIsCosignedAndCatchesARollback: with a witness, every checkpoint
// is stored with the witness's cosignature (the first from size 0, the
// next with a consistency proof); a copy of the store rolled back to fewer
// entries, under the same origin and key, is caught by the witness
// (ErrRolledBack) before it can issue anything.
func TestLogIsCosignedAndCatchesARollback(t *testing.T) {
	e := newLogEnv(t)
	origin, err := Origin(t.Context(), e.kv)
	if err != nil {
		t.Fatal(err)
	}
	vkey, err := VerifierKey(origin, e.key.Key)
	if err != nil {
		t.Fatal(err)
	}
	w, err := OpenWitness(t.TempDir(), "witness.test/w1", map[string][]string{origin: {vkey}}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(w.Handler())
	t.Cleanup(srv.Close)
	client := func() *WitnessClient {
		c, err := NewWitnessClient(srv.URL, w.VerifierKey())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	wv := client().Verifier
	l := &Log{JS: e.js, KV: e.kv, Every: 10, Interval: time.Second, Signers: e.signer, Logger: slog.New(slog.DiscardHandler),
		Witnesses: []*WitnessClient{client()}}
	for _, n := range []int{50, 20} {
		e.append(t, n)
		tree, err := l.CatchUp(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		signed, _, err := Latest(t.Context(), e.kv)
		if err != nil {
			t.Fatal(err)
		}
		cp, err := Open(signed, origin, e.keys(origin), []note.Verifier{wv})
		if err != nil || cp.Tree != tree || len(cp.Witnesses) != 1 {
			t.Fatalf("checkpoint of %d: %+v, %v; want it cosigned by the witness", tree.N, cp, err)
		}
		if st, err := w.Latest(origin); err != nil || st.Size != tree.N {
			t.Fatalf("the witness holds %+v, %v; want size %d", st, err, tree.N)
		}
	}
	// The rolled-back copy: same origin and key, 30 entries.
	old := newLogEnvWith(t, e.key)
	if _, err := old.kv.Put(t.Context(), keyOrigin, []byte(origin)); err != nil {
		t.Fatal(err)
	}
	old.append(t, 30)
	l2 := &Log{JS: old.js, KV: old.kv, Every: 10, Interval: time.Second, Signers: old.signer, Logger: slog.New(slog.DiscardHandler),
		Witnesses: []*WitnessClient{client()}}
	if _, err := l2.CatchUp(t.Context()); !errors.Is(err, ErrRolledBack) || !strings.Contains(err.Error(), "cosigned 70 leaves") {
		t.Fatalf("rolled-back log: %v, want ErrRolledBack naming the witness's 70 leaves", err)
	}
	if _, _, err := Latest(t.Context(), old.kv); !errors.Is(err, ErrNoCheckpoint) {
		t.Fatalf("the rolled-back log stored a checkpoint: %v", err)
	}
}

// copyStream makes a stream COPY holding msgs (a copy of LEDGER, say as a
// backup restored it), message i+1 being msgs[i].
func (e *logEnv) copyStream(t *testing.T, msgs [][]byte) {
	t.Helper()
	_ = e.js.DeleteStream(t.Context(), "COPY")
	if _, err := e.js.CreateStream(t.Context(), jetstream.StreamConfig{Name: "COPY", Subjects: []string{"copy.>"}}); err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if _, err := e.js.Publish(t.Context(), "copy.s", m); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAuditFindsWhatTheCheckpointDoesNotCover: the ledger as logged
// audits clean; a copy cut short, or with one message changed, is named
// with the first bad message; Consistent names a rollback, a fork and a
// rewritten history.
func TestAuditFindsWhatTheCheckpointDoesNotCover(t *testing.T) {
	e := newLogEnv(t)
	e.append(t, 600)
	l := &Log{JS: e.js, KV: e.kv, Every: 10, Interval: time.Second, Signers: e.signer, Logger: slog.New(slog.DiscardHandler)}
	tree, err := l.CatchUp(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	tiles := Tiles(e.kv)
	rep, err := Audit(t.Context(), e.js, stream.Ledger, tiles, tree)
	if err != nil || rep.Checked != 600 {
		t.Fatalf("LEDGER as logged: %+v, %v", rep, err)
	}
	// The rotator's trims purge whole chains' old messages: absent, not
	// a mismatch (the chains' anchors and the archive account for them).
	ls, err := e.js.Stream(t.Context(), stream.Ledger)
	if err != nil {
		t.Fatal(err)
	}
	if err := ls.Purge(t.Context(), jetstream.WithPurgeSubject(subject.Ledger("s0")), jetstream.WithPurgeSequence(500)); err != nil {
		t.Fatal(err)
	}
	if rep, err := Audit(t.Context(), e.js, stream.Ledger, tiles, tree); err != nil || rep.Checked+rep.Absent != 600 || rep.Absent == 0 {
		t.Fatalf("LEDGER trimmed: %+v, %v", rep, err)
	}
	e.copyStream(t, e.msgs[:450])
	if _, err := Audit(t.Context(), e.js, "COPY", tiles, tree); !errors.Is(err, ErrMismatch) ||
		!strings.Contains(err.Error(), "ends at message 450, the checkpoint covers 600") {
		t.Errorf("cut short: %v", err)
	}
	changed := append([][]byte(nil), e.msgs...)
	changed[299] = []byte(strings.Replace(string(changed[299]), `"x":"y"`, `"x":"z"`, 1))
	e.copyStream(t, changed)
	if _, err := Audit(t.Context(), e.js, "COPY", tiles, tree); !errors.Is(err, ErrMismatch) ||
		!strings.Contains(err.Error(), "message 300 differs from leaf 299") {
		t.Errorf("changed: %v", err)
	}

	// Messages read elsewhere (the archive) are checked one by one: as
	// logged they match, changed or renumbered they are named; messages
	// the checkpoint does not cover are not judged.
	lc := NewLeafChecker(t.Context(), tiles, tree)
	for i, m := range e.msgs[:600] {
		if err := lc.Check(int64(i+1), LeafHash(m)); err != nil {
			t.Fatalf("archived message %d as logged: %v", i+1, err)
		}
	}
	if err := lc.Check(300, LeafHash(changed[299])); !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "message 300 differs from leaf 299") {
		t.Errorf("archived message changed: %v", err)
	}
	if err := lc.Check(12, LeafHash(e.msgs[10])); !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "message 12 differs") {
		t.Errorf("archived message renumbered: %v", err)
	}
	if err := lc.Check(601, LeafHash([]byte("not logged yet"))); err != nil {
		t.Errorf("a message after the checkpoint: %v", err)
	}
	if err := lc.Check(0, LeafHash(e.msgs[0])); !errors.Is(err, ErrMismatch) {
		t.Errorf("sequence 0: %v", err)
	}

	// Consistent: an earlier checkpoint of the same log extends; a bigger
	// one is a rollback; another history is a fork or a rewrite.
	early := OpenTree(&MemTiles{}, 0)
	earlyRoot, err := early.Append(t.Context(), leafHashes(e.msgs[:256]))
	if err != nil {
		t.Fatal(err)
	}
	if err := Consistent(t.Context(), tiles, tree, tlog.Tree{N: 256, Hash: earlyRoot}); err != nil {
		t.Errorf("an earlier checkpoint of the same log: %v", err)
	}
	if err := Consistent(t.Context(), tiles, tlog.Tree{N: 256, Hash: earlyRoot}, tree); !errors.Is(err, ErrMismatch) ||
		!strings.Contains(err.Error(), "rolled back") {
		t.Errorf("rollback: %v", err)
	}
	rewritten := OpenTree(&MemTiles{}, 0)
	rwRoot, err := rewritten.Append(t.Context(), leafHashes(changed[:400]))
	if err != nil {
		t.Fatal(err)
	}
	if err := Consistent(t.Context(), tiles, tree, tlog.Tree{N: 400, Hash: rwRoot}); !errors.Is(err, ErrMismatch) ||
		!strings.Contains(err.Error(), "not an extension") {
		t.Errorf("rewritten history: %v", err)
	}
	forkRoot, err := rewritten.Append(t.Context(), leafHashes(changed[400:600]))
	if err != nil {
		t.Fatal(err)
	}
	if err := Consistent(t.Context(), tiles, tree, tlog.Tree{N: 600, Hash: forkRoot}); !errors.Is(err, ErrMismatch) ||
		!strings.Contains(err.Error(), "fork") {
		t.Errorf("fork: %v", err)
	}
}

func leafHashes(msgs [][]byte) []tlog.Hash {
	out := make([]tlog.Hash, len(msgs))
	for i, m := range msgs {
		out[i] = LeafHash(m)
	}
	return out
}

// TestKVTilesKeepEveryTile: four tiles to a bucket value, appended in
// batches of any size, the bucket holds what the memory store holds, tile
// by tile, and trees reopened from it go on the same way.
func TestKVTilesKeepEveryTile(t *testing.T) {
	e := newLogEnv(t)
	kvStore, mem := Tiles(e.kv), &MemTiles{}
	rng := rand.New(rand.NewPCG(3, 4))
	kvTree, memTree := OpenTree(kvStore, 0), OpenTree(mem, 0)
	for _, n := range []int64{1, 255, 256, 257, 1023, 1024, 1025, 3000, 70000} {
		size := func() int64 { return 1 + rng.Int64N(900) }
		a, b := grow(t, kvTree, n, size), grow(t, memTree, n, size)
		if a != b {
			t.Fatalf("roots of %d differ", n)
		}
		kvTree = OpenTree(kvStore, n)
		for _, tile := range tlog.NewTiles(TileHeight, 0, n) {
			got, err := kvStore.ReadTiles(t.Context(), []tlog.Tile{tile})
			if err != nil {
				t.Fatalf("tile %s of %d: %v", tile.Path(), n, err)
			}
			want, err := mem.ReadTiles(t.Context(), []tlog.Tile{tile})
			if err != nil || !bytes.Equal(got[0], want[0]) {
				t.Fatalf("tile %s of %d differs (%v)", tile.Path(), n, err)
			}
		}
	}
}

// TestRunGoesOnAfterAFailedCatchUpBesideIt: the rotator's pass catches up
// beside Run; a catch-up that fails there (no signing key for a moment)
// drops the tree in memory, and Run, on its next tick, reopens it from the
// store and goes on (it dereferenced the missing tree and crashed the
// rotator in the torture test).
func TestRunGoesOnAfterAFailedCatchUpBesideIt(t *testing.T) {
	e := newLogEnv(t)
	e.append(t, 5)
	var fail atomic.Bool
	signers := func(ctx context.Context, origin string) ([]note.Signer, error) {
		if fail.Load() {
			return nil, errors.New("no active key at this moment")
		}
		return e.signer(ctx, origin)
	}
	l := &Log{JS: e.js, KV: e.kv, Every: 1, Interval: 50 * time.Millisecond, Signers: signers, Logger: slog.New(slog.DiscardHandler)}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	e.checkpoint(t, 5)
	fail.Store(true)
	e.append(t, 3)
	if _, err := l.CatchUp(t.Context()); err == nil { // the pass's catch-up, beside Run
		t.Fatal("a catch-up without a signing key succeeded")
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "no active key") {
			t.Fatalf("Run after the failed catch-up beside it: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run neither caught up nor failed")
	}
	fail.Store(false)
	go func() { done <- l.Run(ctx) }() // the rotator starts it again an interval later
	e.checkpoint(t, 8)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

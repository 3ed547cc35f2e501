package transparency

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/subject"
)

// BenchmarkProveRecord: an inclusion proof of a random leaf of a tree of
// 100,000 leaves, its tiles in the tlog bucket of a real JetStream server
// (each tile read is a KV get, checked against the checkpoint's root). It
// reports the p99 of the proofs beside the mean: the target is ≤ 1 ms. The
// tiles are read through Cached, as a serving process reads them.
func BenchmarkProveRecord(b *testing.B) {
	srv := natstest.RunServer(b)
	_, js := natstest.Connect(b, srv.ClientURL())
	natstest.Bootstrap(b, js, nil)
	kv, err := OpenBucket(b.Context(), js)
	if err != nil {
		b.Fatal(err)
	}
	tr := OpenTree(Tiles(kv), 0)
	root := grow(b, tr, 100_000, func() int64 { return 10_000 })
	// A serving process keeps the tiles it read (Cached) and proves with a
	// Prover per checkpoint; the first proofs read the tiles from the bucket.
	store := Cached(Tiles(kv), 4096)
	tree := tlog.Tree{N: 100_000, Hash: root}
	p := NewProver(b.Context(), store, tree)
	var lat []time.Duration
	i := int64(0)
	for b.Loop() {
		start := time.Now()
		if _, err := p.ProveRecord((i * 7919) % tree.N); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		i++
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkCheckpointIssuance: appending 1,000 leaves (a checkpoint's
// worth at the default checkpoint_every) to a tree of 100,000 and saving
// their tiles in the tlog bucket; the per-leaf cost is what the log adds
// to every LEDGER message.
func BenchmarkCheckpointIssuance(b *testing.B) {
	srv := natstest.RunServer(b)
	_, js := natstest.Connect(b, srv.ClientURL())
	natstest.Bootstrap(b, js, nil)
	kv, err := OpenBucket(b.Context(), js)
	if err != nil {
		b.Fatal(err)
	}
	tr := OpenTree(Tiles(kv), 0)
	grow(b, tr, 100_000, func() int64 { return 10_000 })
	leaves := make([]tlog.Hash, 1000)
	for b.Loop() {
		for i := range leaves {
			leaves[i] = LeafHash(entryHash(tr.Size() + int64(i)))
		}
		if _, err := tr.Append(b.Context(), leaves); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(leaves)), "ns/leaf")
}

// BenchmarkLogCatchUp: the log's wall time per LEDGER message of 1 KB: reading
// it from a real JetStream server, hashing it as a leaf, appending, saving
// the tiles and signing one checkpoint per 1,000 messages. With the store's
// fsync before every acknowledgement, the tile and checkpoint writes (five
// or so per 1,000 messages) are most of it.
func BenchmarkLogCatchUp(b *testing.B) {
	srv := natstest.RunServer(b)
	_, js := natstest.Connect(b, srv.ClientURL())
	natstest.Bootstrap(b, js, nil)
	kv, err := OpenBucket(b.Context(), js)
	if err != nil {
		b.Fatal(err)
	}
	skey, _, err := note.GenerateKey(rand.Reader, "claimcheck.bench/log")
	if err != nil {
		b.Fatal(err)
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		b.Fatal(err)
	}
	l := &Log{JS: js, KV: kv, Every: 1000, Interval: time.Hour, Logger: slog.New(slog.DiscardHandler),
		Signers: func(context.Context, string) ([]note.Signer, error) { return []note.Signer{signer}, nil }}
	msg := bytes.Repeat([]byte("x"), 1024)
	for b.Loop() {
		b.StopTimer()
		for i := range 1000 {
			if _, err := js.PublishAsync(subject.Ledger(fmt.Sprintf("s%d", i%50)), msg); err != nil {
				b.Fatal(err)
			}
		}
		<-js.PublishAsyncComplete()
		b.StartTimer()
		if _, err := l.CatchUp(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/message")
}

package transparency

import (
	"slices"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/claimcheck/claimcheck/pkg/natstest"
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

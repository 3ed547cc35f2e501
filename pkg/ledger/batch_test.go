package ledger_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
)

func groups(names []string, from, to int) []ledger.Group {
	out := make([]ledger.Group, len(names))
	for i, c := range names {
		out[i] = ledger.Group{Chain: c, Entries: entries(c, from, to)}
	}
	return out
}

func chainNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("b%03d", i)
	}
	return out
}

func ledgerMsgs(t *testing.T, js jetstream.JetStream) uint64 {
	t.Helper()
	s, err := js.Stream(t.Context(), stream.Ledger)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// Many chains' blocks go into one atomic batch, each chained at its own
// compare-and-set; the appender's view of every chain afterwards is exact
// (the next appends need no retry), and every chain verifies.
func TestAppendBatchChainsEverySessionInOneBatch(t *testing.T) {
	js := setup(t)
	ctx := t.Context()
	names := chainNames(40)
	a := ledger.NewAppender(js, ledger.AppenderConfig{AtomicMin: 2, AtomicBatch: 16})
	// Some chains already have entries (loaded from the stream), most not.
	pre := ledger.NewAppender(js, ledger.AppenderConfig{AtomicMin: 2})
	for _, c := range names[:10] {
		if _, err := pre.Append(ctx, c, entries(c, 1, 2)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := a.AppendBatch(ctx, groups(names, 3, 5))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if !r.Done || len(r.Entries) != 3 || r.Conflicts != 0 {
			t.Fatalf("%s: done=%v entries=%d conflicts=%d, want all 3 chained at once", names[i], r.Done, len(r.Entries), r.Conflicts)
		}
		want := uint64(3)
		if i < 10 {
			want = 5
		}
		if r.N != want {
			t.Fatalf("%s: head n=%d, want %d", names[i], r.N, want)
		}
	}
	if got := ledgerMsgs(t, js); got != 10+40 {
		t.Fatalf("ledger holds %d messages, want 50 (one block per chain)", got)
	}
	// The blocks went in atomic batches: 40 blocks in chunks of 16, 16, 8.
	batches := map[string]int{}
	l, err := js.Stream(ctx, stream.Ledger)
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(11); seq <= 50; seq++ {
		raw, err := l.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		id := raw.Header.Get("Nats-Batch-Id")
		if id == "" {
			t.Fatalf("ledger message %d was not written by an atomic batch", seq)
		}
		batches[id]++
	}
	if len(batches) != 3 {
		t.Fatalf("blocks went in %d batches (%v), want 3 chunks of at most 16", len(batches), batches)
	}
	// Exact state: the next batch and a single append both commit without
	// a compare-and-set retry.
	res, err = a.AppendBatch(ctx, groups(names, 6, 6))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if !r.Done || r.Conflicts != 0 {
			t.Fatalf("%s: second batch done=%v conflicts=%d", names[i], r.Done, r.Conflicts)
		}
	}
	one, err := a.Append(ctx, names[17], entries(names[17], 7, 7))
	if err != nil || one.Conflicts != 0 || one.N != 5 {
		t.Fatalf("append after batches: %+v, %v; want n=5 without a conflict", one, err)
	}
	for _, c := range names {
		if err := chain.Verify(c, readChain(t, js, c)); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
	}
}

// Entries already chained are skipped; a group left with nothing new is done
// without being written.
func TestAppendBatchSkipsChainedEvents(t *testing.T) {
	js := setup(t)
	ctx := t.Context()
	names := chainNames(5)
	a := ledger.NewAppender(js, ledger.AppenderConfig{AtomicMin: 2})
	if _, err := a.AppendBatch(ctx, groups(names, 1, 3)); err != nil {
		t.Fatal(err)
	}
	before := ledgerMsgs(t, js)
	gs := groups(names, 1, 3)
	gs[4] = ledger.Group{Chain: names[4], Entries: entries(names[4], 2, 4)}
	res, err := a.AppendBatch(ctx, gs)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res[:4] {
		if !r.Done || r.Duplicates != 3 || len(r.Entries) != 0 || r.N != 3 {
			t.Fatalf("%s: %+v, want done, 3 duplicates, nothing chained", names[i], r)
		}
	}
	// A batch of one block is left to Append.
	if res[4].Done {
		t.Fatalf("a lone block was batched: %+v", res[4])
	}
	if got := ledgerMsgs(t, js); got != before {
		t.Fatalf("ledger grew by %d messages", got-before)
	}
}

// Another writer moved one chain's head (same message id, or only the
// compare-and-set): the server refuses the whole batch and stores nothing
// of it; the halves are tried again, so only the chain that moved and its
// neighbour in the last refused half are left to Append, which chains them
// without a fork.
func TestAppendBatchConflictIsIsolated(t *testing.T) {
	js := setup(t)
	ctx := t.Context()
	names := chainNames(8)
	a := ledger.NewAppender(js, ledger.AppenderConfig{AtomicMin: 2})
	if _, err := a.AppendBatch(ctx, groups(names, 1, 1)); err != nil {
		t.Fatal(err)
	}
	check := func(res []ledger.BatchResult, err error, moved int, before uint64, reason string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), reason) {
			t.Fatalf("err = %v, want the server's refusal (%s)", err, reason)
		}
		done := 0
		for i, r := range res {
			switch {
			case r.Done:
				done++
			case len(r.Entries) != 0 || r.Duplicates != 0:
				t.Fatalf("%s: %+v, want untouched", names[i], r)
			}
		}
		// 8 -> 4 committed + 4 refused -> 2 committed + 2 left.
		if res[moved].Done || done != 6 {
			t.Fatalf("done %d of 8 (moved chain done: %v), want the 6 others", done, res[moved].Done)
		}
		if got := ledgerMsgs(t, js); got != before+6 {
			t.Fatalf("ledger grew by %d messages, want 6 (refused batches store nothing)", got-before)
		}
	}
	other := ledger.NewAppender(js, ledger.AppenderConfig{AtomicMin: 2})
	if _, err := other.Append(ctx, names[5], entries(names[5], 2, 2)); err != nil {
		t.Fatal(err)
	}
	before := ledgerMsgs(t, js)
	gs := groups(names, 2, 3)
	res, err := a.AppendBatch(ctx, gs)
	// The block for the moved chain repeats the message id the other
	// writer used (chain:n), which the server checks before the
	// compare-and-set.
	check(res, err, 5, before, "duplicate message id")
	for i, g := range gs {
		if res[i].Done {
			continue
		}
		r, err := a.Append(ctx, g.Chain, g.Entries)
		if err != nil {
			t.Fatal(err)
		}
		if r.N != 3 {
			t.Fatalf("%s: n=%d after the fallback, want 3", names[i], r.N)
		}
	}
	for _, c := range names {
		if err := chain.Verify(c, readChain(t, js, c)); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
	}
	// A message with another id moved a head: the compare-and-set alone
	// refuses the batch.
	rogue := `{"n":9,"hash":"sha256:` + fmt.Sprintf("%064d", 1) + `","event_id":"01JD0000000000000000000099"}`
	if _, err := js.Publish(ctx, subject.Ledger(names[2]), []byte(rogue)); err != nil {
		t.Fatal(err)
	}
	before = ledgerMsgs(t, js)
	res, err = a.AppendBatch(ctx, groups(names, 4, 4))
	check(res, err, 2, before, "wrong last sequence")
}

// Groups that cannot go in one block, or whose chain cannot be read, are
// left to Append; the others are batched. Bad calls are refused.
func TestAppendBatchLeavesWhatItCannotTake(t *testing.T) {
	js := setup(t)
	ctx := t.Context()
	if _, err := js.Publish(ctx, subject.Ledger("unreadable"), []byte("not an entry")); err != nil {
		t.Fatal(err)
	}
	a := ledger.NewAppender(js, ledger.AppenderConfig{AtomicMin: 2, MaxBlockBytes: 1500})
	gs := []ledger.Group{
		{Chain: "big", Entries: entries("big", 1, 8)},
		{Chain: "unreadable", Entries: entries("unreadable", 1, 1)},
		{Chain: "x", Entries: entries("x", 1, 2)},
		{Chain: "y", Entries: entries("y", 1, 2)},
		{Chain: "mixed", Entries: append(entries("mixed", 1, 1), entries("y", 9, 9)...)},
	}
	res, err := a.AppendBatch(ctx, gs)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{false, false, true, true, false} {
		if res[i].Done != want {
			t.Errorf("%s: done=%v, want %v", gs[i].Chain, res[i].Done, want)
		}
	}
	if _, err := a.Append(ctx, "big", gs[0].Entries); err != nil {
		t.Fatalf("the oversized group then goes through Append in several blocks: %v", err)
	}
	if _, err := a.AppendBatch(ctx, []ledger.Group{{Chain: "z"}, {Chain: "z"}}); err == nil || !strings.Contains(err.Error(), `"z" given twice`) {
		t.Fatalf("err = %v, want the repeated chain named", err)
	}
}

// A ledger created without allow_atomic: the first batch is refused, the
// appender stops trying, and Append still works.
func TestAppendBatchWithoutAllowAtomic(t *testing.T) {
	s := natstest.RunServer(t)
	_, js := natstest.Connect(t, s.ClientURL())
	ctx := t.Context()
	cfg := stream.LedgerConfig(stream.DefaultOptions())
	cfg.AllowAtomicPublish = false
	if _, err := js.CreateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	a := ledger.NewAppender(js, ledger.AppenderConfig{AtomicMin: 2})
	names := chainNames(3)
	res, err := a.AppendBatch(ctx, groups(names, 1, 1))
	if err == nil || !strings.Contains(err.Error(), "atomic") {
		t.Fatalf("err = %v, want the server's refusal", err)
	}
	for _, r := range res {
		if r.Done {
			t.Fatal("a group is done although the batch was refused")
		}
	}
	res, err = a.AppendBatch(ctx, groups(names, 1, 1))
	if err != nil || res[0].Done {
		t.Fatalf("second batch: %v, %+v; want nothing tried", err, res[0])
	}
	if _, err := a.Append(ctx, names[0], entries(names[0], 1, 1)); err != nil {
		t.Fatal(err)
	}
}

// An interrupted batch (its commit never sent) stores nothing, and the
// chains take the next batch at the same positions.
func TestAbandonedBatchStoresNothing(t *testing.T) {
	js := setup(t)
	ctx, cancel := context.WithCancel(t.Context())
	names := chainNames(4)
	a := ledger.NewAppender(js, ledger.AppenderConfig{AtomicMin: 2})
	for _, c := range names {
		a.Prime(c, 0, "", 0, slices.Values([]string(nil))) // known empty: nothing to read first
	}
	cancel() // the commit request fails at once; the staged blocks were sent
	res, err := a.AppendBatch(ctx, groups(names, 1, 1))
	if err == nil || res[0].Done {
		t.Fatalf("cancelled batch: %v, %+v", err, res[0])
	}
	if got := ledgerMsgs(t, js); got != 0 {
		t.Fatalf("an uncommitted batch stored %d messages", got)
	}
	res, err = a.AppendBatch(t.Context(), groups(names, 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if !r.Done || r.N != 1 {
			t.Fatalf("%s: %+v", names[i], r)
		}
	}
}

// BenchmarkManySessions appends one entry to each of 200 chains, as ingest
// does with a batch of events from many sessions: chain by chain (200
// publishes, concurrently) against one atomic batch. sync_interval always.
func BenchmarkManySessions(b *testing.B) {
	for _, mode := range []string{"append-each", "atomic-batch"} {
		b.Run(mode, func(b *testing.B) {
			s := natstest.RunServer(b)
			_, js := natstest.Connect(b, s.ClientURL())
			natstest.Bootstrap(b, js, nil)
			a := ledger.NewAppender(js, ledger.AppenderConfig{})
			names := make([]string, 200)
			for i := range names {
				names[i] = fmt.Sprintf("m%03d", i)
			}
			ctx := b.Context()
			b.ResetTimer()
			for i := range b.N {
				gs := make([]ledger.Group, len(names))
				for k, c := range names {
					gs[k] = ledger.Group{Chain: c, Entries: entries(c, i+1, i+1)}
				}
				if mode == "atomic-batch" {
					res, err := a.AppendBatch(ctx, gs)
					if err != nil || !res[0].Done {
						b.Fatal(err)
					}
					continue
				}
				var wg sync.WaitGroup
				for _, g := range gs {
					wg.Go(func() {
						if _, err := a.Append(ctx, g.Chain, g.Entries); err != nil {
							b.Error(err)
						}
					})
				}
				wg.Wait()
			}
			b.ReportMetric(float64(b.N*len(names))/b.Elapsed().Seconds(), "entries/s")
		})
	}
}

// Fewer chains than AtomicMin (default stream.MinAtomicBatch) are left to
// Append, untouched: on R1 file storage such a batch costs more than
// publishing its blocks one by one.
func TestAppendBatchLeavesSmallBatchesToAppend(t *testing.T) {
	js := setup(t)
	ctx := t.Context()
	a := ledger.NewAppender(js, ledger.AppenderConfig{})
	small := chainNames(stream.MinAtomicBatch - 1)
	res, err := a.AppendBatch(ctx, groups(small, 1, 2))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Done || len(r.Entries) != 0 {
			t.Fatalf("%s: %+v, want it left to Append", small[i], r)
		}
	}
	if n := ledgerMsgs(t, js); n != 0 {
		t.Fatalf("ledger holds %d messages after a batch below the minimum, want 0", n)
	}
	enough := chainNames(stream.MinAtomicBatch)
	if res, err = a.AppendBatch(ctx, groups(enough, 1, 2)); err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if !r.Done || len(r.Entries) != 2 {
			t.Fatalf("%s: %+v, want both entries chained in the batch", enough[i], r)
		}
	}
	if n := ledgerMsgs(t, js); n != uint64(stream.MinAtomicBatch) {
		t.Fatalf("ledger holds %d messages, want one block per chain (%d)", n, stream.MinAtomicBatch)
	}
}

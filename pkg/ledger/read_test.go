package ledger_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/schemas"
)

// writeBlocks appends entries from..to, one block each, to every chain,
// the chains' blocks interleaved in the stream.
func writeBlocks(tb testing.TB, a *ledger.Appender, chains []string, from, to int, payload string) {
	tb.Helper()
	for i := from; i <= to; i++ {
		for _, c := range chains {
			e := entries(c, i, i)[0]
			if payload != "" {
				p := fmt.Sprintf(`{"i":%d,"pad":%q}`, i, payload)
				e.Payload = &p
			}
			if _, err := a.Append(tb.Context(), c, []*schemas.Entry{e}); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

// Walk reads every block of a chain after a sequence, in order, skipping
// other chains' blocks interleaved with it, across more blocks than one
// read request returns and blocks large enough to fill a request's byte
// budget.
func TestWalkLongChainsAcrossReadBatches(t *testing.T) {
	js := setup(t)
	a := ledger.NewAppender(js, ledger.AppenderConfig{})
	r := ledger.NewReader(js, "")
	chains := []string{"walk-a", "walk-b", "walk-c"}
	const n = 300
	writeBlocks(t, a, chains, 1, n, "")
	big := strings.Repeat("x", 200<<10)
	writeBlocks(t, a, chains[:1], n+1, n+30, big) // n+1..n+30 of walk-a: ~6 MB
	for _, c := range chains {
		want := n
		if c == "walk-a" {
			want = n + 30
		}
		var got []uint64
		var seqs []uint64
		err := r.Walk(t.Context(), c, 0, func(s ledger.Stored) error {
			if s.Chain != c {
				t.Fatalf("%s: entry of chain %s", c, s.Chain)
			}
			var e struct {
				N uint64 `json:"n"`
			}
			if err := json.Unmarshal(s.Raw, &e); err != nil {
				return err
			}
			got = append(got, e.N)
			seqs = append(seqs, s.Seq)
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		if len(got) != want {
			t.Fatalf("%s: %d entries, want %d", c, len(got), want)
		}
		for i, n := range got {
			if n != uint64(i+1) || i > 0 && seqs[i] <= seqs[i-1] {
				t.Fatalf("%s: entry %d has n=%d seq=%d (previous seq %d)", c, i, n, seqs[i], seqs[max(i-1, 0)])
			}
		}
		// From the middle: everything after a block's sequence.
		mid := seqs[len(seqs)/2]
		var after int
		if err := r.Walk(t.Context(), c, mid, func(s ledger.Stored) error {
			if s.Seq <= mid {
				t.Fatalf("%s: seq %d not after %d", c, s.Seq, mid)
			}
			after++
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if after != want-len(seqs)/2-1 {
			t.Fatalf("%s: %d entries after seq %d, want %d", c, after, mid, want-len(seqs)/2-1)
		}
	}
	// A chain with nothing, and a walk past a chain's end, read nothing.
	for _, tc := range []struct {
		chain string
		after uint64
	}{{"walk-none", 0}, {"walk-b", 1 << 40}} {
		if err := r.Walk(t.Context(), tc.chain, tc.after, func(ledger.Stored) error {
			t.Fatalf("%s after %d: read an entry", tc.chain, tc.after)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	// fn's error stops the walk and is returned.
	stop := errors.New("enough")
	calls := 0
	if err := r.Walk(t.Context(), "walk-b", 0, func(ledger.Stored) error {
		if calls++; calls == 5 {
			return stop
		}
		return nil
	}); !errors.Is(err, stop) || calls != 5 {
		t.Fatalf("walk stopped with %v after %d calls, want %v after 5", err, calls, stop)
	}
}

// BenchmarkWalkLongChain: reading a 500-block chain (one entry per block,
// as a session's hook events arrive one by one), interleaved with another
// chain, from the start: what a verifier or an appender pays for a session
// it has not cached.
func BenchmarkWalkLongChain(b *testing.B) {
	js := setup(b)
	a := ledger.NewAppender(js, ledger.AppenderConfig{})
	writeBlocks(b, a, []string{"long", "other"}, 1, 500, "")
	r := ledger.NewReader(js, "")
	b.ResetTimer()
	for b.Loop() {
		n := 0
		if err := r.Walk(b.Context(), "long", 0, func(ledger.Stored) error { n++; return nil }); err != nil {
			b.Fatal(err)
		}
		if n != 500 {
			b.Fatalf("%d entries", n)
		}
	}
}

// A ledger copy without direct gets (allow_direct off) is read one block
// per request, with the same result.
func TestWalkWithoutDirectGets(t *testing.T) {
	js := setup(t)
	cfg := stream.LedgerConfig(stream.DefaultOptions())
	cfg.Name, cfg.Subjects, cfg.AllowDirect = "COPY", []string{"copy.>"}, false
	if _, err := js.CreateStream(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 5; i++ {
		if _, err := js.Publish(t.Context(), "copy.c1", fmt.Appendf(nil, `{"n":%d}`, i)); err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(t.Context(), "copy.c2", []byte(`{"n":0}`)); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	if err := ledger.NewReader(js, "COPY").Walk(t.Context(), "c1", 2, func(s ledger.Stored) error {
		got = append(got, string(s.Raw))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != `{"n":2},{"n":3},{"n":4},{"n":5}` {
		t.Fatalf("read %v", got)
	}
}

// BenchmarkWalkShortChain: reading the one new block of a chain after the
// blocks already read, as a verifier refreshing a cached session does.
func BenchmarkWalkShortChain(b *testing.B) {
	js := setup(b)
	a := ledger.NewAppender(js, ledger.AppenderConfig{})
	writeBlocks(b, a, []string{"short", "other"}, 1, 3, "")
	r := ledger.NewReader(js, "")
	var last uint64
	if err := r.Walk(b.Context(), "short", 0, func(s ledger.Stored) error { last = s.Seq; return nil }); err != nil {
		b.Fatal(err)
	}
	prev := last - 2 // the block before the last: one block left to read
	b.ResetTimer()
	for b.Loop() {
		n := 0
		if err := r.Walk(b.Context(), "short", prev, func(ledger.Stored) error { n++; return nil }); err != nil {
			b.Fatal(err)
		}
		if n != 1 {
			b.Fatalf("%d entries", n)
		}
	}
}

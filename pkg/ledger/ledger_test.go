package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
)

func entries(chainName string, from, to int) []*schemas.Entry {
	var out []*schemas.Entry
	for i := from; i <= to; i++ {
		p := fmt.Sprintf(`{"i":%d}`, i)
		out = append(out, &schemas.Entry{
			V: 1, Kind: schemas.EntryEvent, Chain: chainName, SessionID: chainName,
			EventID: fmt.Sprintf("01JD%022d", i), HookEvent: "PostToolUse",
			IngestedAt: "2026-11-22T03:04:05.123Z", Payload: &p, Bundle: "test",
		})
	}
	return out
}

func setup(t testing.TB) jetstream.JetStream {
	s := natstest.RunServer(t)
	_, js := natstest.Connect(t, s.ClientURL())
	natstest.Bootstrap(t, js, nil)
	return js
}

func readChain(t *testing.T, js jetstream.JetStream, c string) [][]byte {
	t.Helper()
	var out [][]byte
	if err := ledger.NewReader(js, "").Walk(t.Context(), c, 0, func(s ledger.Stored) error {
		out = append(out, s.Raw)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAppendChainsAndDedupes(t *testing.T) {
	js := setup(t)
	ctx := t.Context()
	a := ledger.NewAppender(js, ledger.AppenderConfig{MaxBlockBytes: 700})
	res, err := a.Append(ctx, "s1", entries("s1", 1, 10))
	if err != nil {
		t.Fatal(err)
	}
	if res.N != 10 || len(res.Entries) != 10 || res.Duplicates != 0 {
		t.Fatalf("first append: %+v", res)
	}
	// Same events again plus new ones: only the new ones are chained.
	res, err = a.Append(ctx, "s1", entries("s1", 5, 15))
	if err != nil {
		t.Fatal(err)
	}
	if res.N != 15 || len(res.Entries) != 5 || res.Duplicates != 6 {
		t.Fatalf("second append: N=%d chained=%d dups=%d", res.N, len(res.Entries), res.Duplicates)
	}
	// A fresh appender (as after a restart) knows the chain's events too.
	b := ledger.NewAppender(js, ledger.AppenderConfig{})
	res, err = b.Append(ctx, "s1", entries("s1", 1, 16))
	if err != nil {
		t.Fatal(err)
	}
	if res.N != 16 || len(res.Entries) != 1 || res.Duplicates != 15 {
		t.Fatalf("after restart: N=%d chained=%d dups=%d", res.N, len(res.Entries), res.Duplicates)
	}
	got := readChain(t, js, "s1")
	if len(got) != 16 {
		t.Fatalf("chain holds %d entries, want 16", len(got))
	}
	if err := chain.Verify("s1", got); err != nil {
		t.Fatal(err)
	}
	// Small blocks: more than one message was written.
	st, _ := js.Stream(ctx, stream.Ledger)
	info, _ := st.Info(ctx)
	if info.State.Msgs < 4 {
		t.Fatalf("expected several blocks with MaxBlockBytes=700, got %d messages", info.State.Msgs)
	}
	last, err := ledger.NewReader(js, "").Last(ctx, "s1")
	if err != nil || string(last.Raw) != string(got[15]) {
		t.Fatalf("Last = %v, %v", last, err)
	}
	if _, err := ledger.NewReader(js, "").Last(ctx, "none"); !errors.Is(err, ledger.ErrEmpty) {
		t.Fatalf("Last of empty chain: %v", err)
	}
}

func TestConcurrentWritersCannotForkAChain(t *testing.T) {
	js := setup(t)
	ctx := t.Context()
	const writers, per = 4, 40
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			a := ledger.NewAppender(js, ledger.AppenderConfig{MaxConflicts: 1000})
			for i := range per {
				// Overlapping event ids: every writer also tries the others' events.
				k := (i*writers+w)%(writers*per) + 1
				if _, err := a.Append(ctx, "race", entries("race", k, k)); err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
				if _, err := a.Append(ctx, "race", entries("race", (k%(writers*per))+1, (k%(writers*per))+1)); err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
			}
		})
	}
	wg.Wait()
	got := readChain(t, js, "race")
	if err := chain.Verify("race", got); err != nil {
		t.Fatalf("chain forked or broken: %v", err)
	}
	if len(got) != writers*per {
		t.Fatalf("chain holds %d entries, want each of %d events exactly once", len(got), writers*per)
	}
}

func TestUnreadableHeadIsReported(t *testing.T) {
	js := setup(t)
	ctx := t.Context()
	if _, err := js.Publish(ctx, subject.Ledger("bad"), []byte("not an entry")); err != nil {
		t.Fatal(err)
	}
	a := ledger.NewAppender(js, ledger.AppenderConfig{})
	_, err := a.Append(ctx, "bad", entries("bad", 1, 1))
	if !errors.Is(err, ledger.ErrChainUnreadable) {
		t.Fatalf("err = %v, want ErrChainUnreadable", err)
	}
}

func TestLoadReportsFaultsButKeepsAppending(t *testing.T) {
	js := setup(t)
	ctx := t.Context()
	a := ledger.NewAppender(js, ledger.AppenderConfig{})
	if _, err := a.Append(ctx, "f", entries("f", 1, 3)); err != nil {
		t.Fatal(err)
	}
	// A rogue writer appends a well-formed but unchained entry.
	rogue := `{"n":9,"hash":"sha256:` + fmt.Sprintf("%064d", 1) + `","event_id":"01JD0000000000000000000099"}`
	if _, err := js.Publish(ctx, subject.Ledger("f"), []byte(rogue)); err != nil {
		t.Fatal(err)
	}
	var faults []*chain.Fault
	b := ledger.NewAppender(js, ledger.AppenderConfig{OnFault: func(f *chain.Fault) { faults = append(faults, f) }})
	res, err := b.Append(ctx, "f", entries("f", 4, 4))
	if err != nil {
		t.Fatal(err)
	}
	if len(faults) != 1 || faults[0].N != 4 {
		t.Fatalf("faults = %v, want one at position 4", faults)
	}
	if res.N != 10 {
		t.Fatalf("appended after the rogue head at n=%d, want 10", res.N)
	}
}

func TestWalkAllAndChains(t *testing.T) {
	js := setup(t)
	ctx := t.Context()
	a := ledger.NewAppender(js, ledger.AppenderConfig{})
	for _, c := range []string{"b", "a", schemas.RejectedChain} {
		if _, err := a.Append(ctx, c, entries(c, 1, 3)); err != nil {
			t.Fatal(err)
		}
	}
	r := ledger.NewReader(js, "")
	chains, err := r.Chains(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(chains) != "[_rejected a b]" {
		t.Fatalf("chains = %v", chains)
	}
	per := map[string]int{}
	if err := r.WalkAll(ctx, func(s ledger.Stored) error { per[s.Chain]++; return nil }); err != nil {
		t.Fatal(err)
	}
	if per["a"] != 3 || per["b"] != 3 || per[schemas.RejectedChain] != 3 {
		t.Fatalf("WalkAll counts %v", per)
	}
}

func TestPrimeSkipsTheReadAndStaleStateCatchesUp(t *testing.T) {
	js := setup(t)
	ctx := t.Context()
	w := ledger.NewAppender(js, ledger.AppenderConfig{})
	res, err := w.Append(ctx, "p", entries("p", 1, 3))
	if err != nil {
		t.Fatal(err)
	}
	last, _ := ledger.NewReader(js, "").Last(ctx, "p")
	ids := func(yield func(string) bool) {
		for _, e := range entries("p", 1, 3) {
			if !yield(e.EventID) {
				return
			}
		}
	}
	// Primed with the true head: appends continue the chain, and the primed
	// event ids are deduplicated without reading the chain.
	a := ledger.NewAppender(js, ledger.AppenderConfig{})
	a.Prime("p", res.N, res.Hash, last.Seq, ids)
	got, err := a.Append(ctx, "p", entries("p", 3, 4))
	if err != nil || got.N != 4 || got.Duplicates != 1 {
		t.Fatalf("primed append: %+v %v", got, err)
	}
	// Primed with a stale head (another writer moved on): the
	// compare-and-set fails, the appender catches up, nothing forks.
	if _, err := w.Append(ctx, "p", entries("p", 5, 6)); err != nil {
		t.Fatal(err)
	}
	b := ledger.NewAppender(js, ledger.AppenderConfig{})
	b.Prime("p", res.N, res.Hash, last.Seq, ids)
	got, err = b.Append(ctx, "p", entries("p", 6, 8))
	if err != nil || got.N != 8 || got.Duplicates != 1 || got.Conflicts != 1 {
		t.Fatalf("stale prime: %+v %v", got, err)
	}
	// w has not seen b's entries 7 and 8: its compare-and-set fails once.
	if got, err = w.Append(ctx, "p", entries("p", 9, 9)); err != nil || got.Conflicts != 1 {
		t.Fatalf("stale loaded appender: %+v %v", got, err)
	}
	// A loaded appender primed with a state further along (another writer
	// appended and the caller read it) takes it: no failed compare-and-set.
	if _, err := b.Append(ctx, "p", entries("p", 10, 10)); err != nil {
		t.Fatal(err)
	}
	last, _ = ledger.NewReader(js, "").Last(ctx, "p")
	all := func(yield func(string) bool) {
		for _, e := range entries("p", 1, 10) {
			if !yield(e.EventID) {
				return
			}
		}
	}
	w.Prime("p", 10, headHash(t, last.Raw), last.Seq, all)
	if got, err = w.Append(ctx, "p", entries("p", 10, 11)); err != nil || got.N != 11 || got.Duplicates != 1 || got.Conflicts != 0 {
		t.Fatalf("append after priming ahead: %+v %v", got, err)
	}
	// Priming with a state behind the appender's own changes nothing.
	w.Prime("p", res.N, res.Hash, 1, ids)
	if got, err = w.Append(ctx, "p", entries("p", 12, 12)); err != nil || got.N != 12 || got.Conflicts != 0 {
		t.Fatalf("append after a stale prime of a loaded chain: %+v %v", got, err)
	}
	if err := chain.Verify("p", readChain(t, js, "p")); err != nil {
		t.Fatal(err)
	}
}

func headHash(t *testing.T, raw []byte) string {
	t.Helper()
	var h struct {
		Hash string `json:"hash"`
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		t.Fatal(err)
	}
	return h.Hash
}

// TestTrimmedEventsStayKnownAfterAnUnknownOutcome: an append whose outcome
// is unknown (a timeout, NATS restarting) makes the appender read the chain
// again; events it knew to be chained must stay known even when retention
// has trimmed them from the hot stream since. When they did not (the
// torture test found it), a hook's spooled copy of an event delivered
// after a NATS restart, whose first delivery had been chained and trimmed,
// was chained a second time.
func TestTrimmedEventsStayKnownAfterAnUnknownOutcome(t *testing.T) {
	js := setup(t)
	ctx := t.Context()
	a := ledger.NewAppender(js, ledger.AppenderConfig{})
	if _, err := a.Append(ctx, "tr", entries("tr", 1, 5)); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Append(ctx, "tr", entries("tr", 6, 8)); err != nil {
		t.Fatal(err)
	}
	raws := readChain(t, js, "tr")
	last, err := ledger.NewReader(js, "").Last(ctx, "tr")
	if err != nil {
		t.Fatal(err)
	}
	// Trim as the rotator does: anchor at entry 5, purge the blocks below
	// the one holding 6..8.
	if err := ledger.NewAnchors(js).Put(ctx, ledger.Anchor{Chain: "tr", Starts: []ledger.Start{{N: 5, Hash: headHash(t, raws[4])}},
		At: "2026-11-28T00:00:00Z"}, 0); err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(ctx, stream.Ledger)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Purge(ctx, jetstream.WithPurgeSubject(subject.Ledger("tr")), jetstream.WithPurgeSequence(last.Seq)); err != nil {
		t.Fatal(err)
	}
	if n := len(readChain(t, js, "tr")); n != 3 {
		t.Fatalf("%d hot entries after the trim, want 3", n)
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := a.Append(gone, "tr", entries("tr", 9, 9)); err == nil {
		t.Fatal("an append under an ended context succeeded")
	}
	res, err := a.Append(ctx, "tr", entries("tr", 1, 9))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Entries) != 1 || res.Duplicates != 8 || res.N != 9 {
		t.Fatalf("after an unknown outcome: chained %d, duplicates %d, head n=%d; want 1, 8, 9 (trimmed events chained again)",
			len(res.Entries), res.Duplicates, res.N)
	}
}

package replay

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/schemas"
)

// TestRunChecksChainsInParallelInLedgerOrder replays a ledger of 40
// interleaved chains, five of them tampered with in different ways, with
// the chains checked on one goroutine and on four: the records, their
// checks and the summary are the same, in ledger order, and every defect
// is caught where it is.
func TestRunChecksChainsInParallelInLedgerOrder(t *testing.T) {
	f := newFixture(t)
	const chains, rounds = 40, 8
	for m := range rounds {
		for c := range chains {
			f.round(t, fmt.Sprintf("par-%02d", c), "h1", 1+(c+m)%3, m)
		}
	}
	type key struct {
		chain string
		n     uint64
	}
	tamper := map[key]func(t *testing.T, raw []byte) []byte{
		// not canonical: checked on the general path
		{"par-03", 4}: func(_ *testing.T, raw []byte) []byte {
			return bytes.Replace(raw, []byte(`,"kind":`), []byte(`, "kind":`), 1)
		},
		// content changed: hash mismatch
		{"par-07", 2}: func(_ *testing.T, raw []byte) []byte {
			return bytes.Replace(raw, []byte(`\"echo `), []byte(`\"ECHO `), 1)
		},
		// removed: a gap
		{"par-11", 5}: func(*testing.T, []byte) []byte { return nil },
		// re-sealed with another prev_hash
		{"par-15", 3}: func(t *testing.T, raw []byte) []byte {
			var e schemas.Entry
			if err := json.Unmarshal(raw, &e); err != nil {
				t.Fatal(err)
			}
			e.PrevHash = digest.Zero
			out, err := chain.Seal(&e)
			if err != nil {
				t.Fatal(err)
			}
			return out
		},
		// not JSON
		{"par-19", 6}: func(*testing.T, []byte) []byte { return []byte(`{"n":6,`) },
	}
	wantFault := map[string]struct {
		n      uint64
		reason string
	}{
		"par-03": {4, "canonical"}, "par-07": {2, "hash mismatch"}, "par-11": {5, "missing"},
		"par-15": {3, "prev_hash"}, "par-19": {6, "not valid JSON"},
	}
	// The copy: LEDGER's blocks, the tampered entries changed.
	if _, err := f.js.CreateStream(t.Context(), jetstream.StreamConfig{Name: "PAR", Subjects: []string{"par.>"}, AllowDirect: true}); err != nil {
		t.Fatal(err)
	}
	var block [][]byte
	var blockChain string
	var blockSeq uint64
	publish := func() {
		if len(block) > 0 {
			if _, err := f.js.Publish(t.Context(), "par."+blockChain, bytes.Join(block, []byte{'\n'})); err != nil {
				t.Fatal(err)
			}
		}
		block = nil
	}
	err := ledger.NewReader(f.js, "").WalkAll(t.Context(), func(s ledger.Stored) error {
		if s.Seq != blockSeq {
			publish()
			blockChain, blockSeq = s.Chain, s.Seq
		}
		var h Head
		if err := json.Unmarshal(s.Raw, &h, json.RejectUnknownMembers(false)); err != nil {
			return err
		}
		raw := bytes.Clone(s.Raw)
		if change := tamper[key{s.Chain, h.N}]; change != nil {
			if raw = change(t, raw); raw == nil {
				return nil
			}
		}
		block = append(block, raw)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	publish()

	type rec struct {
		Pos, Chain, Reason string
		N                  uint64
		Check              Check
	}
	replay := func(procs int) ([]rec, *Summary) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		var out []rec
		sum, err := Run(t.Context(), Config{JS: f.js, Stream: "PAR", Batch: 1000}, func(r *Record) error {
			out = append(out, rec{r.Pos.String(), r.Chain, r.Reason, r.Head.N, r.Check})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out, sum
	}
	one, sumOne := replay(1)
	four, sumFour := replay(4)
	if d := cmp.Diff(one, four); d != "" {
		t.Fatalf("records differ between one goroutine and four (-one +four):\n%s", d)
	}
	if d := cmp.Diff(sumOne, sumFour); d != "" {
		t.Fatalf("summaries differ (-one +four):\n%s", d)
	}
	total := 0
	for c := range chains {
		for m := range rounds {
			total += 1 + (c+m)%3
		}
	}
	if len(four) != total-1 || sumFour.Read != total-1 {
		t.Fatalf("%d records, %d read; want %d", len(four), sumFour.Read, total-1)
	}
	broken := map[string]uint64{}
	for i, r := range four {
		if i > 0 {
			a, _ := ParsePos(four[i-1].Pos)
			if b, _ := ParsePos(r.Pos); !a.Less(b) {
				t.Fatalf("not in ledger order: %s then %s", four[i-1].Pos, r.Pos)
			}
		}
		w, tampered := wantFault[r.Chain]
		switch {
		case broken[r.Chain] != 0:
			if r.Check != CheckUnverified {
				t.Fatalf("%s n=%d after the fault: %s", r.Chain, r.N, r.Check)
			}
		case tampered && r.Check == CheckFault:
			if (r.N != w.n && r.Chain != "par-11") || !strings.Contains(r.Reason, w.reason) {
				t.Fatalf("%s: fault at n=%d (%s), want n=%d (%s)", r.Chain, r.N, r.Reason, w.n, w.reason)
			}
			broken[r.Chain] = r.N
		case r.Check != CheckOK:
			t.Fatalf("%s n=%d: %s %s", r.Chain, r.N, r.Check, r.Reason)
		}
	}
	if len(broken) != len(wantFault) || len(sumFour.Faults) != len(wantFault) {
		t.Fatalf("broken %v, faults %+v", broken, sumFour.Faults)
	}
	for i := 1; i < len(sumFour.Faults); i++ {
		a, _ := ParsePos(sumFour.Faults[i-1].Pos)
		if b, _ := ParsePos(sumFour.Faults[i].Pos); !a.Less(b) {
			t.Fatalf("faults not in ledger order: %+v", sumFour.Faults)
		}
	}
}

// TestDecodeHeadMatchesUnmarshal holds the replay's head decoding to
// json.Unmarshal.
func TestDecodeHeadMatchesUnmarshal(t *testing.T) {
	es, _ := sealed(t, "dh", 1, 3, digest.Zero, t0)
	for _, raw := range append(es,
		[]byte(`{"chain":"a\"b","hash":"x","n":1}`), []byte(`{"host":"é","n":0}`), []byte(`{"n":-1}`), []byte(`{"n":null}`),
		[]byte(`{"n":"1"}`), []byte(`{"kind":1}`), []byte(`{"n":1.0}`), []byte(`{"n":1, "hash":"x"}`), []byte(`{"Hash":"y","hash":"x"}`),
		[]byte(`{"n":123456789012345}`), []byte(`not json`), []byte(`{"hook_event":"\u00e9"}`), []byte(`{"host":"\ud800"}`),
	) {
		var want, got Head
		werr := json.Unmarshal(raw, &want, json.RejectUnknownMembers(false))
		gerr := decodeHead(raw, &got, nil)
		if (werr == nil) != (gerr == nil) || want != got {
			t.Errorf("%s: decodeHead %+v %v; json.Unmarshal %+v %v", raw, got, gerr, want, werr)
		}
	}
}

// FuzzDecodeHead: decodeHead decodes as json.Unmarshal does.
func FuzzDecodeHead(f *testing.F) {
	f.Add([]byte(`{"chain":"c","hash":"x","host":"h","hook_event":"e","ingested_at":"t","kind":"k","n":1,"prev_hash":"p"}`))
	f.Add([]byte(`{"Hash":"y","hash":"x"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var want, got Head
		werr := json.Unmarshal(raw, &want, json.RejectUnknownMembers(false))
		gerr := decodeHead(raw, &got, nil)
		if (werr == nil) != (gerr == nil) || want != got {
			t.Fatalf("%q: decodeHead %+v %v; json.Unmarshal %+v %v", raw, got, gerr, want, werr)
		}
	})
}

package ledger_test

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/canon"
	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/pkg/entryschema"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/schemas/validation"
)

// TestVerifyFindsEachChainsFirstFault verifies a stream of 30 interleaved
// chains (blocks of 1..3 entries, over more entries than one batch), six
// of them broken in different ways, with the work on one goroutine and
// on four: the same result, each broken chain's first fault in ledger
// order, every other chain intact.
func TestVerifyFindsEachChainsFirstFault(t *testing.T) {
	js := setup(t)
	if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: "VER", Subjects: []string{"ver.>"}, AllowDirect: true}); err != nil {
		t.Fatal(err)
	}
	val, err := validation.New()
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		chain string
		n     int
	}
	seal := func(e *schemas.Entry) []byte {
		b, err := chain.Seal(e)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tamper := map[key]func(e *schemas.Entry, raw []byte) []byte{
		{"ver-02", 4}: func(_ *schemas.Entry, raw []byte) []byte { // not canonical
			return bytes.Replace(raw, []byte(`,"kind":`), []byte(`, "kind":`), 1)
		},
		{"ver-05", 2}: func(_ *schemas.Entry, raw []byte) []byte { // content changed
			return bytes.Replace(raw, []byte(`\"i\":`), []byte(`\"j\":`), 1)
		},
		{"ver-08", 7}: func(*schemas.Entry, []byte) []byte { return nil }, // removed
		{"ver-11", 3}: func(e *schemas.Entry, _ []byte) []byte { // linked to the wrong hash, re-sealed
			e.PrevHash = digest.Zero
			return seal(e)
		},
		{"ver-14", 5}: func(e *schemas.Entry, _ []byte) []byte { // a schema violation, re-sealed: the chain holds
			e.Kind = "bogus"
			return seal(e)
		},
		{"ver-17", 9}: func(e *schemas.Entry, _ []byte) []byte { // an event id chained twice, re-sealed
			e.EventID = fmt.Sprintf("01JV%04d%018d", 17, 1)
			return seal(e)
		},
	}
	want := map[string]struct {
		n      uint64
		reason string
	}{
		"ver-02": {4, "canonical"}, "ver-05": {2, "hash mismatch"}, "ver-08": {7, "missing"},
		"ver-11": {3, "prev_hash"}, "ver-14": {5, "/kind"}, "ver-17": {9, "chained twice"},
	}
	const chains, rounds = 30, 80
	prev := map[string]string{}
	n := map[string]int{}
	total := 0
	for r := range rounds {
		for c := range chains {
			name := fmt.Sprintf("ver-%02d", c)
			var block [][]byte
			for range 1 + (r+c)%3 {
				n[name]++
				if prev[name] == "" {
					prev[name] = digest.Zero
				}
				p := fmt.Sprintf(`{"i":%d,"session_id":%q}`, n[name], name)
				e := &schemas.Entry{V: 1, N: uint64(n[name]), PrevHash: prev[name], Kind: schemas.EntryEvent, Chain: name,
					EventID: fmt.Sprintf("01JV%04d%018d", c, n[name]), SessionID: name, HookEvent: "PostToolUse",
					IngestedAt: "2026-11-22T03:04:05.123Z", ReceivedAt: "2026-11-22T03:04:05.100Z", Payload: &p,
					PayloadDigest: digest.SHA256([]byte(p)), PayloadSize: len(p), Bundle: "test"}
				raw := seal(e)
				prev[name] = e.Hash
				if change := tamper[key{name, n[name]}]; change != nil {
					if raw = change(e, raw); raw == nil {
						continue
					}
				}
				block = append(block, raw)
				total++
			}
			if len(block) > 0 {
				if _, err := js.Publish(t.Context(), "ver."+name, bytes.Join(block, []byte{'\n'})); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if total <= 4096 {
		t.Fatalf("%d entries: fewer than a batch", total)
	}
	es, err := entryschema.New(val)
	if err != nil {
		t.Fatal(err)
	}
	fullCheck := func(raw []byte, _ []canon.Member) error { return val.Validate(schemas.EntryV1, raw) }
	verifyWith := func(procs int, only string, check func([]byte, []canon.Member) error) ledger.VerifyResult {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		res, err := ledger.NewReader(js, "VER").Verify(t.Context(), ledger.VerifyConfig{Chain: only, Check: check})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	verify := func(procs int, only string) ledger.VerifyResult { return verifyWith(procs, only, es.ValidateScanned) }
	one, four := verify(1, ""), verify(4, "")
	if d := cmp.Diff(one, four); d != "" {
		t.Fatalf("one goroutine and four differ (-one +four):\n%s", d)
	}
	// The schema's fast path finds what the full validator alone finds.
	if d := cmp.Diff(verifyWith(1, "", fullCheck), four); d != "" {
		t.Fatalf("the full validator alone and the fast path differ (-full +fast):\n%s", d)
	}
	if four.Chains != chains || len(four.Faults) != len(want) {
		t.Fatalf("%d chains, faults %+v", four.Chains, four.Faults)
	}
	for _, f := range four.Faults {
		w := want[f.Chain]
		if f.N != w.n || !strings.Contains(f.Reason, w.reason) {
			t.Errorf("%s: fault at %d (%s), want %d (%s)", f.Chain, f.N, f.Reason, w.n, w.reason)
		}
	}
	// Entries after a chain's fault are not counted.
	skipped := 0
	for c, w := range want {
		skipped += n[c] - int(w.n)
	}
	skipped-- // ver-08's entry 7 is not stored: its fault is at entry 8
	if four.Entries != total-skipped {
		t.Errorf("%d entries checked, want %d of %d", four.Entries, total-skipped, total)
	}
	// One chain alone.
	if res := verify(4, "ver-14"); res.Chains != 1 || len(res.Faults) != 1 || res.Faults[0].N != 5 || res.Entries != 5 {
		t.Errorf("ver-14 alone: %+v", res)
	}
	if res := verify(4, "ver-01"); res.Chains != 1 || len(res.Faults) != 0 || res.Entries != n["ver-01"] {
		t.Errorf("ver-01 alone: %+v", res)
	}
}

package rotator_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/claimcheck/claimcheck/pkg/archive"
	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/stream"
)

// hotFaults verifies every chain of the hot ledger from its anchor, as
// `claimcheck ledger verify` does, and returns the faults by chain.
func (e *env) hotFaults() map[string]string {
	e.t.Helper()
	anchors := ledger.NewAnchors(e.js)
	verifiers := map[string]*chain.Verifier{}
	out := map[string]string{}
	err := ledger.NewReader(e.js, stream.Ledger).WalkAll(e.t.Context(), func(s ledger.Stored) error {
		if out[s.Chain] != "" {
			return nil
		}
		v, ok := verifiers[s.Chain]
		if !ok {
			v = chain.NewVerifierFrom(s.Chain, anchors.StartOf(e.t.Context(), s.Chain))
			verifiers[s.Chain] = v
		}
		if err := v.Next(s.Raw); err != nil {
			var f *chain.Fault
			if !errors.As(err, &f) {
				return err
			}
			out[s.Chain] = f.Error()
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// The torture test found a chain's anchor gone after nats-server storage
// errors while the trim's purge it was written for stayed: readers then
// reported the trimmed entries missing. The next pass puts the anchor back
// from the archive, which vouches for the entry the first hot one links
// to, and only when its checkpoint verifies.
func TestLostAnchorIsPutBackFromTheArchive(t *testing.T) {
	e := newEnv(t, nil)
	e.fill(40, 3)
	if rep := e.pass(); rep.TrimmedChains == 0 {
		t.Fatalf("the pass trimmed nothing: %+v", rep)
	}
	if f := e.hotFaults(); len(f) != 0 {
		t.Fatalf("after the trim: %v", f)
	}
	kv, err := e.js.KeyValue(t.Context(), stream.BucketHeads)
	if err != nil {
		t.Fatal(err)
	}
	// The store loses s1's anchor.
	if err := kv.Purge(t.Context(), "chain.s1"); err != nil {
		t.Fatal(err)
	}
	f := e.hotFaults()
	if !strings.Contains(f["s1"], "missing") || len(f) != 1 {
		t.Fatalf("with s1's anchor lost, hot verification found %v, want s1's trimmed entries missing", f)
	}
	// While the manifests of the segments holding s1's entries are altered,
	// their checkpoints no longer vouch for them:
	// nothing is put back, readers keep reporting the gap.
	l, err := e.store.List(t.Context(), stream.Ledger)
	if err != nil {
		t.Fatal(err)
	}
	orig := map[string][]byte{}
	for _, it := range l.Segments {
		k := archive.ManifestKey(stream.Ledger, it.Name)
		raw, err := e.store.Get(t.Context(), k)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(raw), `"chain":"s1"`) {
			orig[k] = raw
			if err := e.store.Put(t.Context(), k, []byte(strings.Replace(string(raw), `"chain":"s1"`, `"chain":"s1" `, 1)), "application/json"); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(orig) == 0 {
		t.Fatal("no archived manifest names s1")
	}
	// (The clock stays: a pass that trims more of s1 writes its anchor anew.)
	e.pass()
	if f := e.hotFaults(); !strings.Contains(f["s1"], "missing") {
		t.Fatalf("an anchor was put back on an altered manifest's word: faults %v", f)
	}
	for k, raw := range orig {
		if err := e.store.Put(t.Context(), k, raw, "application/json"); err != nil {
			t.Fatal(err)
		}
	}

	e.pass()
	if f := e.hotFaults(); len(f) != 0 {
		t.Fatalf("the pass did not put s1's anchor back: %v", f)
	}
	e.app = ledger.NewAppender(e.js, ledger.AppenderConfig{})
	e.add("s1", 1)
	if f := e.hotFaults(); len(f) != 0 {
		t.Fatalf("after appending to s1: %v", f)
	}
}

package verifier_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/claimcheck/claimcheck/pkg/attest"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/services/verifier"
)

// Claims of many sessions waiting at once are answered with shared commits
// (group commit): their verdicts chained in atomic batches, their
// attestations stored in atomic batches, each still under its own
// compare-and-set. One attestation subject is already taken (as if another
// verifier had written it): the batch holding it is refused as a whole,
// split, and the rest still stored, every one once.
func TestWaitingClaimsShareCommits(t *testing.T) {
	f := newFlow(t)
	const n = 48
	type req struct {
		session, id string
		sub         *nats.Subscription
	}
	var reqs []req
	for i := range n {
		s := fmt.Sprintf("sess-group-%02d", i)
		f.prompt(s, "Fix the flaky store tests and run `go test ./...` until they pass")
		f.bash(s, "go test ./...", goTestOut)
		id, sub := f.request(s, "done", "test_pass", `{"command_substring":"go test ./..."}`)
		reqs = append(reqs, req{s, id, sub})
	}
	taken := reqs[n/2]
	takenID, err := attest.ID(taken.id)
	if err != nil {
		t.Fatal(err)
	}
	m := nats.NewMsg(subject.Attestation(taken.session, takenID))
	m.Data = []byte(`{"written":"elsewhere"}`)
	m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, "0")
	if _, err := f.js.PublishMsg(t.Context(), m); err != nil {
		t.Fatal(err)
	}

	f.metrics = prometheus.NewRegistry()
	f.verifier(func(c *verifier.Config) { c.Workers = 2 * n })
	for _, r := range reqs {
		if v := f.answer(r.sub); v.Verdict != schemas.Pass || v.RequestID != r.id {
			t.Fatalf("%s: %+v", r.session, v)
		}
	}
	set := f.keySet()
	for _, r := range reqs {
		var verdicts int
		for _, e := range f.chain(r.session) {
			if e.Kind == schemas.EntryVerdict {
				verdicts++
			}
		}
		if verdicts != 1 {
			t.Fatalf("%s: %d verdicts chained, want 1", r.session, verdicts)
		}
		atts := f.attestations(r.session)
		if len(atts) != 1 {
			t.Fatalf("%s: %d attestations, want 1", r.session, len(atts))
		}
		if r.session == taken.session {
			continue
		}
		if _, err := attest.Verify(set, atts[0], time.Time{}); err != nil {
			t.Fatalf("%s: %v", r.session, err)
		}
	}
	st, _ := f.js.Stream(t.Context(), stream.Attest)
	if info, _ := st.Info(t.Context()); info.State.Msgs != n {
		t.Fatalf("ATTEST holds %d messages, want %d", info.State.Msgs, n)
	}

	families, err := f.metrics.Gather()
	if err != nil {
		t.Fatal(err)
	}
	metric := func(name, label string) []*dto.Metric {
		for _, fam := range families {
			if fam.GetName() != name {
				continue
			}
			var out []*dto.Metric
			for _, m := range fam.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetValue() == label {
						out = append(out, m)
					}
				}
			}
			return out
		}
		return nil
	}
	var atomic float64
	for _, m := range metric("claimcheck_verifier_verdict_appends_total", "atomic") {
		atomic += m.GetCounter().GetValue()
	}
	if atomic < stream.MinAtomicBatch {
		t.Errorf("%v verdicts chained in atomic batches, want at least %d", atomic, stream.MinAtomicBatch)
	}
	for _, kind := range []string{"verdicts", "attestations"} {
		h := metric("claimcheck_verifier_commit_batch_size", kind)
		if len(h) != 1 || h[0].GetHistogram().GetSampleSum() != n || h[0].GetHistogram().GetSampleCount() >= n {
			t.Errorf("%s: commit batches %v, want %d writes in fewer commits", kind, h, n)
		}
	}
}

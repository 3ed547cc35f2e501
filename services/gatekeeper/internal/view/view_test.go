package view

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/subject"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/nats-io/nats-server/v2/server.(*Server).startGoRoutine"),
		goleak.IgnoreTopFunction("time.Sleep"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	)
}

// A Stop may cite an attestation that is in ATTEST (the verifier writes it
// before it answers PASS) but that the view, which follows ATTEST on its
// own, has not applied yet. The look-up waits for the view to
// reach the stream's end instead of calling the attestation unknown; an id
// that is not in ATTEST is still unknown, without waiting.
func TestAttestationLookupWaitsForTheProjection(t *testing.T) {
	srv := natstest.RunServer(t)
	_, js := natstest.Connect(t, srv.ClientURL())
	natstest.Bootstrap(t, js, nil)
	// This view stands for one following ATTEST that lags: the test
	// applies ATTEST's messages itself, late.
	p := New(Config{MaxTrail: 16, MaxEnvelopes: 16})
	p.js, p.followsAttest = js, true
	const attID = "01JDB3H5KX0000000000000042"
	subj := subject.Attestation("sess-a", attID)
	ack, err := js.Publish(t.Context(), subj, []byte(`{"payloadType":"x"}`))
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, ok, err := p.Attestation(ctx, attID)
	if ok || err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "seq 1") {
		t.Fatalf("before the view applied ATTEST seq 1: ok=%v err=%v; want a wait that ends with the deadline, naming the sequence", ok, err)
	}

	type result struct {
		a   Attestation
		ok  bool
		err error
	}
	done := make(chan result, 1)
	go func() {
		a, ok, err := p.Attestation(t.Context(), attID)
		done <- result{a, ok, err}
	}()
	p.applyAttestation(subj, ack.Sequence, []byte(`{"payloadType":"x"}`), time.Now())
	r := <-done
	if !r.ok || r.err != nil || r.a.Session != "sess-a" || r.a.Seq != ack.Sequence || r.a.FromStream {
		t.Fatalf("after the view applied it: %+v ok=%v err=%v", r.a, r.ok, r.err)
	}

	start := time.Now()
	if _, ok, err := p.Attestation(t.Context(), "01JDB3H5KX0000000000000043"); ok || err != nil {
		t.Fatalf("an id not in ATTEST: ok=%v err=%v, want unknown", ok, err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("an unknown id took %v with the view caught up", d)
	}

	// `claimcheck gate replay` applies one session's attestations and
	// follows nothing: another session's attestation is unknown there, at
	// once (it never catches up with the stream).
	replay := New(Config{MaxTrail: 16, MaxEnvelopes: 16})
	replay.js = js
	start = time.Now()
	rctx, rcancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer rcancel()
	if _, ok, err := replay.Attestation(rctx, attID); ok || err != nil {
		t.Fatalf("replay, an attestation it did not apply: ok=%v err=%v, want unknown", ok, err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("replay waited %v for a stream it does not follow", d)
	}
}

package stream_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
)

// A message whose compare-and-set fails refuses its whole batch; the batch
// is split until the message sits in a remainder below the minimum, which
// is handed back (batch headers removed, with the refusal) to be published
// alone; every other message is stored once, in batches.
func TestAtomicBatchesIsolateARefusedMessage(t *testing.T) {
	s := natstest.RunServer(t)
	nc, js := natstest.Connect(t, s.ClientURL())
	natstest.Bootstrap(t, js, nil)
	ctx := t.Context()
	const n, bad = 40, 29
	subj := func(i int) string { return subject.Attestation("s1", fmt.Sprintf("a%02d", i)) }
	if _, err := js.Publish(ctx, subj(bad), []byte("taken")); err != nil {
		t.Fatal(err)
	}
	msgs := make([]*nats.Msg, n)
	for i := range msgs {
		msgs[i] = nats.NewMsg(subj(i))
		msgs[i].Data = []byte("x")
		msgs[i].Header.Set(jetstream.ExpectedLastSubjSeqHeader, "0")
	}
	var stored, left []int
	var batches int
	var leftErr error
	stream.AtomicBatches(ctx, nc, msgs, 4, 32, 5*time.Second,
		func(idx []int, ack stream.AtomicAck) {
			if ack.Count != uint64(len(idx)) {
				t.Errorf("batch of %d acknowledged with count %d", len(idx), ack.Count)
			}
			batches++
			stored = append(stored, idx...)
		},
		func(idx []int, err error) {
			for _, i := range idx {
				if h := msgs[i].Header.Get("Nats-Batch-Id"); h != "" {
					t.Errorf("message %d left with batch id %s", i, h)
				}
			}
			left = append(left, idx...)
			if slices.Contains(idx, bad) {
				leftErr = err
			}
		})
	if !slices.Contains(left, bad) || slices.Contains(stored, bad) {
		t.Fatalf("the refused message %d: stored %v, left %v", bad, stored, left)
	}
	if !stream.IsWrongLastSequence(leftErr) {
		t.Fatalf("left with %v, want the server's refusal", leftErr)
	}
	if len(left) >= 8 || len(stored)+len(left) != n || batches < 2 {
		t.Fatalf("stored %d in %d batches, left %v: want all but a small remainder stored", len(stored), batches, left)
	}
	st, _ := js.Stream(ctx, stream.Attest)
	if info, _ := st.Info(ctx); info.State.Msgs != uint64(1+len(stored)) {
		t.Fatalf("ATTEST holds %d messages, want %d", info.State.Msgs, 1+len(stored))
	}
	// The remainder publishes alone: all but the taken one.
	for _, i := range left {
		_, err := js.PublishMsg(ctx, msgs[i])
		if (i == bad) != stream.IsWrongLastSequence(err) {
			t.Fatalf("message %d alone: %v", i, err)
		}
	}
}

// Below the minimum nothing is sent: the messages are handed back untried.
func TestAtomicBatchesLeaveSmallRuns(t *testing.T) {
	s := natstest.RunServer(t)
	nc, js := natstest.Connect(t, s.ClientURL())
	natstest.Bootstrap(t, js, nil)
	msgs := []*nats.Msg{nats.NewMsg(subject.Attestation("s1", "a")), nats.NewMsg(subject.Attestation("s1", "b"))}
	var left []int
	stream.AtomicBatches(t.Context(), nc, msgs, 3, 32, 5*time.Second,
		func([]int, stream.AtomicAck) { t.Error("a batch below the minimum was committed") },
		func(idx []int, err error) {
			if err != nil {
				t.Errorf("untried messages left with %v", err)
			}
			left = append(left, idx...)
		})
	if len(left) != 2 {
		t.Fatalf("left %v, want both", left)
	}
	st, _ := js.Stream(t.Context(), stream.Attest)
	if info, _ := st.Info(t.Context()); info.State.Msgs != 0 {
		t.Fatalf("ATTEST holds %d messages, want 0", info.State.Msgs)
	}
}

func TestMinAtomicBatchFor(t *testing.T) {
	for replicas, want := range map[int]int{0: stream.MinAtomicBatch, 1: stream.MinAtomicBatch, 3: 2, 5: 2} {
		if got := stream.MinAtomicBatchFor(replicas); got != want {
			t.Errorf("MinAtomicBatchFor(%d) = %d, want %d", replicas, got, want)
		}
	}
}

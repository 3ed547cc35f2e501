package stream_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
)

// BenchmarkAtomicBatch: messages/s into ATTEST (sync_interval always, R1),
// each with its own compare-and-set, one publish at a time (size=1) or in
// atomic batches of size messages. On R1 file storage the server stages
// every batch in a file store of its own, a fixed cost per batch that
// small batches do not repay.
//
// With R3 (replicas=3: three servers in this process) the server stages a
// batch in memory.
func BenchmarkAtomicBatch(b *testing.B) {
	for _, r := range []int{1, 3} {
		for _, size := range []int{1, 2, 4, 8, 16, 32, 64, 256} {
			b.Run(fmt.Sprintf("replicas=%d/size=%d", r, size), func(b *testing.B) { benchAtomicBatch(b, r, size) })
		}
	}
}

func benchAtomicBatch(b *testing.B, replicas, size int) {
	url := ""
	o := stream.DefaultOptions()
	if replicas == 1 {
		url = natstest.RunServer(b).ClientURL()
	} else {
		url = natstest.RunCluster(b, replicas)[0].ClientURL()
		o.Replicas = replicas
	}
	nc, js := natstest.Connect(b, url)
	natstest.Bootstrap(b, js, &o)
	ctx := b.Context()
	data := make([]byte, 2048)
	n := 0
	msg := func() *nats.Msg {
		n++
		m := nats.NewMsg(subject.Attestation("s1", fmt.Sprintf("a%d", n)))
		m.Data = data
		m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, "0")
		return m
	}
	b.ResetTimer()
	for done := 0; done < b.N; done += size {
		if size == 1 {
			if _, err := js.PublishMsg(ctx, msg()); err != nil {
				b.Fatal(err)
			}
			continue
		}
		msgs := make([]*nats.Msg, size)
		for i := range msgs {
			msgs[i] = msg()
		}
		if _, err := stream.PublishAtomic(ctx, nc, msgs, 10*time.Second); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

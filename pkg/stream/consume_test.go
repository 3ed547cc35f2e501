package stream_test

import (
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/stream"
)

// When the server ends a consume subscription (here "409 Consumer
// Deleted": the consumer is deleted and made again, as a cluster
// recovering its quorum can answer for one that still exists), plain
// nats.go Consume stops delivering for good; stream.Consume subscribes
// again and the messages published after it keep coming.
func TestConsumeSubscribesAgainAfterTheServerEndsIt(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprintf("kept alive %v", keep), func(t *testing.T) {
			s := natstest.RunServer(t)
			_, js := natstest.Connect(t, s.ClientURL())
			ctx := t.Context()
			st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "WORK", Subjects: []string{"work.>"}})
			if err != nil {
				t.Fatal(err)
			}
			ccfg := jetstream.ConsumerConfig{Durable: "workers", AckPolicy: jetstream.AckExplicitPolicy}
			cons, err := st.CreateConsumer(ctx, ccfg)
			if err != nil {
				t.Fatal(err)
			}
			got := make(chan string, 16)
			h := func(m jetstream.Msg) { got <- string(m.Data()); _ = m.Ack() }
			var again atomic.Int32
			if keep {
				stop, err := stream.Consume(ctx, cons, h, slog.New(slog.DiscardHandler), nil, func() { again.Add(1) },
					jetstream.PullExpiry(2*time.Second))
				if err != nil {
					t.Fatal(err)
				}
				defer stop()
			} else {
				cc, err := cons.Consume(h, jetstream.PullExpiry(2*time.Second))
				if err != nil {
					t.Fatal(err)
				}
				defer cc.Stop()
			}
			receive := func(want string, within time.Duration) error {
				select {
				case m := <-got:
					if m != want {
						return fmt.Errorf("got %q, want %q", m, want)
					}
					return nil
				case <-time.After(within):
					return fmt.Errorf("%q not delivered within %s", want, within)
				}
			}
			if _, err := js.Publish(ctx, "work.1", []byte("before")); err != nil {
				t.Fatal(err)
			}
			if err := receive("before", 5*time.Second); err != nil {
				t.Fatal(err)
			}
			if err := st.DeleteConsumer(ctx, "workers"); err != nil {
				t.Fatal(err)
			}
			time.Sleep(200 * time.Millisecond)
			ccfg.DeliverPolicy = jetstream.DeliverNewPolicy // not "before" again
			if _, err := st.CreateConsumer(ctx, ccfg); err != nil {
				t.Fatal(err)
			}
			if _, err := js.Publish(ctx, "work.2", []byte("after")); err != nil {
				t.Fatal(err)
			}
			within := 3 * time.Second
			if keep {
				within = 8 * time.Second
			}
			err = receive("after", within)
			switch {
			case keep && err != nil:
				t.Fatalf("stream.Consume: %v (subscribed again %d times)", err, again.Load())
			case keep && again.Load() == 0:
				t.Fatal("delivered without subscribing again: the server did not end the subscription, so this test shows nothing")
			case !keep && err == nil:
				t.Fatal("plain Consume delivered after the server ended its subscription: nats.go changed, and stream.Consume may be needless")
			}
		})
	}
}

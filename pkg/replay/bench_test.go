package replay

import (
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/ledger"
)

// BenchmarkReplay replays a ledger of 200 sessions (5,000 entries, 4 a
// block) whole, beside a plain read of the same stream with one ordered
// consumer: compare their ns/entry.
func BenchmarkReplay(b *testing.B) {
	f := newFixture(b)
	const sessions, rounds = 200, 25
	for m := range rounds {
		for s := range sessions {
			f.round(b, "bench-"+string(rune('a'+s%26))+string(rune('a'+s/26)), "h1", 1, m)
		}
	}
	n := sessions * rounds
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			if got := plain(b, f.js); got != n {
				b.Fatalf("%d entries", got)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/entry")
	})
	b.Run("replay", func(b *testing.B) {
		for b.Loop() {
			sum, err := Run(b.Context(), Config{JS: f.js}, func(*Record) error { return nil })
			if err != nil || sum.Emitted != n || len(sum.Faults) > 0 {
				b.Fatalf("%+v %v", sum, err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/entry")
	})
}

func plain(b *testing.B, js jetstream.JetStream) int {
	s, err := js.Stream(b.Context(), "LEDGER")
	if err != nil {
		b.Fatal(err)
	}
	info, err := s.Info(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	cons, err := s.OrderedConsumer(b.Context(), jetstream.OrderedConsumerConfig{})
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for left := info.State.Msgs; left > 0; {
		batch, err := cons.Fetch(int(min(left, 512)), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			b.Fatal(err)
		}
		for m := range batch.Messages() {
			left--
			n += len(ledger.SplitBlock(m.Data()))
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
			b.Fatal(err)
		}
	}
	return n
}

package ingest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/clock"
	"github.com/claimcheck/claimcheck/pkg/envelope"
	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/service"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/services/ingest"
)

// BenchmarkDrain measures ingest draining a pre-filled INTAKE into the ledger
// (sync_interval always). b.N events over 200 sessions.
func BenchmarkDrain(b *testing.B) {
	for _, sessions := range []int{200, 5000} {
		b.Run(fmt.Sprintf("sessions=%d", sessions), func(b *testing.B) {
			s := natstest.RunServer(b)
			nc, js := natstest.Connect(b, s.ClientURL())
			cfg := ingest.DefaultConfig()
			natstest.Bootstrap(b, js, &cfg.Streams)
			gen := id.NewGenerator(clock.Real{}, nil)
			src := envelope.Source{Host: "h", AgentType: "claude-code", AgentID: "a"}
			n := max(b.N, 1000)
			for i := range n {
				sess := fmt.Sprintf("s-%05d", i%sessions)
				eid, _ := gen.New()
				p := fmt.Sprintf(`{"session_id":%q,"transcript_path":"/home/u/.claude/projects/p/%s.jsonl","cwd":"/home/u/p","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"go test ./...","description":"Run tests"},"tool_response":{"stdout":"ok  \tgithub.com/acme/app/internal/x\t0.0%ds\nok  \tgithub.com/acme/app/cmd\t0.02s\n","stderr":"","interrupted":false,"isImage":false},"tool_use_id":"toolu_%d"}`, sess, sess, i%10, i)
				env, _ := envelope.Event(eid, sess, "PostToolUse", uint64(i), time.Now(), src, []byte(p))
				m := nats.NewMsg(subject.Intake(subject.OriginHook, "h", sess, "PostToolUse"))
				m.Data = env
				m.Header.Set(jetstream.MsgIDHeader, eid)
				if _, err := js.PublishMsgAsync(m); err != nil {
					b.Fatal(err)
				}
				if i%1000 == 999 {
					<-js.PublishAsyncComplete()
				}
			}
			<-js.PublishAsyncComplete()
			svc, err := ingest.New(cfg, service.Settings{Conn: nc})
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			b.ResetTimer()
			defer natstest.ProfileFromEnv(b)()
			start := time.Now()
			go func() { done <- svc.Run(ctx) }()
			waitDrained(b, js, cfg.Streams.Partitions)
			el := time.Since(start)
			b.StopTimer()
			cancel()
			if err := <-done; err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(n)/el.Seconds(), "events/s")
		})
	}
}

// waitDrained waits until every intake partition consumer has acknowledged
// everything.
func waitDrained(tb testing.TB, js jetstream.JetStream, partitions int) {
	tb.Helper()
	ctx := context.Background()
	for p := 0; p < partitions; {
		c, err := js.Consumer(ctx, stream.Intake, ingest.ConsumerName(p))
		if err == nil {
			var info *jetstream.ConsumerInfo
			if info, err = c.Info(ctx); err == nil && info.NumPending == 0 && info.NumAckPending == 0 {
				p++
				continue
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
}

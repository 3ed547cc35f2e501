package verifier_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/services/verifier"
)

// BenchmarkPreQueued: attestations/s of one in-process verifier draining
// b.N pre-queued test_pass claims, one per session (each session's prompt,
// contract and passing go test run chained first), against the in-process
// server (sync_interval always). The server's CPU is in the same process.
// Workers: the verifier's workers (group commit gathers up to that many
// verdicts and attestations per commit). CC_PROF=file profiles the drain.
func BenchmarkPreQueued(b *testing.B) {
	for _, workers := range []int{4, 128} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			f := newFlow(b)
			for i := range b.N {
				s := fmt.Sprintf("s%05d", i)
				f.prompt(s, "Fix the flaky store tests and run `go test ./...` until they pass")
				f.bash(s, "go test ./...", goTestOut)
				f.request(s, "done", "test_pass", `{"command_substring":"go test ./..."}`)
			}
			att, err := f.js.Stream(b.Context(), stream.Attest)
			if err != nil {
				b.Fatal(err)
			}
			defer natstest.ProfileFromEnv(b)()
			b.ResetTimer()
			f.verifier(func(c *verifier.Config) { c.Workers = workers })
			deadline := time.Now().Add(5 * time.Minute)
			for {
				info, err := att.Info(b.Context())
				if err != nil {
					b.Fatal(err)
				}
				if info.State.Msgs >= uint64(b.N) {
					break
				}
				if time.Now().After(deadline) {
					b.Fatalf("%d of %d attestations after 5 minutes", info.State.Msgs, b.N)
				}
				time.Sleep(5 * time.Millisecond)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "attestations/s")
		})
	}
}

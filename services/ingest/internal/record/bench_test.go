package record

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/claimcheck/claimcheck/pkg/chain"
)

// BenchmarkBuildSizes: building and sealing one event's entry by payload
// size (a Bash PostToolUse with 0, 10 and 80 lines of output): the cost of
// ingest per event outside NATS, which grows with the payload (secret
// scanning prefilters, canonical JSON).
func BenchmarkBuildSizes(b *testing.B) {
	bl := builder(b)
	for _, n := range []int{0, 10, 80} {
		out := strings.Repeat(`=== RUN   TestStore\n--- PASS: TestStore (0.01s)\n`, n)
		raw := fmt.Sprintf(`{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"go test -v ./..."},"tool_response":{"stdout":"%s","stderr":""},"tool_use_id":"toolu_1"}`, out)
		data := event(b, raw)
		b.Run(fmt.Sprint(len(raw)), func(b *testing.B) {
			for b.Loop() {
				r := bl.Build(Input{Subject: intakeSubject("s1"), Seq: 1, Time: time.Now(), Data: data, Now: time.Now()})
				if _, err := chain.Seal(r.Entry); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

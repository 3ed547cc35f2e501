package gatekeeper_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
)

// benignPage is about size bytes of documentation that talks about prompts,
// agents and instructions (many of the scanner's anchors), and injects
// nothing.
func benignPage(size int) string {
	para := "## Configuring the agent\n\nThe assistant reads the system prompt from `prompts/system.md`; follow the instructions " +
		"in CONTRIBUTING.md before you change it. Previous versions ignored the `rules` key; see the changelog. " +
		"An AI agent running in CI should use `--no-input`. Encoded examples: `aGVsbG8gd29ybGQ=` is \"hello world\".\n\n"
	var b strings.Builder
	for b.Len() < size {
		b.WriteString(para)
	}
	return b.String()[:size]
}

// BenchmarkHandle times gatekeeper.Service.Handle in-service (decode, read
// the levels, decide, sign, hand the record to JetStream): a PreToolUse,
// and a PostToolUse of a 64 KiB WebFetch result (inspection included: the
// injection scan and the secret scan). It reports the p50 and p99 of the
// calls, and the process's CPU time per call (cpu-ns/op: the embedded
// NATS server's work included), which a loaded machine inflates far less
// than the wall clock.
func BenchmarkHandle(b *testing.B) {
	f := newFlow(b, nil)
	tok, _ := id.HostToken("laptop")
	for _, bc := range []struct {
		name, kind, event, tool, input, response string
	}{
		{"pretool", subject.GatePreTool, schemas.HookPreToolUse, "Bash", `{"command":"go test ./...","description":"test"}`, ""},
		{"posttool-64KiB", subject.GatePostTool, schemas.HookPostToolUse, "WebFetch", webFetchInput, webFetchResult(benignPage(64 << 10))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			payload := claude(b, bc.event, "sess-bench", bc.tool, "toolu_01Bench", bc.input, bc.response)
			var took []time.Duration
			n := 0
			cpu := cpuTime()
			for b.Loop() {
				n++
				req := schemas.GateRequest{V: 1, Nonce: fmt.Sprintf("nonce-bench-%012d", n), EventID: fmt.Sprintf("ev-%d", n),
					SessionID: "sess-bench", HookEvent: bc.event, Host: "laptop", Payload: jsontext.Value(payload)}
				raw, _ := json.Marshal(req)
				start := time.Now()
				if _, err := f.svc.Handle(b.Context(), subject.Gate(tok, bc.kind), raw); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
			}
			if d := cpuTime() - cpu; cpu > 0 && n > 0 {
				b.ReportMetric(float64(d.Nanoseconds())/float64(n), "cpu-ns/op")
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}

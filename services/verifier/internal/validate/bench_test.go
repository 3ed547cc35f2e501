package validate

import (
	"fmt"
	"testing"

	"github.com/claimcheck/claimcheck/schemas"
)

// BenchmarkEvaluateLongSession judges one test_pass claim at the end of a
// session with many shell commands, the way the verifier judges every
// claim of a session from its cached view: the ledger is decoded once and
// each claim is evaluated over the whole prefix.
func BenchmarkEvaluateLongSession(b *testing.B) {
	// With a contract path, every shell command is also asked what it
	// writes (shell edits make passes stale).
	prompts := map[string]string{
		"":         "Fix the flaky store tests and run `go test ./...` until they pass",
		",paths=1": "Fix the flaky tests in `store/store_test.go` and run `go test ./...` until they pass",
	}
	for _, runs := range []int{100, 1000} {
		for _, variant := range []string{"", ",paths=1"} {
			b.Run(fmt.Sprintf("bash=%d%s", runs, variant), func(b *testing.B) {
				benchLongSession(b, prompts[variant], runs)
			})
		}
	}
}

func benchLongSession(b *testing.B, prompt string, runs int) {
	{
		{
			var l ledger
			l.prompt(prompt)
			for i := range runs {
				l.bash(fmt.Sprintf("cd /work/app && grep -rn 'func Test%d' ./store | head -20", i), "store_test.go:12: func TestX")
			}
			l.bash("go test ./...", "ok  \tgithub.com/acme/app/store\t0.412s\n")
			p := defaultPolicy(b)
			c := claim("done", "test_pass", map[string]any{"command_substring": "go test ./..."})
			// Warm: what a cached view has done once.
			if r := Evaluate(Input{Entries: l.entries, Claim: c, Policy: p}); r.Verdict != schemas.Pass {
				b.Fatalf("verdict %+v", r)
			}
			for b.Loop() {
				Evaluate(Input{Entries: l.entries, Claim: c, Policy: p})
			}
		}
	}
}

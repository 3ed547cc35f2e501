package scrub

// BenchmarkScrub compares scrubbing a hook event with scrubbing a gate
// decision record, and shows what a keyword like "key" costs: it sends the
// text through the generic-api-key expression.

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

const hookEv = `{"session_id":"00893aaf-19fa-41d2-8238-13269b9b3ca0","transcript_path":"/home/user/.claude/projects/p/00893aaf-19fa-41d2-8238-13269b9b3ca0.jsonl","cwd":"/home/user/my-project","permission_mode":"default","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"go test ./...","description":"Run tests"},"tool_response":{"stdout":"ok  \tgithub.com/acme/app/internal/store\t0.412s\nok  \tgithub.com/acme/app/cmd\t0.020s\n","stderr":"","interrupted":false,"isImage":false},"tool_use_id":"toolu_01ABC123","duration_ms":1840}`

const gateRec = `{"decision":{"decision":"deny","decision_id":"01KAB0000000000000000000AA","expires_at":"2026-11-23T12:00:30.123456789Z","gatekeeper":"host-123","hook_event_name":"PreToolUse","issued_at":"2026-11-23T12:00:00.123456789Z","ledger_head":{"hash":"sha256:62a3b1f0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2","n":41},"nonce":"9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c","policy":{"digest":"sha256:a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90","version":"2026-12-01.2"},"reason":"rm -rf / would delete the root file system","rule":"shell.destructive.rm_root","session_id":"00893aaf-19fa-41d2-8238-13269b9b3ca0","source":"gatekeeper","v":1},"hook_event_name":"GateDecision","session_id":"00893aaf-19fa-41d2-8238-13269b9b3ca0","signed":{"payload_sha256":"0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0","payload_type":"application/vnd.claimcheck.gate-decision.v1+json","signatures":[{"signer":"v1","sig":"MEUCIQD3k9vJ2h1lq8Zp0x7Yw4n6b5c3d2e1f0a9b8c7d6e5f4a3IgB2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7"}]}}`

func BenchmarkScrub(b *testing.B) {
	s, err := New()
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, p string }{{"hook", hookEv}, {"gaterec", gateRec},
		{"sig", `{"sig":"MEUCIQD3k9vJ2h1lq8Zp0x7Yw4n6b5c3d2e1f0a9b8c7d6e5f4a3IgB2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7"}`},
		{"hex", `{"payload_sha256":"0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"}`},
		{"digest", `{"digest":"sha256:a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"}`},
		{"ts", `{"expires_at":"2026-11-23T12:00:30.123456789Z","issued_at":"2026-11-23T12:00:00.123456789Z"}`},
		{"nonce", `{"nonce":"9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c"}`},
		{"reason", `{"reason":"rm -rf / would delete the root file system","rule":"shell.destructive.rm_root"}`},
		{"ptype", `{"payload_type":"application/vnd.claimcheck.gate-decision.v1+json"}`},
		{"gaterec-keyid", strings.Replace(gateRec, "signer", "keyid", 1)},
		{"hookkey", strings.Replace(hookEv, "Run tests", "Run tests key", 1)},
		{"ids", `{"decision_id":"01KAB0000000000000000000AA","session_id":"00893aaf-19fa-41d2-8238-13269b9b3ca0"}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, _, err := s.JSON([]byte(c.p)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkScrubToolOutput: a 4 KB tool output, plain and with one common
// keyword of generic-api-key in it; a 4 KB verbose curl output (its
// keyword "curl" wakes curl-auth-header and curl-auth-user, which run
// only when the text holds what they require: "ungated" runs them on
// every text that holds "curl", as gitleaks does).
func BenchmarkScrubToolOutput(b *testing.B) {
	s, err := New()
	if err != nil {
		b.Fatal(err)
	}
	ungated := *s
	ungated.gated = slices.Clone(s.gated)
	for i := range ungated.gated {
		ungated.gated[i].req = nil // a requirement of no clauses always holds
	}
	out := strings.Repeat(`ok  \tgithub.com/acme/app/internal/store\t0.412s\n`, 80)
	curl := `*   Trying 93.184.215.14:443...\n> GET /v1/builds HTTP/1.1\n> User-Agent: curl/8.5.0\n< HTTP/1.1 200 OK\n` +
		strings.Repeat(`  {\"id\": 4821, \"name\": \"build-4821\", \"status\": \"passed\"},\n`, 56)
	for _, c := range []struct {
		name, text string
		s          *Scrubber
	}{{"plain", out, s}, {"with-keyword", out + `refreshed the session token\n`, s}, {"curl", curl, s}, {"curl-ungated", curl, &ungated}} {
		p := []byte(`{"tool_response":{"stdout":"` + c.text + `"}}`)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(p)))
			for b.Loop() {
				if _, _, err := c.s.JSON(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkScrubPathological scrubs the hostile inputs of
// TestPathologicalInputIsBounded and, as the baseline of the same run, a
// plain tool output of the same size: the ratio of their ns/op is the cost
// of the hostility.
func BenchmarkScrubPathological(b *testing.B) {
	s, err := New()
	if err != nil {
		b.Fatal(err)
	}
	plain := strings.Repeat("ok  \tgithub.com/acme/app/internal/store\t0.412s\n", (256<<10)/48)
	cases := map[string]string{"plain": plain}
	for name, body := range pathological {
		cases[name] = body
	}
	for _, name := range slices.Sorted(maps.Keys(cases)) {
		p := []byte(`{"x":` + strconv.Quote(cases[name]) + `}`)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(p)))
			for b.Loop() {
				if _, _, err := s.JSON(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSecrets64KB times Secrets over the 64 KiB texts of
// pkg/inject's BenchmarkScan64KB (the post-tool firewall scans a result
// with both): "dense", its benign corpus (which holds a JWT and a base64
// value generic-api-key takes for a secret), and "source", Go source; and
// "page", the documentation paragraph services/gatekeeper's BenchmarkHandle
// repeats; with "baseline" (strings.ToLower and one strings.Index over the
// dense text) to read the figures against. Beside ns/op it reports the process's CPU
// time per scan (cpu-ns/op), which a loaded machine inflates far less.
func BenchmarkSecrets64KB(b *testing.B) {
	s, err := New()
	if err != nil {
		b.Fatal(err)
	}
	source, err := filepath.Glob("../inject/*.go")
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		files []string
	}{
		{"dense", []string{"../inject/testdata/corpus/benign_files.txt", "../inject/testdata/corpus/benign_remote.txt"}},
		{"source", source},
		{"page", source},
	} {
		var text strings.Builder
		for text.Len() < 64<<10 {
			for _, f := range c.files {
				t, err := os.ReadFile(f)
				if err != nil {
					b.Fatal(err)
				}
				text.Write(t)
			}
		}
		txt := text.String()[:64<<10]
		if c.name == "page" {
			txt = strings.Repeat(benchPage, 64<<10/len(benchPage)+1)[:64<<10]
		}
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(txt)))
			cpu := cpuTime()
			for b.Loop() {
				s.Secrets(txt)
			}
			reportCPU(b, cpu)
		})
		if c.name == "dense" {
			b.Run("baseline", func(b *testing.B) {
				b.SetBytes(int64(len(txt)))
				cpu := cpuTime()
				for b.Loop() {
					if strings.Index(strings.ToLower(txt), "ignore previous instructions") == 0 {
						b.Fatal("the dense text starts with an injection")
					}
				}
				reportCPU(b, cpu)
			})
		}
	}
}

// benchPage is services/gatekeeper's benignPage paragraph.
const benchPage = "## Configuring the agent\n\nThe assistant reads the system prompt from `prompts/system.md`; follow the instructions " +
	"in CONTRIBUTING.md before you change it. Previous versions ignored the `rules` key; see the changelog. " +
	"An AI agent running in CI should use `--no-input`. Encoded examples: `aGVsbG8gd29ybGQ=` is \"hello world\".\n\n"

func reportCPU(b *testing.B, cpu time.Duration) {
	if d := cpuTime() - cpu; cpu > 0 && b.N > 0 {
		b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

package main

// Hook payloads for the ingest table. The fixed hookPayload holds none of
// the keywords of gitleaks' generic-api-key rule, which ingest's scrubber
// runs in windows around each of them; real tool outputs often hold such
// words, so the realistic workload mixes in outputs of the sizes and words
// real sessions produce (pkg/scrub
// BenchmarkScrubToolOutput shows what one keyword costs).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// genericKeywords are the keywords of gitleaks' generic-api-key rule
// (config/gitleaks.toml, v8.30.1). They match case-insensitively inside
// words too ("Author" holds "auth").
var genericKeywords = []string{"access", "api", "auth", "key", "credential", "creds", "passwd", "password", "secret", "token"}

// payloadSeed makes the realistic workload the same bytes on every run.
const payloadSeed = 20261123

// benchSession is event i's session id.
func benchSession(i, sessions int) string { return fmt.Sprintf("bench-%05d", i%sessions) }

// fixedPayloads: hookPayload for every event, with its session's id.
func fixedPayloads(n, sessions int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte(strings.Replace(hookPayload, "00893aaf-19fa-41d2-8238-13269b9b3ca0", benchSession(i, sessions), 2))
	}
	return out
}

// realisticPayloads: one event in two (drawn from a seeded generator)
// is a Bash PostToolUse with 1–4 KB of go test, git, grep or curl output,
// and one in two of those mentions a generic-api-key keyword in ordinary
// lines (`token refreshed`, `export API_URL=https://api.example.com`); no
// line holds a secret. The other events are the fixed hookPayload.
func realisticPayloads(n, sessions int) [][]byte {
	r := rand.New(rand.NewPCG(payloadSeed, 1))
	fixed := fixedPayloads(n, sessions)
	out := make([][]byte, n)
	for i := range out {
		if r.IntN(2) == 0 {
			out[i] = fixed[i]
			continue
		}
		k := toolKinds[r.IntN(len(toolKinds))]
		out[i] = bashEvent(r, benchSession(i, sessions), k, toolOutput(r, k, 1024+r.IntN(3073), r.IntN(2) == 0))
	}
	return out
}

// toolKind is one kind of Bash command and the lines of its output.
type toolKind struct {
	command, description string
	head                 []string
	line                 func(r *rand.Rand) string // an ordinary line with no keyword
	keyword              []string                  // ordinary lines that mention a keyword
}

// toolOutput builds about size bytes of k's output; withKeyword puts one
// to three of k's keyword lines among them.
func toolOutput(r *rand.Rand, k toolKind, size int, withKeyword bool) string {
	lines := append([]string(nil), k.head...)
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	for n < size {
		l := k.line(r)
		lines = append(lines, l)
		n += len(l) + 1
	}
	if withKeyword {
		for range 1 + r.IntN(3) {
			at := len(k.head) + r.IntN(len(lines)-len(k.head)+1)
			lines = slices.Insert(lines, at, pick(r, k.keyword))
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// bashEvent is a PostToolUse payload shaped like hookPayload.
func bashEvent(r *rand.Rand, sess string, k toolKind, stdout string) []byte {
	type input struct {
		Command     string `json:"command"`
		Description string `json:"description"`
	}
	type response struct {
		Stdout      string `json:"stdout"`
		Stderr      string `json:"stderr"`
		Interrupted bool   `json:"interrupted"`
		IsImage     bool   `json:"isImage"`
	}
	ev := struct {
		SessionID      string   `json:"session_id"`
		TranscriptPath string   `json:"transcript_path"`
		Cwd            string   `json:"cwd"`
		PermissionMode string   `json:"permission_mode"`
		HookEventName  string   `json:"hook_event_name"`
		ToolName       string   `json:"tool_name"`
		ToolInput      input    `json:"tool_input"`
		ToolResponse   response `json:"tool_response"`
		ToolUseID      string   `json:"tool_use_id"`
		DurationMS     int      `json:"duration_ms"`
	}{
		SessionID: sess, TranscriptPath: "/home/user/.claude/projects/p/" + sess + ".jsonl", Cwd: "/home/user/my-project",
		PermissionMode: "default", HookEventName: "PostToolUse", ToolName: "Bash",
		ToolInput:    input{Command: k.command, Description: k.description},
		ToolResponse: response{Stdout: stdout},
		ToolUseID:    fmt.Sprintf("toolu_01%016X", r.Uint64()), DurationMS: 20 + r.IntN(9000),
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // as Claude Code writes it: < and > as they are
	_ = enc.Encode(ev)       // strings, ints and bools only
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

var (
	pkgs  = []string{"store", "queue", "ledger", "render", "config", "cache", "router", "server", "index", "report", "worker", "batch"}
	nouns = []string{"Store", "Queue", "Ledger", "Render", "Config", "Cache", "Router", "Server", "Index", "Report", "Worker",
		"Batch", "Segment", "Table"}
	verbs = []string{"Put", "Get", "Drain", "Compact", "Open", "Close", "Retry", "Flush", "Merge", "Split",
		"Parse", "Load", "Sort", "Limit"}
	subjects = []string{"compact segments on open", "retry a failed flush once", "sort rows before the merge",
		"drop the unused cache field",
		"log the batch size", "fix a flaky drain test", "bump the go version", "split the render step", "close files on error",
		"limit open segments to 64", "name the worker pool", "report the queue depth", "move the index under internal"}
	logMsgs = []string{"wrote 128 rows in 3 segments", "retrying after 50ms", "cache hit ratio 0.92", "compacted 4 segments into 1",
		"queue depth 17, draining", "opened /tmp/TestStore123/001", "server listening on 127.0.0.1:41873", "render took 3.2ms"}
)

func pick(r *rand.Rand, s []string) string { return s[r.IntN(len(s))] }

func hexID(r *rand.Rand, n int) string { return fmt.Sprintf("%016x", r.Uint64())[:n] }

var toolKinds = []toolKind{
	{
		command: "go test -v ./...", description: "Run the tests verbosely",
		line: func(r *rand.Rand) string {
			name := "Test" + pick(r, nouns) + pick(r, verbs)
			switch r.IntN(4) {
			case 0:
				return "=== RUN   " + name
			case 1:
				return fmt.Sprintf("--- PASS: %s (%.2fs)", name, r.Float64()/4)
			case 2:
				return fmt.Sprintf("    %s_test.go:%d: %s", pick(r, pkgs), 10+r.IntN(400), pick(r, logMsgs))
			default:
				return fmt.Sprintf("ok  \tgithub.com/acme/app/internal/%s\t%.3fs", pick(r, pkgs), r.Float64())
			}
		},
		keyword: []string{"=== RUN   TestTokenRefresh", "--- PASS: TestTokenRefresh (0.01s)",
			"    client_test.go:88: token refreshed, expires in 3600s",
			"--- PASS: TestAuthMiddleware/expired_session (0.00s)", "    server_test.go:57: auth: ok", "--- PASS: TestAPIRoutes (0.03s)",
			"    cache_test.go:31: key not found in cache, recomputing"},
	},
	{
		command: "git log --oneline -n 80", description: "Show recent commits",
		line: func(r *rand.Rand) string { return hexID(r, 7) + " " + pick(r, pkgs) + ": " + pick(r, subjects) },
		keyword: []string{"5d0b9e1 client: refresh the token before it expires", "9e1d4b2 auth: return 401 on an expired session",
			"c2f7a83 docs: how CI gets its credentials", "a41c2e7 config: read api_version from the file", "e03b6d5 cache: evict by key prefix"},
	},
	{
		command: `grep -rn "func New" --include=*.go .`, description: "Find constructors",
		line: func(r *rand.Rand) string {
			p := pick(r, pkgs)
			return fmt.Sprintf("./internal/%s/%s.go:%d:func New%s(cfg Config) (*%s, error) {", p, p, 10+r.IntN(300),
				pick(r, nouns), pick(r, nouns))
		},
		keyword: []string{"./deploy/dev.env:3:export API_URL=https://api.example.com",
			"./internal/session/refresh.go:41:\t// token refreshed here, see below",
			"./internal/server/server.go:77:\tlog.Info(\"auth: ok\")", "./docs/setup.md:12:Ask an admin for access to the staging cluster.",
			"./internal/cache/cache.go:23:func NewKeyed(size int) *Keyed {"},
	},
	{
		command: "curl -sv https://status.example.com/v1/builds", description: "Check the build status",
		head: []string{"*   Trying 93.184.215.14:443...", "* Connected to status.example.com (93.184.215.14) port 443",
			"> GET /v1/builds HTTP/1.1",
			"> Host: status.example.com", "> User-Agent: curl/8.5.0", "> Accept: */*", ">", "< HTTP/1.1 200 OK", "< content-type: application/json",
			"< date: Mon, 23 Nov 2026 12:00:00 GMT", "<", `{"builds": [`},
		line: func(r *rand.Rand) string {
			n := 1000 + r.IntN(9000)
			return fmt.Sprintf(`  {"id": %d, "name": "build-%d", "branch": "%s", "status": "%s", "duration_ms": %d},`, n, n, pick(r, pkgs),
				pick(r, []string{"passed", "failed", "running"}), r.IntN(90000))
		},
		keyword: []string{"< access-control-allow-origin: *", `  {"check": "auth", "status": "ok"},`, `  {"note": "token refreshed"},`,
			`  {"api_version": "2026-06-01"},`},
	},
}

// payloadMix describes a workload's payloads for the table's notes.
type payloadMix struct {
	meanBytes   float64
	large       float64 // share over 1 KB (those with a tool output)
	withKeyword float64 // share holding a generic-api-key keyword
}

func mixOf(ps [][]byte) payloadMix {
	var m payloadMix
	for _, p := range ps {
		m.meanBytes += float64(len(p))
		if len(p) > 1024 {
			m.large++
		}
		l := bytes.ToLower(p)
		for _, k := range genericKeywords {
			if bytes.Contains(l, []byte(k)) {
				m.withKeyword++
				break
			}
		}
	}
	n := float64(max(1, len(ps)))
	return payloadMix{meanBytes: m.meanBytes / n, large: m.large / n, withKeyword: m.withKeyword / n}
}

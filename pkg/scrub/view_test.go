package scrub

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// secretLine builds one line of tool output that holds a secret in one of
// the contexts tools print them in.
func secretLine(r *rand.Rand) string {
	const generic = "Zk3pQ9vX2mL7nR4tW8yB1cF6"
	secrets := []string{awsKey, ghToken, slackTok, "sk_live_x1V9rK3sQ7bT2mN8pL4wZ6cY0", "glpat-x1V9rK3sQ7bT2mN8pL4w", generic}
	sec := secrets[r.IntN(len(secrets))]
	forms := []string{
		"%s", "KEY=%s", `KEY="%s"`, "export TOKEN='%s'", `{"api_key": "%s"}`, `api_key: %s`, "\t%s\t",
		`curl -sS -H "Authorization: Bearer %s" https://api.example.com`, `curl -H 'X-Api-Key: %s' https://x.example.com`,
		`curl -u "deploy:%s" https://example.com`, `curl --user deploy:%s https://example.com`, `password = "%s";`,
	}
	return strings.ReplaceAll(forms[r.IntN(len(forms))], "%s", sec)
}

// outputDoc is a tool output of a few lines, some holding secrets, some
// generic-api-key bait, some noise.
func outputDoc(r *rand.Rand) string {
	noise := []string{"ok  \tgithub.com/acme/app\t0.412s", "=== RUN   TestTokenRefresh", "* Connected to status.example.com (93.184.215.14) port 443",
		"> User-Agent: curl/8.5.0", "< HTTP/1.1 200 OK", `  {"id": 4821, "status": "passed"},`, "curl -sv https://status.example.com/v1/builds", "", "é ü 😀"}
	var lines []string
	for range 1 + r.IntN(8) {
		switch r.IntN(3) {
		case 0:
			lines = append(lines, secretLine(r))
		case 1:
			lines = append(lines, unescapeFragment(genericDoc(r)))
		default:
			lines = append(lines, noise[r.IntN(len(noise))])
		}
	}
	return strings.Join(lines, []string{"\n", "\r\n", "\n\n"}[r.IntN(3)])
}

// checkScrubbed: whatever gitleaks finds scanning the raw JSON text or its
// decoded view is gone from the scrubbed document.
func checkScrubbed(t *testing.T, s *Scrubber, full func(string) map[string]bool, raw string) int {
	t.Helper()
	out, _, err := s.JSON([]byte(raw))
	if err != nil {
		t.Fatalf("%v\n%s", err, raw)
	}
	if !jsontext.Value(out).IsValid() {
		t.Fatalf("scrubbed output is not valid JSON: %s", out)
	}
	left := View(out)
	n := 0
	for _, scan := range []string{raw, View([]byte(raw))} {
		for sec := range full(scan) {
			n++
			if strings.Contains(left, unescapeFragment(sec)) {
				t.Fatalf("a plain gitleaks scan finds %q; it survived scrubbing\nin:  %s\nout: %s", sec, raw, out)
			}
		}
	}
	return n
}

func wrapOutput(t testing.TB, stdout string) string {
	b, err := jsontext.AppendQuote(nil, stdout)
	if err != nil {
		t.Fatal(err)
	}
	return `{"session_id":"s1","hook_event_name":"PostToolUse","tool_input":{"command":"make"},"tool_response":{"stdout":` + string(b) + `,"stderr":""}}`
}

// Scrubbing finds at least what gitleaks finds over the raw JSON text (as
// before View) and over the decoded view: with the keyword windows, the
// gated rules and View together, nothing either plain scan finds remains.
func TestScrubbingCoversRawAndDecodedScans(t *testing.T) {
	s := newScrubber(t)
	full := fullScan(t)
	r := rand.New(rand.NewPCG(5, 6))
	found := 0
	for range 150 { // FuzzScrubbedLeavesNoSecret explores further
		found += checkScrubbed(t, s, full, wrapOutput(t, outputDoc(r)))
	}
	if found < 300 {
		t.Fatalf("the generated documents hold only %d secrets: the test does not exercise the rules", found)
	}
	t.Logf("%d secrets found by plain scans, none left after scrubbing", found)
}

func FuzzScrubbedLeavesNoSecret(f *testing.F) {
	s := newScrubber(f)
	full := fullScan(f)
	r := rand.New(rand.NewPCG(7, 8))
	for range 20 {
		f.Add(outputDoc(r))
	}
	f.Add("curl -H \"Authorization: Bearer Zk3pQ9vX2mL7nR4tW8yB1cF6\" https://x\n" + awsKey)
	f.Fuzz(func(t *testing.T, stdout string) {
		if !utf8.ValidString(stdout) {
			t.Skip() // hook payloads are checked to be UTF-8 before they are scrubbed
		}
		checkScrubbed(t, s, full, wrapOutput(t, stdout))
	})
}

func TestView(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{"a":"plain"}`, `{"a":"plain"}`},
		{`{"a":"l1\nl2\tx\r"}`, "{\"a\":\"l1\nl2\tx\r\"}"},
		{`{"a":"say \"hi\" \\n \/"}`, `{"a":"say "hi" \n /"}`},
		{`{"a":"\u00e9\ud83d\ude00\u0041"}`, `{"a":"é😀A"}`},
		{`{"a":"\ud83d lone"}`, `{"a":"\ud83d lone"}`}, // a lone surrogate stays as written
		{`\`, `\`},
	} {
		if got := View([]byte(tt.in)); got != tt.want {
			t.Errorf("View(%s) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

package scrub

import (
	"bytes"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// Test secrets: random-looking values in the shape of real credentials (not
// the vendors' documented EXAMPLE keys, which gitleaks deliberately ignores).
const (
	awsKey   = "AKIAQYLPMN5HHHFPZAM2"
	ghToken  = "ghp_x1V9rK3sQ7bT2mN8pL4wZ6cY0dF5gH1jK9aB"
	slackTok = "xoxb-1234567890123-1234567890123-aBcDeFgHiJkLmNoPqRsTuVwX"
)

var pemKey = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxKLxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo9z+40RQzuVaE8AkAFmxZzow3x+VJYKdjykkJ0iT9wCS0DRTXu269V264Vf/3jvredZiKRkgwlL9xNAwxXFg0x/XFw005UWVRIkdgcKWTjpBP2dPwVZ4WWC+9aGVd+Gyn1o0CLelf4rEjGoXbAAEgAqeGUxrcIlbjXfbcmwIDAQABAoIBAQCDoWb6UwV2UHELlTkUkUqnxpPy\n-----END RSA PRIVATE KEY-----"

func newScrubber(t testing.TB) *Scrubber {
	t.Helper()
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustQuote(t *testing.T, s string) string {
	b, err := jsontext.AppendQuote(nil, s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestJSONRedactsSecretsInToolOutput(t *testing.T) {
	s := newScrubber(t)
	stdout := "export AWS_ACCESS_KEY_ID=" + awsKey + "\ngit remote set-url origin https://" + ghToken + "@github.com/acme/app\n" + pemKey + "\nSLACK=" + slackTok + "\nok\n"
	raw := `{"session_id":"s1", "hook_event_name":"PostToolUse","tool_name":"Bash",` + "\n" +
		`  "tool_input":{"command":"env | grep KEY"},"tool_response":{"stdout":` + mustQuote(t, stdout) + `,"stderr":"","interrupted":false},"n":1.50}`
	out, reds, err := s.JSON([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{awsKey, ghToken, "MIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7", slackTok} {
		if bytes.Contains(out, []byte(secret)) {
			t.Errorf("secret %.12s… survived scrubbing", secret)
		}
	}
	if !jsontext.Value(out).IsValid() {
		t.Fatalf("scrubbed output is not valid JSON: %s", out)
	}
	rules := map[string]bool{}
	for _, r := range reds {
		rules[r.Rule] = true
		if !strings.HasPrefix(r.Digest, "sha256:") {
			t.Errorf("redaction digest %q", r.Digest)
		}
	}
	for _, want := range []string{"aws-access-token", "github-pat", "private-key", "slack-bot-token"} {
		if !rules[want] {
			t.Errorf("no redaction by rule %s (got %v)", want, rules)
		}
	}
	// Everything outside the rewritten string is byte-identical, whitespace and
	// number spelling included.
	if !bytes.HasPrefix(out, []byte(`{"session_id":"s1", "hook_event_name":"PostToolUse","tool_name":"Bash",`+"\n"+`  "tool_input":{"command":"env | grep KEY"},"tool_response":{"stdout":"export AWS_ACCESS_KEY_ID=[REDACTED:`)) {
		t.Errorf("prefix changed: %s", out[:160])
	}
	if !bytes.HasSuffix(out, []byte(`\nok\n","stderr":"","interrupted":false},"n":1.50}`)) {
		t.Errorf("suffix changed: %s", out[len(out)-80:])
	}
}

func TestJSONLeavesCleanPayloadUntouched(t *testing.T) {
	s := newScrubber(t)
	raw := []byte(`{"session_id":"s1","hook_event_name":"PostToolUse","tool_input":{"command":"go test ./..."},"tool_response":{"stdout":"ok  \tgithub.com/acme/app\t0.012s\n"}}`)
	out, reds, err := s.JSON(raw)
	if err != nil || len(reds) != 0 || !bytes.Equal(out, raw) {
		t.Fatalf("clean payload changed: %s %v %v", out, reds, err)
	}
}

func TestGitleaksAllowCommentDoesNotExemptAgentOutput(t *testing.T) {
	s := newScrubber(t)
	raw := []byte(`{"x":"token=` + ghToken + ` # gitleaks:allow"}`)
	out, reds, err := s.JSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte(ghToken)) || len(reds) == 0 {
		t.Fatalf("gitleaks:allow exempted a secret: %s", out)
	}
}

func TestSecretInMemberNameOrNumber(t *testing.T) {
	s := newScrubber(t)
	raw := []byte(`{"` + awsKey + `":1,"b":{"` + awsKey + `x":2}}`)
	out, _, err := s.JSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte(awsKey)) || !jsontext.Value(out).IsValid() {
		t.Fatalf("member name not scrubbed validly: %s", out)
	}
}

func TestSecretWithJSONEscapes(t *testing.T) {
	s := newScrubber(t)
	// The same token once plain, once with an escaped slash-free form in a URL.
	raw := []byte(`{"a":"https:\/\/` + ghToken + `@github.com","b":"` + ghToken + `"}`)
	out, _, err := s.JSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte(ghToken)) {
		t.Fatalf("escaped context kept the secret: %s", out)
	}
}

func TestTextScrubsAndRepairsUTF8(t *testing.T) {
	s := newScrubber(t)
	out, reds := s.Text("key " + awsKey + " \xff\xfe end")
	if strings.Contains(out, awsKey) || len(reds) != 1 {
		t.Fatalf("Text = %q %v", out, reds)
	}
	if !strings.Contains(out, "\uFFFD") {
		t.Fatalf("invalid UTF-8 not replaced: %q", out)
	}
}

// pathological are hostile inputs for the scrubber: one long run of a
// character, a repeated base64 block, and keywords of generic-api-key
// packed so that every one of them opens a window.
var pathological = map[string]string{
	"as":          strings.Repeat("a", 256<<10),
	"base64":      strings.Repeat("QUtJQVFZTFBNTjVISEhGUFpBTTI=", 9000),
	"keywordsoup": strings.Repeat("key=secret token=password api_key=", 7000),
}

// Hostile inputs are scrubbed, and the work stays linear in their size:
// RE2 runs in linear time, each rule scans the text once, and
// generic-api-key scans merged windows that together are no longer than
// the text. (Their cost against a plain text of the same size is
// BenchmarkScrubPathological.)
func TestPathologicalInputIsBounded(t *testing.T) {
	s := newScrubber(t)
	for name, body := range pathological {
		raw := []byte(`{"x":` + mustQuote(t, body) + `}`)
		out, _, err := s.JSON(raw)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !jsontext.Value(out).IsValid() {
			t.Fatalf("%s: output is not valid JSON", name)
		}
		text := View(raw)
		total := 0
		for _, w := range s.windows(text, asciiLower(text)) {
			total += len(w)
		}
		if total > len(text) {
			t.Fatalf("%s: generic-api-key would scan %d bytes of a %d-byte text", name, total, len(text))
		}
		if name == "keywordsoup" && total < len(text)/2 {
			t.Fatalf("keywordsoup: windows cover %d of %d bytes; the input no longer exercises them", total, len(text))
		}
	}
}

func FuzzJSON(f *testing.F) {
	f.Add([]byte(`{"a":"` + awsKey + `"}`))
	f.Add([]byte(`{"` + ghToken + `":["` + ghToken + `", 1e3]}`))
	f.Add([]byte(`[1,2,{"x":null}]`))
	s := newScrubber(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !jsontext.Value(raw).IsValid() {
			return
		}
		out, _, err := s.JSON(raw)
		if err != nil {
			t.Fatalf("valid input %q: %v", raw, err)
		}
		if !jsontext.Value(out).IsValid() {
			t.Fatalf("output not valid JSON: %q", out)
		}
	})
}

// Secrets beside JSON escapes: at the start of an output line (after \n),
// after a tab, in escaped quotes, as a quoted value in JSON printed by a
// tool, in a curl header. Over the raw JSON text most of these were
// missed (the letter n of \n defeats \b, a backslash matches no rule's
// terminator); the rules now scan View, the text with escapes decoded.
func TestSecretsBesideEscapesAreRedacted(t *testing.T) {
	s := newScrubber(t)
	const stripeKey = "sk_live_x1V9rK3sQ7bT2mN8pL4wZ6cY0"
	const generic = "Zk3pQ9vX2mL7nR4tW8yB1cF6"
	cases := []struct{ name, stdout, secret string }{
		{"aws key on its own line", "line1\n" + awsKey + "\nline3", awsKey},
		{"aws key after a tab", "id\t" + awsKey + "\n", awsKey},
		{"stripe key in quotes", `export STRIPE_KEY="` + stripeKey + `"` + "\n", stripeKey},
		{"stripe key on its own line", "\n" + stripeKey + "\n", stripeKey},
		{"api key in printed JSON", `{"api_key": "` + generic + `", "region": "eu"}`, generic},
		{"bearer token in a curl header", `curl -s -H "Authorization: Bearer ` + generic + `" https://api.example.com/v1/builds`, generic},
		{"user and password in curl -u", `curl -u "deploy:` + generic + `" https://example.com`, "deploy:" + generic},
		{"slack token after an emoji", "done 😀\n" + slackTok + "\n", slackTok},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw := `{"session_id":"s1","tool_response":{"stdout":` + mustQuote(t, c.stdout) + `}}`
			if c.name == "slack token after an emoji" {
				raw = strings.Replace(raw, "😀", `\ud83d\ude00`, 1) // as an ASCII-only encoder writes it
			}
			out, reds, err := s.JSON([]byte(raw))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(View(out), c.secret) {
				t.Fatalf("secret survived scrubbing: %s", out)
			}
			if len(reds) == 0 {
				t.Fatalf("no redaction recorded: %s", out)
			}
			if !jsontext.Value(out).IsValid() {
				t.Fatalf("scrubbed output is not valid JSON: %s", out)
			}
			if !strings.Contains(string(out), "[REDACTED:") {
				t.Fatalf("no marker in %s", out)
			}
		})
	}
}

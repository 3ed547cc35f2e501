package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/identity"
)

// Credentials in the shape of real ones (not vendor EXAMPLE keys, which the
// scanner deliberately ignores).
const (
	awsKeyID = "AKIAQYLPMN5HHHFPZAM2"
	ghToken  = "ghp_x1V9rK3sQ7bT2mN8pL4wZ6cY0dF5gH1jK9aB"
)

func sum(b []byte) string {
	s := sha256.Sum256(bytes.TrimSpace(b))
	return "sha256:" + hex.EncodeToString(s[:])
}

// TestClaudeCodeSessionEndToEnd pipes real Claude Code hook payloads through
// claimcheck-hook into `claimcheck up` and checks the ledger.
func TestClaudeCodeSessionEndToEnd(t *testing.T) {
	dir := t.TempDir()
	upProc, url := up(t, filepath.Join(dir, "data"), "127.0.0.1:0")
	env := []string{"CLAIMCHECK_NATS_URL=" + url, "CLAIMCHECK_HOOK_STATE_DIR=" + filepath.Join(dir, "hook"), "CLAIMCHECK_HOOK_GATE=false"}
	names, bodies := readFixtures(t)
	const session = "00893aaf-19fa-41d2-8238-13269b9b3ca0"

	// Secrets in tool output: one small output, one large enough to go to
	// the object store.
	small := bodies[3]
	small = bytes.Replace(small, []byte(`12 passed, 12 total\n`), []byte(`12 passed, 12 total\nAWS_ACCESS_KEY_ID=`+awsKeyID+`\n`), 1)
	bodies[3] = small
	bigOutput := strings.Repeat("building module 1234567890 ... ok\\n", 1500) + "GITHUB_TOKEN=" + ghToken + "\\nTests: 3 passed\\n"
	big := []byte(`{"session_id":"` + session + `","transcript_path":"/t.jsonl","cwd":"/home/user/my-project","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"make test"},"tool_response":{"stdout":"` + bigOutput + `","stderr":"","interrupted":false,"isImage":false},"tool_use_id":"toolu_big"}`)
	names = append(names[:7:7], append([]string{"PostToolUse"}, names[7:]...)...)
	bodies = append(bodies[:7:7], append([][]byte{big}, bodies[7:]...)...)

	for i, b := range bodies {
		r := runBin(t, env, b, "claimcheck-hook")
		if r.code != 0 || r.stdout != "" {
			t.Fatalf("hook for %s: exit %d stdout %q stderr %q", names[i], r.code, r.stdout, r.stderr)
		}
	}
	// The actionable prompt (fixture 2) brings its contract right after it.
	all, raw := show(t, url, session, len(bodies)+1)
	if len(all) != len(bodies)+1 || all[1].HookEvent != "UserPromptSubmit" || all[2].Kind != "contract" {
		t.Fatalf("ledger has %d entries (want %d), entry 3 is %q (want the prompt's contract)", len(all), len(bodies)+1, all[min(2, len(all)-1)].Kind)
	}
	var entries []shownEntry
	for _, e := range all {
		if e.Kind != "contract" {
			entries = append(entries, e)
		}
	}
	for i, e := range entries {
		if want := uint64(i + 1 + min(i/2, 1)); e.N != want || e.HookEvent != names[i] || e.Kind != "event" || e.Hash == "" || e.PrevHash == "" || e.EventID == "" {
			t.Fatalf("entry %d: %+v, want hook_event=%s", i, e, names[i])
		}
		if e.PayloadDigest != sum(bodies[i]) {
			t.Errorf("entry %d: payload_digest %s, want the digest of the raw payload %s", i+1, e.PayloadDigest, sum(bodies[i]))
		}
		if e.ClientSeq != uint64(i+1) {
			t.Errorf("entry %d: client_seq %d", i+1, e.ClientSeq)
		}
	}
	// Secrets are not in the ledger...
	for _, s := range []string{awsKeyID, ghToken} {
		if strings.Contains(raw, s) {
			t.Fatalf("secret %s is in the ledger", s)
		}
	}
	if len(entries[3].Redactions) != 1 || entries[3].Redactions[0].Rule != "aws-access-token" {
		t.Errorf("redactions of the small output: %+v", entries[3].Redactions)
	}
	bigEntry := entries[7]
	if bigEntry.Artifact == nil || len(bigEntry.Redactions) != 1 {
		t.Fatalf("large output: artifact %v redactions %v", bigEntry.Artifact, bigEntry.Redactions)
	}
	// ...nor in the object store, which holds the whole scrubbed output.
	_, js, _ := connectAs(t, url, identity.RoleOperator)
	obj, err := js.ObjectStore(context.Background(), "artifacts")
	if err != nil {
		t.Fatal(err)
	}
	rd, err := obj.Get(context.Background(), bigEntry.Artifact.Object)
	if err != nil {
		t.Fatal(err)
	}
	art, _ := io.ReadAll(rd)
	if bytes.Contains(art, []byte(ghToken)) || !bytes.Contains(art, []byte("Tests: 3 passed")) || !bytes.Contains(art, []byte("[REDACTED:github-pat]")) {
		t.Fatalf("artifact: %d bytes, contains secret=%v", len(art), bytes.Contains(art, []byte(ghToken)))
	}
	var p struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal(art, &p, json.RejectUnknownMembers(false)); err != nil || p.SessionID != session {
		t.Fatalf("artifact is not the scrubbed payload: %v", err)
	}
	if r := runBin(t, env, nil, "claimcheck", "ledger", "verify"); r.code != 0 || !strings.Contains(r.stdout, "ok:") {
		t.Fatalf("ledger verify: %+v", r)
	}
	r := runBin(t, env, nil, "claimcheck", "ledger", "sessions")
	if r.code != 0 || !strings.Contains(r.stdout, session) {
		t.Fatalf("ledger sessions: %+v", r)
	}
	upProc.Stop(t)
	// ...nor anywhere on disk: the raw payloads waited in INTAKE, and purged
	// messages' bytes stay in block files until compaction, but JetStream
	// encrypts its whole store. A plain grep of the data directory finds
	// neither secret (nor the cleartext of the rest of the session).
	noCleartext(t, filepath.Join(dir, "data"), awsKeyID, ghToken, "building module 1234567890")
}

// noCleartext fails if any file under dir holds one of needles, and checks
// that there was something to search (JetStream's block files).
func noCleartext(t *testing.T, dir string, needles ...string) {
	t.Helper()
	blocks := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.HasSuffix(p, ".blk") && len(b) > 0 {
			blocks++
		}
		for _, n := range needles {
			if bytes.Contains(b, []byte(n)) {
				t.Errorf("%s holds %q in clear", p, n)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if blocks == 0 {
		t.Fatalf("no JetStream block file with data under %s: the search proves nothing", dir)
	}
}

// TestBadInputEndToEnd sends each kind of bad input through the built hook:
// each gets a clear error and a rejected record, and the good events around
// them are all kept.
func TestBadInputEndToEnd(t *testing.T) {
	dir := t.TempDir()
	_, url := up(t, filepath.Join(dir, "data"), "127.0.0.1:0")
	env := []string{"CLAIMCHECK_NATS_URL=" + url, "CLAIMCHECK_HOOK_STATE_DIR=" + filepath.Join(dir, "hook"), "CLAIMCHECK_HOOK_GATE=false", "CLAIMCHECK_HOOK_MAX_INPUT_BYTES=4096"}
	good := func(i int) []byte {
		return []byte(`{"session_id":"good-session","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"echo ` + strings.Repeat("x", i) + `"}}`)
	}
	bad := []struct {
		name, in, msg string
	}{
		{"oversized", `{"session_id":"s","hook_event_name":"Stop","x":"` + strings.Repeat("a", 5000) + `"}`, "too large"},
		{"malformed", `{"session_id":"s",`, "truncated"},
		{"duplicate keys", `{"session_id":"s","hook_event_name":"Stop","hook_event_name":"Stop"}`, "duplicate"},
		{"invalid utf-8", "{\"session_id\":\"s\",\"hook_event_name\":\"Stop\",\"m\":\"\xc3\x28\"}", "UTF-8"},
		{"missing session_id", `{"hook_event_name":"Stop"}`, "session_id"},
		{"hostile session id", `{"session_id":"../../root/.ssh","hook_event_name":"Stop"}`, "invalid session id"},
		{"wildcard session id", `{"session_id":"cc.ledger.>","hook_event_name":"Stop"}`, "invalid session id"},
	}
	n := 0
	for _, b := range bad {
		n++
		if r := runBin(t, env, good(n), "claimcheck-hook"); r.code != 0 {
			t.Fatalf("good event: %+v", r)
		}
		r := runBin(t, env, []byte(b.in), "claimcheck-hook")
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, b.msg) {
			t.Errorf("%s: exit %d stdout %q stderr %q, want exit 1 and %q", b.name, r.code, r.stdout, r.stderr, b.msg)
		}
	}
	entries, _ := show(t, url, "good-session", n)
	if len(entries) != n {
		t.Fatalf("good session has %d entries, want %d", len(entries), n)
	}
	rejected, _ := show(t, url, "_rejected", len(bad))
	if len(rejected) != len(bad) {
		t.Fatalf("_rejected has %d entries, want %d", len(rejected), len(bad))
	}
	for i, e := range rejected {
		if e.Kind != "rejected" || !strings.Contains(e.Reason, bad[i].msg) {
			t.Errorf("rejected %d: kind %s reason %q, want %q", i, e.Kind, e.Reason, bad[i].msg)
		}
	}
	if r := runBin(t, env, nil, "claimcheck", "ledger", "verify"); r.code != 0 {
		t.Fatalf("verify: %+v", r)
	}
}

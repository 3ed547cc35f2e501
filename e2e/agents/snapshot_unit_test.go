package agents

import (
	"strings"
	"testing"
)

// TestNormalise checks the placeholders the contract snapshots rely on,
// without a client.
func TestNormalise(t *testing.T) {
	w := &world{t: t, home: "/tmp/TestX/001/home", project: "/tmp/TestX/001/project"}
	const session = "6ca60a9f-078b-4ee2-94e0-b875308176e7"
	payload := `{"session_id":"` + session + `","transcript_path":"/tmp/TestX/001/home/.claude/projects/-tmp-TestX-001-project/` + session + `.jsonl",` +
		`"cwd":"/tmp/TestX/001/project","prompt_id":"2d0bae88-28b8-47d1-aaf7-c6fe6553c29b","tool_use_id":"toolu_e2e0003","duration_ms":412,` +
		`"tool_response":{"stdout":"ok  \texample.com/calc\t0.003s","attestation":"01M8901X5JXDKE52M5P1V0K151 <b>"}}`
	got, err := normalise(payload, w, session)
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "cwd": "<PROJECT_DIR>",
  "duration_ms": "<DURATION_MS>",
  "prompt_id": "<UUID>",
  "session_id": "<SESSION_ID>",
  "tool_response": {
    "attestation": "<ULID> <b>",
    "stdout": "ok  \texample.com/calc\t<ELAPSED>"
  },
  "tool_use_id": "<TOOL_USE_ID>",
  "transcript_path": "<HOME>/.claude/projects/<PROJECT_SLUG>/<SESSION_ID>.jsonl"
}
`
	if string(got) != want {
		t.Errorf("normalise (-want +got):\n%s", lineDiff(want, string(got)))
	}
}

func TestLineDiff(t *testing.T) {
	for _, c := range []struct{ a, b, want string }{
		{"a\nb\nc", "a\nb\nc", "  a\n  b\n  c\n"},
		{"a\nb\nc", "a\nB\nc\nd", "  a\n- b\n+ B\n  c\n+ d\n"},
		{"a\nb", "b", "- a\n  b\n"},
	} {
		if got := lineDiff(c.a, c.b); got != c.want {
			t.Errorf("lineDiff(%q, %q) =\n%s\nwant\n%s", c.a, c.b, got, c.want)
		}
	}
	if !strings.Contains(lineDiff("x", "y"), "- x\n+ y") {
		t.Error("a changed line is not shown as - then +")
	}
}

package agents

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClaudeCodeSecretIsRedacted: the agent reads notes that hold a GitHub
// token. The gatekeeper finds it, and its answer replaces the result Claude
// Code hands the model (updatedToolOutput): the model reads
// [REDACTED:github-pat] and the warning, never the token, in any request;
// the ledger has the signed secret finding and no copy of the token.
func TestClaudeCodeSecretIsRedacted(t *testing.T) {
	c, exe := claudeCode(t)
	w := newWorld(t, c, exe)
	const token = "ghp_x1V9rK3sQ7bT2mN8pL4wZ6cY0dF5gH1jK9aB"
	notes := filepath.Join(w.project, "DEPLOY.md")
	if err := os.WriteFile(notes, []byte("# Deploy\n\nPush with\n\n    git push https://"+token+"@github.com/acme/app main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.setup(
		step{name: "read the deploy notes", reply: func(*turn) reply {
			return reply{tools: []toolCall{{"Read", map[string]any{"file_path": notes}}}}
		}},
		step{name: "answer", reply: func(tr *turn) reply {
			res, ok := tr.toolResult(0)
			tr.expect(ok && strings.Contains(res.text(), "[REDACTED:github-pat]") && !strings.Contains(res.text(), token),
				"the Read result the model got: %q", res.text())
			tr.expect(strings.Contains(tr.since(), "claimcheck found a secret"), "no warning reached the model: %q", tr.since())
			return reply{text: secretAnswer}
		}},
		step{name: "answer again", repeat: true, reply: func(*turn) reply {
			return reply{text: secretAnswer}
		}},
	)
	_, session := w.session("How do the deploy notes in DEPLOY.md push?")
	stops := 1 + len(w.model.answeredBy("answer again"))
	es := w.ledger(session, sessionOver(stops))
	w.checkScript()

	for i, q := range w.model.requests() {
		if strings.Contains(string(q.Body), token) {
			w.errorf("model: request %d holds the token", i)
		}
	}
	for _, e := range es {
		if strings.Contains(e.Payload, token) {
			w.errorf("ledger: entry %d (%s) holds the token", e.N, e.HookEvent)
		}
	}
	if fs := findings(es); len(fs) != 1 || fs[0].Kind != "secret" {
		w.errorf("ledger: findings %v, want one secret", labels(fs))
	}
	if ds := decisions(es, "PostToolUse"); len(ds) != 1 || ds[0].Decision != "allow" || ds[0].Rule != "posttool.secret" {
		w.errorf("ledger: PostToolUse decisions %+v, want one allow (posttool.secret)", ds)
	}
	w.checkPairs(es)
	w.verify()
}

// secretAnswer answers without repeating the token, and claims nothing.
const secretAnswer = "The notes push over HTTPS with a token in the URL; I will not repeat it. Rotate it and use a credential helper.\n\n" +
	"```claimcheck\n" + `{"type":"blocked","summary":"DEPLOY.md pushes with a token in the remote URL","claims":[],` +
	`"what_succeeded":"read DEPLOY.md","what_remains":"the token is to be rotated","next_route_or_question":"How should pushes authenticate?"}` +
	"\n```"

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json"
)

// The payloads these tests write by hand are checked against what the
// pinned Claude Code really sent to its hooks: the contract snapshots that
// e2e/agents keeps under agents/testdata/claude-code-<version>/ (refreshed
// by `make update-clients`). A hand-written payload may use only fields the
// client sends, with the JSON types it sends them in, and must carry every
// field the client sends that claimcheck reads.

// unreadFields are fields the client sends that claimcheck never reads, so
// a hand-written payload may leave them out.
var unreadFields = map[string]bool{
	"background_tasks": true, "duration_ms": true, "effort": true, "permission_mode": true,
	"reason": true, "session_crons": true, "source": true, "transcript_path": true,
}

// documentedOptional are fields the client sends only sometimes, so a run
// of it may not have captured them (../shared/reference/agent-hooks-contract.md).
var documentedOptional = map[string]map[string]string{
	"SessionStart": {"model": "string"},
}

// placeholderKinds are the snapshot placeholders that stand for a value
// other than a string.
var placeholderKinds = map[string]string{"<DURATION_MS>": "number"}

type payloadContract struct {
	client string
	shapes map[string]map[string]any // snapshot name (PreToolUse.Bash) → document
}

var contract = sync.OnceValues(loadContract)

// loadContract reads the snapshots of the pinned Claude Code.
func loadContract() (payloadContract, error) {
	raw, err := os.ReadFile(filepath.Join("agents", "clients.json"))
	if err != nil {
		return payloadContract{}, err
	}
	var pins struct {
		Clients []struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"clients"`
	}
	if err := json.Unmarshal(raw, &pins, json.RejectUnknownMembers(false)); err != nil {
		return payloadContract{}, fmt.Errorf("agents/clients.json: %w", err)
	}
	for _, c := range pins.Clients {
		if c.Name != "claude-code" {
			continue
		}
		pc := payloadContract{client: c.Name + "-" + c.Version, shapes: map[string]map[string]any{}}
		files, _ := filepath.Glob(filepath.Join("agents", "testdata", pc.client, "*.json"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return payloadContract{}, err
			}
			var doc map[string]any
			if err := json.Unmarshal(b, &doc); err != nil {
				return payloadContract{}, fmt.Errorf("%s: %w", f, err)
			}
			pc.shapes[strings.TrimSuffix(filepath.Base(f), ".json")] = doc
		}
		if len(pc.shapes) == 0 {
			return payloadContract{}, fmt.Errorf("no contract snapshots under agents/testdata/%s", pc.client)
		}
		return pc, nil
	}
	return payloadContract{}, fmt.Errorf("agents/clients.json pins no claude-code")
}

// check returns what in a hand-written payload differs from the client's.
// A payload for an event (or tool) no snapshot covers is checked against
// what is known: the event's other tools' common fields, or nothing.
func (pc payloadContract) check(raw []byte) error {
	var p map[string]any
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	event, _ := p["hook_event_name"].(string)
	tool, _ := p["tool_name"].(string)
	want, exact := pc.shapes[event+"."+tool]
	if !exact {
		want, exact = pc.shapes[event], tool == ""
	}
	if want == nil {
		for name, doc := range pc.shapes {
			if strings.HasPrefix(name, event+".") {
				want = doc
				break
			}
		}
	}
	if want == nil {
		return nil
	}
	var diffs []string
	top := want
	if !exact { // another tool's payload: its tool_input and tool_response say nothing of this tool's
		top = map[string]any{}
		for k, v := range want {
			top[k] = v
		}
		for _, field := range []string{"tool_input", "tool_response"} {
			if v, ok := p[field]; ok && top[field] != nil {
				top[field] = v
			}
		}
	}
	diffs = append(diffs, compare("", p, top, documentedOptional[event], true)...)
	for _, field := range []string{"tool_input", "tool_response"} {
		got, _ := p[field].(map[string]any)
		ref, _ := want[field].(map[string]any)
		if exact && got != nil && ref != nil {
			diffs = append(diffs, compare(field+".", got, ref, nil, false)...)
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%s %s payload differs from %s's (agents/testdata/%s): %s",
			event, tool, pc.client, pc.client, strings.Join(diffs, "; "))
	}
	return nil
}

// compare lists the fields of got that want does not have or has with
// another JSON kind and, when complete, the fields of want that got lacks
// though claimcheck reads them.
func compare(prefix string, got, want map[string]any, optional map[string]string, complete bool) []string {
	var diffs []string
	for k, v := range got {
		switch wv, ok := want[k]; {
		case ok && kind(v) != kind(wv):
			diffs = append(diffs, fmt.Sprintf("%s%s is a %s, the client sends a %s", prefix, k, kind(v), kind(wv)))
		case !ok && optional[k] == "":
			diffs = append(diffs, fmt.Sprintf("%s%s is not a field the client sends", prefix, k))
		case !ok && optional[k] != kind(v):
			diffs = append(diffs, fmt.Sprintf("%s%s is a %s, the client sends a %s", prefix, k, kind(v), optional[k]))
		}
	}
	if complete {
		for k := range want {
			if _, ok := got[k]; !ok && !unreadFields[k] {
				diffs = append(diffs, fmt.Sprintf("%s%s is missing (the client sends it and claimcheck reads it)", prefix, k))
			}
		}
	}
	sort.Strings(diffs)
	return diffs
}

func kind(v any) string {
	switch v := v.(type) {
	case string:
		if k, ok := placeholderKinds[v]; ok {
			return k
		}
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// checkPayload fails the test if a hand-written Claude Code payload is not
// one the pinned client could have sent.
func checkPayload(t *testing.T, raw []byte) {
	t.Helper()
	pc, err := contract()
	if err != nil {
		t.Fatalf("the client contract: %v", err)
	}
	if err := pc.check(raw); err != nil {
		t.Fatalf("hand-written payload: %v\n%s", err, raw)
	}
}

// TestPayloadContract: the check accepts what the client sent and names each
// kind of departure from it.
func TestPayloadContract(t *testing.T) {
	pc, err := contract()
	if err != nil {
		t.Fatal(err)
	}
	real := `{"session_id":"s1","transcript_path":"/t.jsonl","cwd":"/repo","permission_mode":"default","prompt_id":"p1",` +
		`"effort":{"level":"medium"},"hook_event_name":"PreToolUse","tool_name":"Bash",` +
		`"tool_input":{"command":"go test ./...","description":"run"},"tool_use_id":"toolu_1"}`
	if err := pc.check([]byte(real)); err != nil {
		t.Fatalf("the client's own shape: %v", err)
	}
	for name, c := range map[string]struct{ from, to, want string }{
		"invented field":    {`"tool_use_id":"toolu_1"`, `"tool_use_id":"toolu_1","tool_call_id":"x"`, "tool_call_id is not a field"},
		"wrong type":        {`"tool_use_id":"toolu_1"`, `"tool_use_id":1`, "tool_use_id is a number, the client sends a string"},
		"missing read":      {`,"tool_use_id":"toolu_1"`, ``, "tool_use_id is missing"},
		"missing prompt id": {`"prompt_id":"p1",`, ``, "prompt_id is missing"},
		"invented input":    {`"description":"run"`, `"description":"run","timeout_s":5`, "tool_input.timeout_s is not a field"},
	} {
		err := pc.check([]byte(strings.Replace(real, c.from, c.to, 1)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", name, err, c.want)
		}
	}
	// Unread fields may be left out; documented optional ones may be added.
	lean := strings.Replace(strings.Replace(real, `"effort":{"level":"medium"},`, ``, 1), `"permission_mode":"default",`, ``, 1)
	if err := pc.check([]byte(lean)); err != nil {
		t.Errorf("without the unread fields: %v", err)
	}
	start := `{"session_id":"s1","transcript_path":"/t.jsonl","cwd":"/repo","hook_event_name":"SessionStart","source":"startup","model":"m"}`
	if err := pc.check([]byte(start)); err != nil {
		t.Errorf("SessionStart with its documented model: %v", err)
	}
}

// Package clientcontract checks hand-written hook payloads in tests against
// what the real client sent: the contract snapshots e2e/agents keeps under
// e2e/agents/testdata/claude-code-<version>/ (refreshed by make
// update-clients; docs/agents.md). A hand-written payload may use only
// fields the client sends, with the JSON types it sends them in; a complete
// one must also carry every field the client sends that claimcheck reads.
package clientcontract

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json"
)

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

// Contract is the payload shapes of the pinned Claude Code.
type Contract struct {
	client string
	where  string                    // the snapshots' directory, for messages
	shapes map[string]map[string]any // snapshot name (PreToolUse.Bash) → document
}

var load = sync.OnceValues(read)

// Load returns the pinned client's contract, read once.
func Load() (Contract, error) { return load() }

// read reads the snapshots of the pinned Claude Code.
func read() (Contract, error) {
	_, file, _, _ := runtime.Caller(0)
	agents := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(file))), "e2e", "agents")
	raw, err := os.ReadFile(filepath.Join(agents, "clients.json"))
	if err != nil {
		return Contract{}, err
	}
	var pins struct {
		Clients []struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"clients"`
	}
	if err := json.Unmarshal(raw, &pins, json.RejectUnknownMembers(false)); err != nil {
		return Contract{}, fmt.Errorf("agents/clients.json: %w", err)
	}
	for _, c := range pins.Clients {
		if c.Name != "claude-code" {
			continue
		}
		pc := Contract{client: c.Name + "-" + c.Version, shapes: map[string]map[string]any{}}
		pc.where = "agents/testdata/" + pc.client
		files, _ := filepath.Glob(filepath.Join(agents, "testdata", pc.client, "*.json"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return Contract{}, err
			}
			var doc map[string]any
			if err := json.Unmarshal(b, &doc); err != nil {
				return Contract{}, fmt.Errorf("%s: %w", f, err)
			}
			pc.shapes[strings.TrimSuffix(filepath.Base(f), ".json")] = doc
		}
		if len(pc.shapes) == 0 {
			return Contract{}, fmt.Errorf("no contract snapshots under agents/testdata/%s", pc.client)
		}
		return pc, nil
	}
	return Contract{}, fmt.Errorf("agents/clients.json pins no claude-code")
}

// Captured returns the contract of another client from the payloads
// captured from it under pkg/dialect/testdata/<client> (codex-0.169.0,
// gemini-cli-0.61.0): one payload per event, so tool_input and
// tool_response are checked only at the top level. A payload captured
// after a stop block (<Event>.after-stop-block.json) is not used.
func Captured(client string) (Contract, error) {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(filepath.Dir(file)), "dialect", "testdata", client)
	pc := Contract{client: client, where: "pkg/dialect/testdata/" + client, shapes: map[string]map[string]any{}}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		if strings.Contains(name, ".") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return Contract{}, err
		}
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			return Contract{}, fmt.Errorf("%s: %w", f, err)
		}
		pc.shapes[name] = doc
	}
	if len(pc.shapes) == 0 {
		return Contract{}, fmt.Errorf("no captured payloads under %s", dir)
	}
	return pc, nil
}

// Check returns what in a hand-written payload differs from the client's.
// complete also asks for every field the client sends that claimcheck
// reads; without it only the fields present are checked (names, types).
// A payload for an event (or tool) no snapshot covers is checked against
// what is known: the event's other tools' common fields, or nothing.
func (pc Contract) Check(raw []byte, complete bool) error {
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
	diffs = append(diffs, compare("", p, top, documentedOptional[event], complete)...)
	for _, field := range []string{"tool_input", "tool_response"} {
		got, _ := p[field].(map[string]any)
		ref, _ := want[field].(map[string]any)
		if exact && got != nil && ref != nil {
			diffs = append(diffs, compare(field+".", got, ref, nil, false)...)
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%s %s payload differs from %s's (%s): %s",
			event, tool, pc.client, pc.where, strings.Join(diffs, "; "))
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

// Fields fails the test if a hand-written payload has a field the pinned
// client does not send, or sends with another type.
func Fields(t testing.TB, raw []byte) { check(t, raw, false) }

// Complete is Fields, and also fails the test if the payload lacks a field
// the client sends that claimcheck reads.
func Complete(t testing.TB, raw []byte) { check(t, raw, true) }

func check(t testing.TB, raw []byte, complete bool) {
	t.Helper()
	pc, err := Load()
	if err != nil {
		t.Fatalf("the client contract: %v", err)
	}
	if err := pc.Check(raw, complete); err != nil {
		t.Fatalf("hand-written payload: %v\n%s", err, raw)
	}
}

package agents

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

// update rewrites the contract snapshots from this run (make update-clients).
var update = flag.Bool("update", false, "rewrite the contract snapshots under testdata/ from the payloads the client sent")

// snapshots collects, per snapshot name, the first payload the client sent
// to the hook, read back from the ledger and normalised. Names are the
// event (SessionStart.json), with the tool for tool events
// (PreToolUse.Bash.json), and Stop.after-stop-block.json for a Stop sent
// while the previous one was blocked (stop_hook_active: true).
type snapshots struct {
	mu   sync.Mutex
	got  map[string][]byte
	from map[string]string // snapshot → scenario that sent it
}

func newSnapshots() *snapshots {
	return &snapshots{got: map[string][]byte{}, from: map[string]string{}}
}

// collect takes the hook payloads of one session's ledger.
func (s *snapshots) collect(w *world, scenario, session string, es []entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range es {
		if e.Kind != "event" || e.Payload == "" {
			continue
		}
		h := e.hook()
		if h.Event == "" || h.Transcript == "" { // claimcheck's own records (GateDecision, HookCrash, …)
			continue
		}
		name := h.Event
		switch {
		case h.ToolName != "":
			name += "." + h.ToolName
		case h.Event == "Stop" && h.StopActive:
			name += ".after-stop-block"
		}
		if _, ok := s.got[name]; ok {
			continue
		}
		b, err := normalise(e.Payload, w, session)
		if err != nil {
			w.t.Errorf("payload of %s at n=%d: %v", name, e.N, err)
			continue
		}
		s.got[name], s.from[name] = b, scenario
	}
}

var (
	uuidRE    = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	ulidRE    = regexp.MustCompile(`\b[0-9A-HJKMNP-TV-Z]{26}\b`) // attestation ids
	elapsedRE = regexp.MustCompile(`\b\d+\.\d+s\b`)
)

// normalise rewrites what differs between runs into placeholders: the
// temporary paths, the session id, tool_use ids, other UUIDs (prompt_id),
// ULIDs (attestation ids), durations and test timings. The document is re-encoded with sorted keys.
func normalise(payload string, w *world, session string) ([]byte, error) {
	var v any
	if err := json.Unmarshal([]byte(payload), &v); err != nil {
		return nil, err
	}
	r := strings.NewReplacer(
		w.project, "<PROJECT_DIR>",
		projectSlug(w.project), "<PROJECT_SLUG>",
		w.home, "<HOME>",
		session, "<SESSION_ID>",
	)
	var walk func(key string, v any) any
	walk = func(key string, v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, y := range x {
				x[k] = walk(k, y)
			}
			return x
		case []any:
			for i, y := range x {
				x[i] = walk(key, y)
			}
			return x
		case string:
			s := r.Replace(x)
			if key == "tool_use_id" {
				s = "<TOOL_USE_ID>"
			}
			s = uuidRE.ReplaceAllString(s, "<UUID>")
			s = ulidRE.ReplaceAllString(s, "<ULID>")
			return elapsedRE.ReplaceAllString(s, "<ELAPSED>")
		case float64:
			if key == "duration_ms" || key == "durationMs" {
				return "<DURATION_MS>"
			}
		}
		return v
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err := enc.Encode(walk("", v))
	return out.Bytes(), err
}

// projectSlug is how Claude Code names a project under ~/.claude/projects:
// the path with every character but letters and digits made '-'.
func projectSlug(dir string) string {
	return regexp.MustCompile(`[^A-Za-z0-9]`).ReplaceAllString(dir, "-")
}

// check compares the collected payloads with testdata/<client>-<version>/,
// or rewrites them with -update.
func (s *snapshots) check(t *testing.T, c client) {
	t.Helper()
	dir := filepath.Join("testdata", c.Name+"-"+c.Version)
	s.mu.Lock()
	defer s.mu.Unlock()
	if *update {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range s.got {
			if err := os.WriteFile(filepath.Join(dir, name+".json"), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("wrote %d contract snapshots to %s", len(s.got), dir)
		return
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	want := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		want[strings.TrimSuffix(filepath.Base(f), ".json")] = b
	}
	var names []string
	for n := range s.got {
		names = append(names, n)
	}
	for n := range want {
		if _, ok := s.got[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		got, sent := s.got[n]
		exp, kept := want[n]
		switch {
		case !kept:
			t.Errorf("%s sent %s (scenario %s) but %s has no snapshot of it (run with -update):\n%s", c, n, s.from[n], dir, got)
		case !sent:
			t.Errorf("%s did not send %s in this run, but %s holds a snapshot of it", c, n, dir)
		case string(got) != string(exp):
			t.Errorf("%s's %s payload (scenario %s) differs from %s/%s.json (-want +got; run with -update if the change is expected):\n%s",
				c, n, s.from[n], dir, n, lineDiff(string(exp), string(got)))
		}
	}
}

// lineDiff is a line diff (longest common subsequence) of two short texts.
func lineDiff(a, b string) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			fmt.Fprintf(&out, "  %s\n", x[i])
			i, j = i+1, j+1
		case i < len(x) && (j == len(y) || lcs[i+1][j] >= lcs[i][j+1]):
			fmt.Fprintf(&out, "- %s\n", x[i])
			i++
		default:
			fmt.Fprintf(&out, "+ %s\n", y[j])
			j++
		}
	}
	return out.String()
}

package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/export"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/schemas"
)

// forensicsFixture chains rounds of sess-a (host h1, two entries a round)
// and sess-b (host h2, one), round r ingested r minutes after start.
func forensicsFixture(t *testing.T, rounds int, start time.Time) (map[string]string, jetstream.JetStream) {
	t.Helper()
	s := natstest.RunServer(t)
	_, js := natstest.Connect(t, s.ClientURL())
	natstest.Bootstrap(t, js, nil)
	a := ledger.NewAppender(js, ledger.AppenderConfig{})
	n := 0
	for r := range rounds {
		at := start.Add(time.Duration(r) * time.Minute)
		for _, c := range []struct {
			chain, host string
			k           int
		}{{"sess-a", "h1", 2}, {"sess-b", "h2", 1}} {
			var entries []*schemas.Entry
			for range c.k {
				n++
				e := testEntry(c.chain, n, at)
				e.Host = c.host
				entries = append(entries, e)
			}
			if _, err := a.Append(t.Context(), c.chain, entries); err != nil {
				t.Fatal(err)
			}
		}
	}
	return map[string]string{"CLAIMCHECK_NATS_URL": s.ClientURL(), "CLAIMCHECK_DATA_DIR": t.TempDir(), "HOME": t.TempDir()}, js
}

func TestLedgerReplay(t *testing.T) {
	start := time.Now().UTC().Add(-time.Hour).Truncate(time.Minute)
	env, _ := forensicsFixture(t, 10, start)
	r := runCLI(t, env, "ledger", "replay", "--since", start.Add(5*time.Minute).Format(time.RFC3339), "--json")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != ExitOK || len(lines) != 15 || !strings.Contains(r.stderr, "replay: 15 entries") ||
		!strings.Contains(r.stderr, "no archive at") {
		t.Fatalf("replay --json: %+v", r)
	}
	for _, l := range lines {
		var line struct {
			Pos   string         `json:"pos"`
			Check string         `json:"check"`
			Entry jsontext.Value `json:"entry"`
		}
		if err := json.Unmarshal([]byte(l), &line); err != nil || line.Check != "ok" || line.Pos == "" {
			t.Fatalf("line %s: %v", l, err)
		}
		if _, err := chain.Hash(line.Entry); err != nil {
			t.Fatalf("entry not kept: %s", l)
		}
	}
	r = runCLI(t, env, "ledger", "replay", "--since", "2h", "--host", "h2", "--kind", "PostToolUse")
	if r.code != ExitOK || strings.Count(r.stdout, "\n") != 11 || !strings.Contains(r.stdout, "sess-b") || strings.Contains(r.stdout, "sess-a") ||
		!strings.Contains(r.stdout, "echo ") {
		t.Fatalf("replay --host: %+v", r)
	}
}

func TestLedgerReplayRejectsBadFlags(t *testing.T) {
	env := map[string]string{"CLAIMCHECK_NATS_URL": "nats://127.0.0.1:1", "HOME": t.TempDir()}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"ledger", "replay"}, "--since is required"},
		{[]string{"ledger", "replay", "--since", "yesterday"}, `--since "yesterday": want an RFC 3339 time`},
		{[]string{"ledger", "replay", "--since", "-1h"}, `--since "-1h"`},
		{[]string{"ledger", "replay", "--since", "1h", "--until", "2h"}, "--until"},
		{[]string{"ledger", "replay", "--since", "1h", "--until", "2026-02-30T00:00:00Z"}, `--until "2026-02-30T00:00:00Z"`},
		{[]string{"ledger", "replay", "--since", "1h", "--kind", "bash"}, `--kind "bash"`},
		{[]string{"ledger", "replay", "--since", "1h", "--session", "../x"}, `--session "../x"`},
		{[]string{"ledger", "replay", "--since", "1h", "--no-archive", "--archive-url", "file:///tmp"}, "contradict"},
		{[]string{"export", "--format", "ocsf"}, `--format "ocsf": want ndjson, csv, ecs (Elastic Common Schema) or otlp`},
		{[]string{"export", "--format", "otlp"}, "--format otlp needs --otlp-endpoint"},
		{[]string{"export", "--format", "otlp", "--otlp-endpoint", "collector:4317"}, `--otlp-endpoint "collector:4317"`},
		{[]string{"export", "--format", "otlp", "--otlp-endpoint", "http://c:4318", "--otlp-protocol", "udp"}, `--otlp-protocol "udp"`},
		{[]string{"export", "--format", "otlp", "--otlp-endpoint", "http://c:4318", "--out", "x"}, "--out: --format otlp"},
		{[]string{"export", "--format", "csv", "--otlp-logs"}, "go with --format otlp"},
		{[]string{"export", "--after", "12"}, `--after "12": want <sequence>.<entry>`},
		{[]string{"export", "--after", "0.1"}, "not a positive integer"},
		{[]string{"export", "--since", "1x"}, `--since "1x"`},
	} {
		r := runCLI(t, env, tt.args...)
		if r.code != ExitError || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: %+v, want exit 2 and %q", tt.args, r, tt.want)
		}
	}
}

func TestLedgerReplayReportsABrokenChain(t *testing.T) {
	start := time.Now().UTC().Add(-time.Hour).Truncate(time.Minute)
	env, js := forensicsFixture(t, 3, start)
	var entries [][]byte
	if err := ledger.NewReader(js, "").Walk(t.Context(), "sess-a", 0, func(s ledger.Stored) error {
		entries = append(entries, bytes.Clone(s.Raw))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	entries[2] = bytes.Replace(entries[2], []byte(`\"echo `), []byte(`\"ECHO `), 1)
	if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: "COPY", Subjects: []string{"copy.>"}}); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, err := js.Publish(t.Context(), "copy.sess-a", e); err != nil {
			t.Fatal(err)
		}
	}
	r := runCLI(t, env, "ledger", "replay", "--stream", "COPY", "--since", "1d")
	if r.code != ExitFault || !strings.Contains(r.stdout, "FAIL session sess-a position 3") || !strings.Contains(r.stdout, "hash mismatch") ||
		strings.Count(r.stdout, " unverified ") != 3 {
		t.Fatalf("replay of a tampered copy: %+v", r)
	}
	page := filepath.Join(t.TempDir(), "broken.html")
	r = runCLI(t, env, "ledger", "timeline", "--stream", "COPY", "--session", "sess-a", "--html", page)
	html, _ := os.ReadFile(page)
	if r.code != ExitFault || !strings.Contains(string(html), "chain BROKEN: 1 faults (first at position 3: hash mismatch") {
		t.Fatalf("timeline of a tampered copy: %+v", r)
	}
	good := filepath.Join(t.TempDir(), "good.html")
	r = runCLI(t, env, "ledger", "timeline", "--session", "sess-a", "--html", good)
	html, _ = os.ReadFile(good)
	if r.code != ExitOK || !strings.Contains(r.stdout, "6 entries of session sess-a") || !strings.Contains(string(html), "chain verified") {
		t.Fatalf("timeline: %+v", r)
	}
	for _, bad := range [][]string{{"--html", good}, {"--session", "sess-a"}, {"--session", "nosuch", "--html", good}} {
		if r := runCLI(t, env, append([]string{"ledger", "timeline"}, bad...)...); r.code != ExitError {
			t.Errorf("timeline %v: %+v", bad, r)
		}
	}
	r = runCLI(t, env, "export", "--stream", "COPY", "--format", "csv")
	if r.code != ExitFault || strings.Count(r.stdout, "\n") != 7 || !strings.Contains(r.stdout, ",fault,") {
		t.Fatalf("export of a tampered copy: %+v", r)
	}
}

func TestExportResumesAndWritesFiles(t *testing.T) {
	start := time.Now().UTC().Add(-time.Hour).Truncate(time.Minute)
	env, _ := forensicsFixture(t, 6, start)
	whole := runCLI(t, env, "export")
	// Not a terminal: no progress bar (it would redraw with carriage returns).
	if whole.code != ExitOK || strings.Count(whole.stdout, "\n") != 18 || !strings.Contains(whole.stderr, "resume after it with --after") ||
		strings.Contains(whole.stderr, "\r") {
		t.Fatalf("export: %+v", whole)
	}
	lines := strings.Split(strings.TrimSpace(whole.stdout), "\n")
	// NDJSON lines are the stored entries: each chain verifies from them.
	byChain := map[string][][]byte{}
	for _, l := range lines {
		var h struct {
			Chain string `json:"chain"`
		}
		if err := json.Unmarshal([]byte(l), &h, json.RejectUnknownMembers(false)); err != nil {
			t.Fatal(err)
		}
		byChain[h.Chain] = append(byChain[h.Chain], []byte(l))
	}
	for c, es := range byChain {
		if err := chain.Verify(c, es); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
	}

	// Export in two parts into one file: stop after a window, resume after
	// the position it printed.
	out := filepath.Join(t.TempDir(), "ledger.csv")
	first := runCLI(t, env, "export", "--format", "csv", "--out", out, "--until", start.Add(3*time.Minute).Format(time.RFC3339))
	pos := afterPos(t, first.stderr)
	if first.code != ExitOK || first.stdout != "" {
		t.Fatalf("first part: %+v", first)
	}
	again := runCLI(t, env, "export", "--format", "csv", "--out", out)
	if again.code != ExitError || !strings.Contains(again.stderr, "exists") {
		t.Fatalf("overwrite: %+v", again)
	}
	rest := runCLI(t, env, "export", "--format", "csv", "--out", out, "--after", pos)
	if rest.code != ExitOK || !strings.Contains(rest.stderr, "export: 9 entries") {
		t.Fatalf("rest: %+v", rest)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 19 || strings.Join(rows[0], ",") != strings.Join(export.Columns, ",") {
		t.Fatalf("%d rows, header %v", len(rows), rows[0])
	}
	seen := map[string]bool{}
	for _, row := range rows[1:] {
		if seen[row[0]] {
			t.Fatalf("position %s exported twice", row[0])
		}
		seen[row[0]] = true
	}

	ecs := runCLI(t, env, "export", "--format", "ecs", "--session", "sess-b")
	if ecs.code != ExitOK || strings.Count(ecs.stdout, "\n") != 6 || !strings.Contains(ecs.stdout, `"ecs":{"version":"9.4.0"}`) {
		t.Fatalf("ecs: %+v", ecs)
	}
}

func afterPos(t *testing.T, stderr string) string {
	t.Helper()
	_, rest, ok := strings.Cut(stderr, "--after ")
	if !ok {
		t.Fatalf("no position in %q", stderr)
	}
	pos, _, _ := strings.Cut(rest, ")")
	return pos
}

func TestComplianceReport(t *testing.T) {
	start := time.Now().UTC().Add(-time.Hour).Truncate(time.Minute)
	env, _ := forensicsFixture(t, 3, start)
	r := runCLI(t, env, "compliance", "report", "--format", "json", "--since", "2h")
	var rep struct {
		Entries  int `json:"entries"`
		Sessions int `json:"sessions"`
		Controls []struct {
			ID       string   `json:"id"`
			Status   string   `json:"status"`
			Evidence []string `json:"evidence"`
		} `json:"controls"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("report: %v\n%+v", err, r)
	}
	// The fixture's entries carry no agent id: AU-3 needs attention, and
	// the report says so with exit 1.
	if r.code != ExitFault || !strings.Contains(r.stderr, "controls needing attention: AU-3") || rep.Entries != 9 || rep.Sessions != 2 ||
		len(rep.Controls) != 14 {
		t.Fatalf("report: %+v\n%s", rep, r.stderr)
	}
	for _, c := range rep.Controls {
		switch c.ID {
		case "AU-9":
			if c.Status != "evidence" || !strings.Contains(c.Evidence[0], "9 entries checked against their chains: 0 faults") {
				t.Errorf("AU-9: %+v", c)
			}
		case "AU-11":
			if c.Status != "not-observable" {
				t.Errorf("AU-11 without an archive: %+v", c)
			}
		}
	}
	md := runCLI(t, env, "compliance", "report", "--since", "2h")
	if md.code != ExitFault || !strings.Contains(md.stdout, "# claimcheck compliance report") || !strings.Contains(md.stdout, "## SI-10") {
		t.Fatalf("markdown: %+v", md)
	}
	for _, bad := range [][]string{{"--format", "pdf"}, {"--host", "h1"}, {"--since", "later"}} {
		if r := runCLI(t, env, append([]string{"compliance", "report"}, bad...)...); r.code != ExitError {
			t.Errorf("%v: %+v", bad, r)
		}
	}
}

// export --follow writes entries as they are chained and, interrupted,
// says where it stopped.
func TestExportFollow(t *testing.T) {
	start := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
	env, js := forensicsFixture(t, 2, start)
	for k, v := range env {
		t.Setenv(k, v)
	}
	out := filepath.Join(t.TempDir(), "live.ndjson")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stderr natstest.SyncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"export", "--follow", "--out", out},
			Env{Getenv: func(k string) string { return env[k] }, Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr})
	}()
	lines := func(want int) func() error {
		return func() error {
			b, _ := os.ReadFile(out)
			if n := bytes.Count(b, []byte("\n")); n != want {
				return fmt.Errorf("%d lines written, want %d", n, want)
			}
			return nil
		}
	}
	natstest.Eventually(t, 10*time.Second, lines(6))
	a := ledger.NewAppender(js, ledger.AppenderConfig{})
	if _, err := a.Append(t.Context(), "sess-b", []*schemas.Entry{testEntry("sess-b", 100, time.Now())}); err != nil {
		t.Fatal(err)
	}
	natstest.Eventually(t, 10*time.Second, lines(7))
	cancel()
	select {
	case code := <-done:
		if code != ExitOK || !strings.Contains(stderr.String(), "export: 7 entries") || !strings.Contains(stderr.String(), "--after 5.1") {
			t.Fatalf("exit %d\n%s", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("export --follow did not stop with its context")
	}
}

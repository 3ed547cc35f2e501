package e2e

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/nats-io/nats.go/jetstream"
	collectorlogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/claimcheck/claimcheck/pkg/natstest"
)

// TestReplayAcrossArchiveEqualsExport runs a live `claimcheck up` whose
// rotator archives and trims within seconds: one session goes quiet and is
// trimmed to its head, another works on. Then up restarts with a rotator
// that archives elsewhere, and the busy session adds entries only the hot
// stream holds. A replay of the window, which must read the quiet session
// from the archive and the newest entries hot, equals the NDJSON export of
// the same window entry for entry; the export, imported into a scratch
// stream on another server, passes ledger verify; the compliance report
// over the same system finds the archive and the chains intact.
func TestReplayAcrossArchiveEqualsExport(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	since := time.Now().UTC().Add(-time.Second)
	upEnvs := []string{
		"CLAIMCHECK_ROTATOR_INTERVAL=500ms", "CLAIMCHECK_ROTATOR_HOT_WINDOW=2s", "CLAIMCHECK_ROTATOR_PROTECT_WINDOW=1500ms",
		"CLAIMCHECK_HOOK_STATE_DIR=" + filepath.Join(dir, "hook"),
	}
	proc, url := upEnv(t, upEnvs, data, "127.0.0.1:0")
	env := append([]string{"CLAIMCHECK_NATS_URL=" + url, "CLAIMCHECK_HOOK_GATE=false", "CLAIMCHECK_DATA_DIR=" + data}, upEnvs...)
	cli := func(args ...string) result {
		t.Helper()
		return runBin(t, env, nil, "claimcheck", args...)
	}
	quiet, busy := newAgent(t, env, "fx-quiet"), newAgent(t, env, "fx-busy")
	for range 4 {
		quiet.bash("go test ./...", "ok")
		busy.bash("make", "ok")
	}
	// Wait until retention has moved fx-quiet behind the archive: one
	// message (its head) left hot.
	natstest.Eventually(t, 60*time.Second, func() error {
		busy.bash("go vet ./...", "ok")
		r := cli("ledger", "show", "--session", "fx-quiet", "--json")
		if n := strings.Count(strings.TrimSpace(r.stdout), "\n") + 1; r.code != 0 || n != 1 {
			return fmt.Errorf("fx-quiet has %d hot entries (exit %d)", n, r.code)
		}
		return nil
	})
	// Restart with a rotator that archives elsewhere and trims nothing:
	// the archive the commands read ends here, and new entries stay only
	// in the hot stream.
	proc.Stop(t)
	_, url = upEnv(t, []string{"CLAIMCHECK_ROTATOR_INTERVAL=1h", "CLAIMCHECK_ROTATOR_HOT_WINDOW=1h",
		"CLAIMCHECK_ROTATOR_PROTECT_WINDOW=1h", "CLAIMCHECK_ROTATOR_ARCHIVE_URL=" + bucketURL(filepath.Join(dir, "elsewhere")),
		upEnvs[3]}, data, "127.0.0.1:0")
	env[0] = "CLAIMCHECK_NATS_URL=" + url
	busy = newAgent(t, env, "fx-busy")
	busy.bash("go build ./...", "ok")
	busy.bash("go test ./...", "ok")
	until := time.Now().UTC().Add(time.Millisecond)
	window := []string{"--since", since.Format(time.RFC3339Nano), "--until", until.Format(time.RFC3339Nano)}

	rp := cli(append([]string{"ledger", "replay", "--json"}, window...)...)
	if rp.code != 0 {
		t.Fatalf("replay: exit %d\n%s\n%s", rp.code, rp.stdout, rp.stderr)
	}
	m := regexp.MustCompile(`replay: (\d+) entries \((\d+) from the archive in (\d+) segments, (\d+) hot\)`).FindStringSubmatch(rp.stderr)
	if m == nil {
		t.Fatalf("replay summary: %s", rp.stderr)
	}
	fromArchive, _ := strconv.Atoi(m[2])
	hot, _ := strconv.Atoi(m[4])
	if fromArchive == 0 || hot < 4 {
		t.Fatalf("the window should span archived entries and the 4 entries only the hot stream holds: %s", rp.stderr)
	}
	t.Log(strings.TrimSpace(rp.stderr))
	var replayed [][]byte
	quietN := 0
	for line := range strings.SplitSeq(strings.TrimSpace(rp.stdout), "\n") {
		var l struct {
			Source string         `json:"source"`
			Check  string         `json:"check"`
			Entry  jsontext.Value `json:"entry"`
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("replay line %s: %v", line, err)
		}
		if l.Check != "ok" {
			t.Fatalf("replay: %s", line)
		}
		if bytes.Contains(l.Entry, []byte(`"chain":"fx-quiet"`)) {
			quietN++
		}
		replayed = append(replayed, l.Entry)
	}
	if quietN < 8 {
		t.Fatalf("fx-quiet: %d entries replayed, want its 4 tool calls (8 entries) at least", quietN)
	}

	ex := cli(append([]string{"export", "--format", "ndjson"}, window...)...)
	if ex.code != 0 {
		t.Fatalf("export: exit %d\n%s", ex.code, ex.stderr)
	}
	exported := bytes.Split(bytes.TrimSuffix([]byte(ex.stdout), []byte("\n")), []byte("\n"))
	if len(exported) != len(replayed) {
		t.Fatalf("replay %d entries, export %d", len(replayed), len(exported))
	}
	for i := range exported {
		if !bytes.Equal(exported[i], replayed[i]) {
			t.Fatalf("entry %d differs:\nreplay %s\nexport %s", i, replayed[i], exported[i])
		}
	}

	// The compliance report over the same system: the archive's reach and
	// its verification back AU-11, the chains AU-9.
	cr := cli("compliance", "report", "--format", "json")
	var rep struct {
		Controls []struct {
			ID       string   `json:"id"`
			Status   string   `json:"status"`
			Evidence []string `json:"evidence"`
		} `json:"controls"`
	}
	if err := json.Unmarshal([]byte(cr.stdout), &rep); err != nil || len(rep.Controls) != 14 || cr.code == 2 {
		t.Fatalf("compliance report: exit %d, %v\n%s\n%s", cr.code, err, cr.stdout, cr.stderr)
	}
	for _, c := range rep.Controls {
		ev := strings.Join(c.Evidence, "\n")
		switch {
		case c.ID == "AU-11" && (c.Status != "evidence" || !strings.Contains(ev, "segments") || !strings.Contains(ev, ": 0 problems")):
			t.Errorf("AU-11: %+v", c)
		case c.ID == "AU-9" && (c.Status != "evidence" || !strings.Contains(ev, " 0 faults")):
			t.Errorf("AU-9: %+v", c)
		}
	}

	// Re-import into a scratch stream on a server of its own; ledger
	// verify recomputes every chain from the exported bytes.
	scratch := natstest.RunServer(t)
	_, js := natstest.Connect(t, scratch.ClientURL())
	if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: "SCRATCH", Subjects: []string{"scratch.>"}}); err != nil {
		t.Fatal(err)
	}
	chains := map[string]bool{}
	for _, e := range exported {
		var h struct {
			Chain string `json:"chain"`
		}
		if err := json.Unmarshal(e, &h, json.RejectUnknownMembers(false)); err != nil {
			t.Fatal(err)
		}
		chains[h.Chain] = true
		if _, err := js.Publish(t.Context(), "scratch."+h.Chain, e); err != nil {
			t.Fatal(err)
		}
	}
	v := runBin(t, []string{"HOME=" + t.TempDir()}, nil, "claimcheck", "ledger", "verify", "--stream", "SCRATCH",
		"--nats-url", scratch.ClientURL())
	want := fmt.Sprintf("ok: %d chains, %d entries", len(chains), len(exported))
	if v.code != 0 || !strings.Contains(v.stdout, want) {
		t.Fatalf("ledger verify of the re-imported export: exit %d, want %q\n%s\n%s", v.code, want, v.stdout, v.stderr)
	}
}

// otlpReceiver is an in-process OTLP/HTTP collector that keeps the spans
// and counts the log records it is sent.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	logs  int
}

func (o *otlpReceiver) serve(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	read := func(w http.ResponseWriter, r *http.Request, m proto.Message) bool {
		body, err := io.ReadAll(r.Body)
		if err == nil {
			err = proto.Unmarshal(body, m)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return false
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		return true
	}
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, r *http.Request) {
		var req collectortrace.ExportTraceServiceRequest
		if !read(w, r, &req) {
			return
		}
		o.mu.Lock()
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				o.spans = append(o.spans, ss.GetSpans()...)
			}
		}
		o.mu.Unlock()
		b, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		_, _ = w.Write(b)
	})
	mux.HandleFunc("POST /v1/logs", func(w http.ResponseWriter, r *http.Request) {
		var req collectorlogs.ExportLogsServiceRequest
		if !read(w, r, &req) {
			return
		}
		o.mu.Lock()
		for _, rl := range req.GetResourceLogs() {
			for _, sl := range rl.GetScopeLogs() {
				o.logs += len(sl.GetLogRecords())
			}
		}
		o.mu.Unlock()
		b, _ := proto.Marshal(&collectorlogs.ExportLogsServiceResponse{})
		_, _ = w.Write(b)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestOTLPExportTracesPerSession exports a live ledger's window to an
// in-process OTLP collector: one trace per session (its id derived from
// the session id), a root span and one span per tool call, and a log
// record per entry.
func TestOTLPExportTracesPerSession(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	since := time.Now().UTC().Add(-time.Second)
	upEnvs := []string{"CLAIMCHECK_HOOK_STATE_DIR=" + filepath.Join(dir, "hook")}
	_, url := upEnv(t, upEnvs, data, "127.0.0.1:0")
	env := append([]string{"CLAIMCHECK_NATS_URL=" + url, "CLAIMCHECK_HOOK_GATE=false", "CLAIMCHECK_DATA_DIR=" + data}, upEnvs...)
	calls := map[string]int{"otlp-a": 3, "otlp-b": 2}
	for s, k := range calls {
		a := newAgent(t, env, s)
		for i := range k {
			a.bash(fmt.Sprintf("go test ./pkg%d", i), "ok")
		}
	}
	entries := 0
	for s := range calls {
		got, _ := show(t, url, s, 2*calls[s])
		entries += len(got)
	}
	recv := &otlpReceiver{}
	endpoint := recv.serve(t)
	r := runBin(t, env, nil, "claimcheck", "export", "--format", "otlp", "--otlp-endpoint", endpoint, "--otlp-logs",
		"--since", since.Format(time.RFC3339Nano), "--session", "otlp-a")
	r2 := runBin(t, env, nil, "claimcheck", "export", "--format", "otlp", "--otlp-endpoint", endpoint, "--otlp-logs",
		"--since", since.Format(time.RFC3339Nano), "--session", "otlp-b")
	if r.code != 0 || r2.code != 0 {
		t.Fatalf("export --format otlp: %+v %+v", r, r2)
	}
	recv.mu.Lock()
	defer recv.mu.Unlock()
	byTrace := map[string]int{}
	for _, s := range recv.spans {
		byTrace[string(s.GetTraceId())]++
	}
	if len(byTrace) != len(calls) {
		t.Fatalf("%d traces, want one per session (%d)", len(byTrace), len(calls))
	}
	for s, k := range calls {
		sum := sha256.Sum256([]byte("claimcheck session " + s))
		if n := byTrace[string(sum[:16])]; n != k+1 {
			t.Errorf("%s: %d spans, want %d (the session and one per tool call)", s, n, k+1)
		}
	}
	if recv.logs != entries {
		t.Errorf("%d log records, want one per entry (%d)", recv.logs, entries)
	}
}

func bucketURL(dir string) string { return "file://" + filepath.ToSlash(dir) }

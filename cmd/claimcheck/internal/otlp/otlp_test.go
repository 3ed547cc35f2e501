package otlp

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	collectorlogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/pkg/replay"
	"github.com/claimcheck/claimcheck/schemas"
)

// receiver is an in-process OTLP collector: what it was sent, as the
// OTLP protobuf messages.
type receiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	logs  int
	// fail answers the first requests with an error, to see them retried.
	fail int
}

func (r *receiver) addTraces(req *collectortrace.ExportTraceServiceRequest) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail > 0 {
		r.fail--
		return fmt.Errorf("unavailable")
	}
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			r.spans = append(r.spans, ss.GetSpans()...)
		}
	}
	return nil
}

func (r *receiver) addLogs(req *collectorlogs.ExportLogsServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rl := range req.GetResourceLogs() {
		for _, sl := range rl.GetScopeLogs() {
			r.logs += len(sl.GetLogRecords())
		}
	}
}

type traceService struct {
	collectortrace.UnimplementedTraceServiceServer
	r *receiver
}

func (s traceService) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	if err := s.r.addTraces(req); err != nil {
		return nil, status.Error(grpccodes.Unavailable, err.Error())
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

type logsService struct {
	collectorlogs.UnimplementedLogsServiceServer
	r *receiver
}

func (s logsService) Export(_ context.Context, req *collectorlogs.ExportLogsServiceRequest) (*collectorlogs.ExportLogsServiceResponse, error) {
	s.r.addLogs(req)
	return &collectorlogs.ExportLogsServiceResponse{}, nil
}

// grpcReceiver serves OTLP/gRPC on a loopback port.
func grpcReceiver(t *testing.T, r *receiver) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(srv, traceService{r: r})
	collectorlogs.RegisterLogsServiceServer(srv, logsService{r: r})
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	return "http://" + l.Addr().String()
}

// httpReceiver serves OTLP/HTTP (protobuf) under /otel.
func httpReceiver(t *testing.T, r *receiver) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /otel/v1/traces", func(w http.ResponseWriter, req *http.Request) {
		var m collectortrace.ExportTraceServiceRequest
		if !decode(w, req, &m) {
			return
		}
		if err := r.addTraces(&m); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		reply(w, &collectortrace.ExportTraceServiceResponse{})
	})
	mux.HandleFunc("POST /otel/v1/logs", func(w http.ResponseWriter, req *http.Request) {
		var m collectorlogs.ExportLogsServiceRequest
		if !decode(w, req, &m) {
			return
		}
		r.addLogs(&m)
		reply(w, &collectorlogs.ExportLogsServiceResponse{})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/otel"
}

func decode(w http.ResponseWriter, req *http.Request, m proto.Message) bool {
	body, err := io.ReadAll(req.Body)
	if err == nil && req.Header.Get("Content-Type") != "application/x-protobuf" {
		err = fmt.Errorf("content type %q", req.Header.Get("Content-Type"))
	}
	if err == nil {
		err = proto.Unmarshal(body, m)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

func reply(w http.ResponseWriter, m proto.Message) {
	b, _ := proto.Marshal(m)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

// step is one entry of a fixture session.
type step struct {
	hook, tool, toolUse, payload string
	kind                         string
	verdict                      *schemas.Verdict
}

// sessions seals two sessions, s1 (two tool calls, the first allowed by a
// gate decision, the second failing; a PASS verdict; an end) and s2 (one
// tool call, and a result without its PreToolUse), entries a second apart.
func sessions(t *testing.T) []*replay.Record {
	t.Helper()
	gate := `{"session_id":"s1","hook_event_name":"GateDecision","decision":{"event_id":"01JD0000000000000000000S13","decision":"allow","rule":"pretool.allow","source":"gatekeeper"}}`
	plan := map[string][]step{
		"s1": {
			{hook: schemas.HookSessionStart, payload: `{"source":"startup"}`},
			{hook: schemas.HookUserPromptSubmit, payload: `{"prompt":"fix the login test"}`},
			{hook: schemas.HookPreToolUse, tool: "Bash", toolUse: "toolu_1", payload: `{"tool_input":{"command":"go test ./..."}}`},
			{hook: schemas.GateDecisionEvent, payload: gate},
			{hook: schemas.HookPostToolUse, tool: "Bash", toolUse: "toolu_1", payload: `{"tool_input":{"command":"go test ./..."}}`},
			{hook: schemas.HookPreToolUse, tool: "Edit", toolUse: "toolu_2", payload: `{"tool_input":{"file_path":"/src/a.go"}}`},
			{hook: schemas.HookPostToolUseFailure, tool: "Edit", toolUse: "toolu_2", payload: `{"error":"file changed on disk"}`},
			{kind: schemas.EntryVerdict, verdict: &schemas.Verdict{Args: jsontext.Value(`{}`), AttestationID: "01M80WE0KB0GHCCYC51DTJMBRY",
				Claim: "done", Reasons: []string{}, Validator: "test_pass", Verdict: "PASS"}},
			{hook: schemas.HookStop, payload: `{"last_assistant_message":"Done."}`},
			{hook: schemas.HookSessionEnd, payload: `{"reason":"exit"}`},
		},
		"s2": {
			{hook: schemas.HookPreToolUse, tool: "Read", toolUse: "toolu_3", payload: `{"tool_input":{"file_path":"/src/b.go"}}`},
			{hook: schemas.HookPostToolUse, tool: "Read", toolUse: "toolu_3", payload: `{"tool_input":{"file_path":"/src/b.go"}}`},
			{hook: schemas.HookPostToolUse, tool: "Bash", toolUse: "toolu_4", payload: `{"tool_input":{"command":"ls"}}`},
		},
	}
	at := time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)
	var out []*replay.Record
	seq := uint64(0)
	for _, c := range []string{"s1", "s2"} {
		prev := digest.Zero
		for i, s := range plan[c] {
			seq++
			kind := s.kind
			if kind == "" {
				kind = schemas.EntryEvent
			}
			e := schemas.Entry{V: 1, Kind: kind, N: uint64(i + 1), PrevHash: prev, Chain: c, SessionID: c, Host: "dev1",
				EventID: fmt.Sprintf("01JD0000000000000000000%s%d", strings.ToUpper(c), i+1), HookEvent: s.hook, ToolName: s.tool,
				ToolUseID: s.toolUse, Verdict: s.verdict, Bundle: "test",
				ReceivedAt: at.Add(time.Duration(seq) * time.Second).Format(time.RFC3339Nano), IngestedAt: at.Add(time.Duration(seq) * time.Second).Format(time.RFC3339Nano)}
			if s.payload != "" {
				p := s.payload
				e.Payload = &p
			}
			raw, err := chain.Seal(&e)
			if err != nil {
				t.Fatal(err)
			}
			prev = e.Hash
			out = append(out, &replay.Record{Pos: replay.Pos{Seq: seq, Index: 1}, Source: replay.SourceHot, Chain: c, Raw: raw,
				Check: replay.CheckOK})
		}
	}
	return out
}

func attr(s *tracepb.Span, key string) *commonpb.AnyValue {
	for _, kv := range s.GetAttributes() {
		if kv.GetKey() == key {
			return kv.GetValue()
		}
	}
	return nil
}

// TestSessionsBecomeTraces sends two sessions over gRPC and over HTTP to
// an in-process collector: one trace a session (its id derived from the
// session), a root span and a span per tool call from PreToolUse to
// PostToolUse, the gate decision an event of its tool call, the verdict an
// event of the session, every entry a log record. The collector's first
// trace request fails and is retried.
func TestSessionsBecomeTraces(t *testing.T) {
	for _, proto := range []string{GRPC, HTTP} {
		t.Run(proto, func(t *testing.T) {
			r := &receiver{fail: 1}
			endpoint := httpReceiver(t, r)
			if proto == GRPC {
				endpoint = grpcReceiver(t, r)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			e, err := New(ctx, Config{Endpoint: endpoint, Protocol: proto, Logs: true, Timeout: 5 * time.Second, RetryAfter: 50 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			recs := sessions(t)
			for _, rec := range recs {
				if err := e.Write(rec); err != nil {
					t.Fatal(err)
				}
			}
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.logs != len(recs) {
				t.Errorf("%d log records, want %d", r.logs, len(recs))
			}
			byTrace := map[string][]*tracepb.Span{}
			for _, s := range r.spans {
				byTrace[string(s.GetTraceId())] = append(byTrace[string(s.GetTraceId())], s)
			}
			if len(byTrace) != 2 || len(r.spans) != 6 || e.Spans != 6 {
				t.Fatalf("%d traces, %d spans (%d made), want 2 traces of 3 spans", len(byTrace), len(r.spans), e.Spans)
			}
			for _, c := range []string{"s1", "s2"} {
				id := TraceID(c)
				spans := byTrace[string(id[:])]
				if len(spans) != 3 {
					t.Fatalf("%s: %d spans in its trace", c, len(spans))
				}
				var root *tracepb.Span
				for _, s := range spans {
					if len(s.GetParentSpanId()) == 0 {
						root = s
					}
				}
				if root == nil || root.GetName() != "session "+c {
					t.Fatalf("%s: no root span", c)
				}
				for _, s := range spans {
					if s == root {
						continue
					}
					if string(s.GetParentSpanId()) != string(root.GetSpanId()) {
						t.Errorf("%s: span %s is not the session's child", c, s.GetName())
					}
					dur := time.Duration(s.GetEndTimeUnixNano() - s.GetStartTimeUnixNano())
					switch attr(s, "gen_ai.tool.call.id").GetStringValue() {
					case "toolu_1":
						if dur != 2*time.Second || s.GetStatus().GetCode() != tracepb.Status_STATUS_CODE_OK ||
							attr(s, "claimcheck.pos").GetStringValue() != "3.1" || attr(s, "claimcheck.post.pos").GetStringValue() != "5.1" ||
							attr(s, "claimcheck.hash") == nil || attr(s, "process.command_line").GetStringValue() != "go test ./..." {
							t.Errorf("toolu_1: %v", s)
						}
						if len(s.GetEvents()) != 1 || s.GetEvents()[0].GetName() != "claimcheck.gate.decision" {
							t.Errorf("toolu_1: the gate decision is not its event: %v", s.GetEvents())
						}
					case "toolu_2":
						if dur != time.Second || s.GetStatus().GetCode() != tracepb.Status_STATUS_CODE_ERROR ||
							s.GetStatus().GetMessage() != "file changed on disk" {
							t.Errorf("toolu_2: %v", s)
						}
					case "toolu_3":
						if dur != time.Second {
							t.Errorf("toolu_3: %v", s)
						}
					case "toolu_4":
						if dur != 0 || !attr(s, "claimcheck.pre_missing").GetBoolValue() {
							t.Errorf("toolu_4: %v", s)
						}
					default:
						t.Errorf("unexpected span %v", s)
					}
				}
				if c == "s1" {
					var verdict bool
					for _, ev := range root.GetEvents() {
						if ev.GetName() == "claimcheck.verdict" {
							for _, kv := range ev.GetAttributes() {
								verdict = verdict || kv.GetValue().GetStringValue() == "01M80WE0KB0GHCCYC51DTJMBRY"
							}
						}
					}
					if !verdict || time.Duration(root.GetEndTimeUnixNano()-root.GetStartTimeUnixNano()) != 9*time.Second {
						t.Errorf("s1 root: %v", root)
					}
				}
			}
		})
	}
}

func TestConfigCheckNamesTheFlag(t *testing.T) {
	for _, tt := range []struct {
		cfg  Config
		want string
	}{
		{Config{Endpoint: "collector:4317"}, "--otlp-endpoint"},
		{Config{Endpoint: "grpc://collector:4317"}, "--otlp-endpoint"},
		{Config{Endpoint: "http://"}, "--otlp-endpoint"},
		{Config{Endpoint: "http://collector:4318", Protocol: "thrift"}, `--otlp-protocol "thrift"`},
	} {
		if err := tt.cfg.Check(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v", tt.cfg, err)
		}
	}
	if err := (Config{Endpoint: "https://collector:4318/prefix", Protocol: GRPC}).Check(); err != nil {
		t.Error(err)
	}
}

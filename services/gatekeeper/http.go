package gatekeeper

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/claimcheck/claimcheck/pkg/decision"
	"github.com/claimcheck/claimcheck/pkg/dialect"
	"github.com/claimcheck/claimcheck/pkg/envelope"
	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/intake"
	"github.com/claimcheck/claimcheck/pkg/payload"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
)

// ClaudeHookPath is the endpoint for Claude Code's `type: "http"` hooks.
const ClaudeHookPath = "/v1/hooks/claude"

// maxHTTPBody bounds a hook body (as claimcheck-hook's input cap).
const maxHTTPBody = 1<<20 - 8<<10

// HostHeader names the agent's host in the ledger (Claude Code http hooks
// can send headers); without it the client's address is used.
const HostHeader = "X-Claimcheck-Host"

// HTTPHandler serves POST /v1/hooks/claude: Claude Code's http hook type.
// The body is the hook payload. The gatekeeper records it in INTAKE (as
// claimcheck-hook would), decides Stop, PreToolUse and UserPromptSubmit
// as on the NATS subjects, and answers with a 200 and the JSON Claude Code
// reads (empty for "go on"). The decision is signed and recorded like any
// other; the HTTP client gets it unwrapped, over the connection it opened.
//
// Claude Code treats http hooks as fail-open: a connection error, timeout
// or non-2xx status lets the action through. For fail-closed gating use
// the command hook (claimcheck-hook). Where the gatekeeper itself cannot
// check a gated event (bad input, the event cannot be recorded) it still
// answers 200 with block or deny.
func (s *Service) HTTPHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+ClaudeHookPath, s.serveClaude)
	return mux
}

func (s *Service) serveClaude(w http.ResponseWriter, r *http.Request) {
	started := time.Now()
	if tok := s.cfg.HTTPToken; tok != "" {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(tok)) != 1 {
			httpError(w, http.StatusUnauthorized, "missing or wrong bearer token (Authorization: Bearer <gatekeeper.http_token>)")
			return
		}
	}
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		httpError(w, http.StatusUnsupportedMediaType, "content type "+ct+": want application/json")
		return
	}
	select {
	case s.inflight <- struct{}{}:
		defer func() { <-s.inflight }()
	case <-r.Context().Done():
		return
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxHTTPBody))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		err = fmt.Errorf("%w: more than %d bytes", payload.ErrTooLarge, maxHTTPBody)
	}
	raw = bytes.TrimSpace(raw)
	var info payload.Info
	if err == nil {
		if info, err = payload.Inspect(raw, payload.DefaultMaxDepth); err == nil {
			err = id.CheckSession(info.SessionID)
		}
	}
	host := r.Header.Get(HostHeader)
	if host == "" {
		host, _, _ = net.SplitHostPort(r.RemoteAddr)
	}
	src := envelope.Source{Host: host, AgentType: "claude-code", AgentID: "http"}
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	if err != nil {
		s.recordRejected(ctx, info, raw, src, err)
		s.answerUnchecked(w, r, info, started, "the hook input was rejected: "+err.Error())
		return
	}
	eventID, _ := s.gen.New()
	pub := intake.Publisher{JS: s.js, Origin: subject.OriginHTTP, Name: s.set.Name}
	if err := pub.Event(ctx, eventID, info.SessionID, info.HookEvent, s.set.Clock.Now(), src, raw); err != nil {
		s.m.failures.WithLabelValues("http_record").Inc()
		s.answerUnchecked(w, r, info, started, "the event could not be recorded: "+err.Error())
		return
	}
	switch {
	case info.HookEvent == schemas.HookStop, info.HookEvent == schemas.HookPreToolUse, info.HookEvent == schemas.HookUserPromptSubmit:
	case (info.HookEvent == schemas.HookPostToolUse || info.HookEvent == schemas.HookPostToolUseFailure) &&
		dialect.Inspected(info.ToolName):
	default:
		w.WriteHeader(http.StatusOK) // recorded; nothing to decide
		return
	}
	var nb [16]byte
	_, _ = rand.Read(nb[:])
	req := schemas.GateRequest{V: 1, Nonce: hex.EncodeToString(nb[:]), EventID: eventID, SessionID: info.SessionID,
		HookEvent: info.HookEvent,
		Host:      host, AgentType: "claude-code", AgentID: "http", Payload: jsontext.Value(raw)}
	d := s.decide(ctx, req, nil)
	if _, err := s.finish(ctx, &d, started); err != nil {
		s.answerUnchecked(w, r, info, started, "the decision could not be signed: "+err.Error())
		return
	}
	writeAnswer(w, d)
}

// answerUnchecked answers what could not be checked: a gated event is
// blocked or denied (and the decision recorded when the session is known),
// anything else gets a 400 or 503 that Claude Code reports and ignores.
func (s *Service) answerUnchecked(w http.ResponseWriter, r *http.Request, info payload.Info, started time.Time, why string) {
	if info.HookEvent != schemas.HookStop && info.HookEvent != schemas.HookPreToolUse {
		status := http.StatusBadRequest
		if strings.HasPrefix(why, "the event could not be recorded") {
			status = http.StatusServiceUnavailable
		}
		httpError(w, status, why)
		return
	}
	d := s.refusal(schemas.GateRequest{SessionID: info.SessionID, HookEvent: info.HookEvent}, errors.New(why))
	d.Rule = schemas.RuleHTTPFailClosed
	if id.CheckSession(info.SessionID) == nil {
		_, _ = s.finish(r.Context(), &d, started)
	}
	writeAnswer(w, d)
}

func (s *Service) recordRejected(ctx context.Context, info payload.Info, raw []byte, src envelope.Source, cause error) {
	eid, _ := s.gen.New()
	env, err := envelope.Rejected(eid, info.SessionID, info.HookEvent, 0, s.set.Clock.Now(), src, "", len(raw), raw, cause.Error())
	if err != nil {
		return
	}
	pub := intake.Publisher{JS: s.js, Origin: subject.OriginHTTP, Name: s.set.Name}
	if err := pub.Publish(ctx, schemas.RejectedChain, info.HookEvent, eid, env); err != nil {
		s.m.failures.WithLabelValues("http_record").Inc()
	}
}

func writeAnswer(w http.ResponseWriter, d schemas.GateDecision) {
	out := decision.ClaudeAnswer(d)
	if len(out) > 0 {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}

func httpError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := jsontext.AppendQuote(nil, msg)
	_, _ = w.Write(append(append([]byte(`{"error":`), b...), "}\n"...))
}

// serveHTTP runs the hook endpoint until ctx ends.
func (s *Service) serveHTTP(ctx context.Context) (stop func(), err error) {
	ln, err := net.Listen("tcp", s.cfg.HTTPListen)
	if err != nil {
		return nil, fmt.Errorf("gatekeeper.http_listen %s: %w", s.cfg.HTTPListen, err)
	}
	s.httpAddr.Store(ln.Addr().String())
	srv := &http.Server{Handler: s.HTTPHandler(), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 15 * time.Second,
		WriteTimeout: 30 * time.Second,
		BaseContext:  func(net.Listener) context.Context { return context.WithoutCancel(ctx) }}
	go func() { _ = srv.Serve(ln) }()
	s.set.Logger.InfoContext(ctx,
		"gatekeeper: Claude Code http hook endpoint", slog.Any("url", "http://"+ln.Addr().String()+ClaudeHookPath), slog.Any(
			"token", s.cfg.HTTPToken != ""))
	return func() {
		// Called once ctx has ended: the shutdown gets 5 s of its own.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}, nil
}

// HTTPAddr is the address the hook endpoint listens on ("" when disabled).
func (s *Service) HTTPAddr() string {
	a, _ := s.httpAddr.Load().(string)
	return a
}

// Package otlp exports replayed ledger entries over OTLP with the
// OpenTelemetry Go SDK: each session as a trace (a root span for the
// session, a span per tool call from its PreToolUse to its PostToolUse,
// span events for gate decisions, verdicts, overrides, alerts and crashes)
// and, optionally, every entry as a log record. Spans and logs go through
// the SDK's batching processors and the OTLP exporters' retries, to a
// collector over gRPC or HTTP.
package otlp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/claimcheck/claimcheck/pkg/export"
	"github.com/claimcheck/claimcheck/pkg/replay"
	"github.com/claimcheck/claimcheck/schemas"
)

// Protocols.
const (
	GRPC = "grpc"
	HTTP = "http/protobuf"
)

// Config is where and how to export.
type Config struct {
	// Endpoint is the collector's URL: http://host:4318 (HTTP, the path
	// defaults to /v1/traces and /v1/logs) or http://host:4317 with
	// Protocol grpc; https for TLS.
	Endpoint string
	Protocol string // GRPC or HTTP (default HTTP, as OpenTelemetry's own default)
	// Logs also exports every entry as a log record.
	Logs bool
	// Timeout bounds each export request (default 10s); failed requests
	// are retried by the exporters with exponential backoff, for a minute.
	Timeout time.Duration
	// RetryAfter is the first retry's backoff (default 5s, the exporters').
	RetryAfter time.Duration
}

// Check validates the configuration, naming the flag that is wrong.
func (c Config) Check() error {
	u, err := url.Parse(c.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--otlp-endpoint %q: want http://host:port or https://host:port", c.Endpoint)
	}
	if c.Protocol != "" && c.Protocol != GRPC && c.Protocol != HTTP {
		return fmt.Errorf("--otlp-protocol %q: want grpc or http/protobuf", c.Protocol)
	}
	return nil
}

// Exporter turns records into spans and log records.
type Exporter struct {
	tp       *sdktrace.TracerProvider
	lp       *sdklog.LoggerProvider
	tracer   trace.Tracer
	logger   otellog.Logger
	sessions map[string]*session
	ctx      context.Context
	// Spans and Logs count what was handed to the SDK.
	Spans, Logs int
}

// session is one session's trace while it is being built.
type session struct {
	ctx   context.Context // carries the root span
	root  trace.Span
	last  time.Time
	calls map[string]trace.Span // open tool calls by tool_use_id
	// byEvent finds a tool call's span by its PreToolUse's event id (gate
	// decisions name the event they decided).
	byEvent map[string]trace.Span
}

// New connects the exporters (lazily: nothing is sent before the first
// batch).
func New(ctx context.Context, cfg Config) (*Exporter, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = 5 * time.Second
	}
	retry := struct {
		Enabled                           bool
		InitialInterval, MaxInterval, Max time.Duration
	}{true, cfg.RetryAfter, 30 * time.Second, time.Minute}
	u, _ := url.Parse(cfg.Endpoint)
	secure := u.Scheme == "https"
	res := resource.NewSchemaless(attribute.String("service.name", "claimcheck"),
		attribute.String("service.namespace", "claimcheck.ledger"))
	var spanExp sdktrace.SpanExporter
	var logExp sdklog.Exporter
	var err error
	if cfg.Protocol == GRPC {
		topts := []otlptracegrpc.Option{otlptracegrpc.WithEndpoint(u.Host), otlptracegrpc.WithTimeout(cfg.Timeout),
			otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: retry.Enabled, InitialInterval: retry.InitialInterval,
				MaxInterval: retry.MaxInterval, MaxElapsedTime: retry.Max})}
		lopts := []otlploggrpc.Option{otlploggrpc.WithEndpoint(u.Host), otlploggrpc.WithTimeout(cfg.Timeout),
			otlploggrpc.WithRetry(otlploggrpc.RetryConfig{Enabled: retry.Enabled, InitialInterval: retry.InitialInterval,
				MaxInterval: retry.MaxInterval, MaxElapsedTime: retry.Max})}
		if !secure {
			topts, lopts = append(topts, otlptracegrpc.WithInsecure()), append(lopts, otlploggrpc.WithInsecure())
		}
		if spanExp, err = otlptracegrpc.New(ctx, topts...); err == nil && cfg.Logs {
			logExp, err = otlploggrpc.New(ctx, lopts...)
		}
	} else {
		base := strings.TrimSuffix(u.Path, "/")
		topts := []otlptracehttp.Option{otlptracehttp.WithEndpoint(u.Host), otlptracehttp.WithURLPath(base + "/v1/traces"),
			otlptracehttp.WithTimeout(cfg.Timeout),
			otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: retry.Enabled, InitialInterval: retry.InitialInterval,
				MaxInterval: retry.MaxInterval, MaxElapsedTime: retry.Max})}
		lopts := []otlploghttp.Option{otlploghttp.WithEndpoint(u.Host), otlploghttp.WithURLPath(base + "/v1/logs"),
			otlploghttp.WithTimeout(cfg.Timeout),
			otlploghttp.WithRetry(otlploghttp.RetryConfig{Enabled: retry.Enabled, InitialInterval: retry.InitialInterval,
				MaxInterval: retry.MaxInterval, MaxElapsedTime: retry.Max})}
		if !secure {
			topts, lopts = append(topts, otlptracehttp.WithInsecure()), append(lopts, otlploghttp.WithInsecure())
		}
		if spanExp, err = otlptracehttp.New(ctx, topts...); err == nil && cfg.Logs {
			logExp, err = otlploghttp.New(ctx, lopts...)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("otlp exporter: %w", err)
	}
	e := &Exporter{sessions: map[string]*session{}, ctx: ctx}
	e.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(spanExp), sdktrace.WithResource(res),
		sdktrace.WithIDGenerator(&ids{}), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	e.tracer = e.tp.Tracer("github.com/claimcheck/claimcheck/ledger")
	if logExp != nil {
		e.lp = sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(logExp)), sdklog.WithResource(res))
		e.logger = e.lp.Logger("github.com/claimcheck/claimcheck/ledger")
	}
	return e, nil
}

// sessionKey carries the session whose trace a root span starts.
type sessionKey struct{}

// TraceID is the trace a session's spans belong to: derived from the
// session id, so that exporting a session again, or a later window of
// it, adds to the same trace.
func TraceID(sessionID string) trace.TraceID {
	sum := sha256.Sum256([]byte("claimcheck session " + sessionID))
	var t trace.TraceID
	copy(t[:], sum[:16])
	return t
}

// ids generates trace ids from sessions and random span ids.
type ids struct{ mu sync.Mutex }

func (g *ids) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	var t trace.TraceID
	if s, ok := ctx.Value(sessionKey{}).(string); ok {
		t = TraceID(s)
	} else {
		_, _ = rand.Read(t[:])
	}
	return t, g.NewSpanID(ctx, t)
}

func (g *ids) NewSpanID(context.Context, trace.TraceID) trace.SpanID {
	g.mu.Lock()
	defer g.mu.Unlock()
	var s trace.SpanID
	for !s.IsValid() {
		_, _ = rand.Read(s[:])
	}
	return s
}

// Write adds one record: to its session's trace, and as a log record.
func (e *Exporter) Write(r *replay.Record) error {
	d := export.Decode(r)
	en := &d.Entry
	at := entryTime(en)
	s := e.session(r.Chain, at)
	if at.After(s.last) {
		s.last = at
	}
	ctx := s.ctx
	common := []attribute.KeyValue{attribute.String("claimcheck.pos", r.Pos.String()), attribute.Int64("claimcheck.n", int64(en.N)),
		attribute.String("claimcheck.hash", en.Hash), attribute.String("claimcheck.check", string(r.Check))}
	switch en.HookEvent {
	case schemas.HookPreToolUse:
		_, span := e.tracer.Start(s.ctx, en.ToolName, trace.WithTimestamp(at), trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithAttributes(append(common, toolAttrs(&d)...)...))
		e.Spans++
		if old := s.calls[en.ToolUseID]; old != nil {
			old.SetAttributes(attribute.Bool("claimcheck.post_missing", true))
			old.End(trace.WithTimestamp(at))
		}
		s.calls[en.ToolUseID] = span
		s.byEvent[en.EventID] = span
		ctx = trace.ContextWithSpan(s.ctx, span)
	case schemas.HookPostToolUse, schemas.HookPostToolUseFailure:
		span := s.calls[en.ToolUseID]
		if span == nil {
			// A result without its PreToolUse (before the window, or not
			// from the tool loop): a span of its own, marked.
			_, span = e.tracer.Start(s.ctx, en.ToolName, trace.WithTimestamp(at),
				trace.WithAttributes(append(toolAttrs(&d), attribute.Bool("claimcheck.pre_missing", true))...))
			e.Spans++
		}
		delete(s.calls, en.ToolUseID)
		span.SetAttributes(attribute.String("claimcheck.post.pos", r.Pos.String()), attribute.Int64("claimcheck.post.n", int64(en.N)),
			attribute.String("claimcheck.post.hash", en.Hash), attribute.String("claimcheck.post.check", string(r.Check)))
		if en.HookEvent == schemas.HookPostToolUseFailure {
			span.SetStatus(codes.Error, d.Error)
		} else {
			span.SetStatus(codes.Ok, "")
		}
		ctx = trace.ContextWithSpan(s.ctx, span)
		span.End(trace.WithTimestamp(at))
	default:
		if name, attrs := eventOf(&d); name != "" {
			target := s.root
			if sp := s.byEvent[d.DecisionEventID]; sp != nil && d.DecisionEventID != "" {
				target = sp
			}
			target.AddEvent(name, trace.WithTimestamp(at), trace.WithAttributes(append(common, attrs...)...))
		}
		if en.HookEvent == schemas.HookSessionEnd {
			e.endSession(r.Chain, s)
		}
	}
	if e.logger != nil {
		e.emitLog(ctx, r, &d, at)
	}
	return nil
}

// session returns the chain's trace, starting its root span.
func (e *Exporter) session(chainName string, at time.Time) *session {
	if s := e.sessions[chainName]; s != nil && s.root != nil {
		return s
	}
	ctx := context.WithValue(e.ctx, sessionKey{}, chainName)
	ctx, root := e.tracer.Start(ctx, "session "+chainName, trace.WithTimestamp(at), trace.WithNewRoot(),
		trace.WithAttributes(attribute.String("claimcheck.session_id", chainName)))
	e.Spans++
	s := &session{ctx: ctx, root: root, last: at, calls: map[string]trace.Span{}, byEvent: map[string]trace.Span{}}
	e.sessions[chainName] = s
	return s
}

// endSession ends a session's open tool calls (marked: no result seen)
// and its root span, at the last time seen.
func (e *Exporter) endSession(chainName string, s *session) {
	for id, sp := range s.calls {
		sp.SetAttributes(attribute.Bool("claimcheck.post_missing", true))
		sp.End(trace.WithTimestamp(s.last))
		delete(s.calls, id)
	}
	s.root.End(trace.WithTimestamp(s.last))
	s.root = nil
	delete(e.sessions, chainName)
}

// Flush sends the spans that ended and the log records so far.
func (e *Exporter) Flush() error {
	errs := []error{e.tp.ForceFlush(e.ctx)}
	if e.lp != nil {
		errs = append(errs, e.lp.ForceFlush(e.ctx))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("otlp export: %w", err)
	}
	return nil
}

// Close ends every open session and flushes spans and logs to the
// collector (the exporters retry failed batches until ctx ends).
func (e *Exporter) Close() error {
	for c, s := range e.sessions {
		e.endSession(c, s)
	}
	var errs []error
	errs = append(errs, e.tp.ForceFlush(e.ctx), e.tp.Shutdown(e.ctx))
	if e.lp != nil {
		errs = append(errs, e.lp.ForceFlush(e.ctx), e.lp.Shutdown(e.ctx))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("otlp export: %w", err)
	}
	return nil
}

func entryTime(e *schemas.Entry) time.Time {
	for _, s := range []string{e.ReceivedAt, e.IngestedAt} {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t
		}
	}
	return time.Time{}
}

// toolAttrs are a tool call's attributes (OpenTelemetry's gen_ai tool
// conventions where they have a name for it).
func toolAttrs(d *export.Decoded) []attribute.KeyValue {
	e := &d.Entry
	a := []attribute.KeyValue{attribute.String("gen_ai.tool.name", e.ToolName), attribute.String("gen_ai.tool.call.id", e.ToolUseID),
		attribute.String("claimcheck.session_id", e.SessionID), attribute.String("host.name", e.Host)}
	for k, v := range map[string]string{"process.command_line": d.Command, "file.path": d.FilePath, "url.full": d.URL} {
		if v != "" {
			a = append(a, attribute.String(k, v))
		}
	}
	return a
}

// eventOf names the span event an entry becomes, if any.
func eventOf(d *export.Decoded) (string, []attribute.KeyValue) {
	e := &d.Entry
	switch {
	case e.HookEvent == schemas.GateDecisionEvent:
		return "claimcheck.gate.decision", []attribute.KeyValue{attribute.String("claimcheck.decision", d.Decision),
			attribute.String("claimcheck.rule", d.Rule), attribute.String("claimcheck.reason", d.Reason),
			attribute.String("claimcheck.decision_source", d.DecisionSource)}
	case e.Kind == schemas.EntryVerdict:
		return "claimcheck.verdict", []attribute.KeyValue{attribute.String("claimcheck.claim", d.Claim),
			attribute.String("claimcheck.verdict", d.Verdict), attribute.String("claimcheck.attestation_id", d.AttestationID),
			attribute.String("claimcheck.validator", d.Validator)}
	case e.Kind == schemas.EntryClaim:
		return "claimcheck.claim", []attribute.KeyValue{attribute.String("claimcheck.claim", d.Claim),
			attribute.String("claimcheck.validator", d.Validator)}
	case e.HookEvent == schemas.GateOverrideEvent, e.HookEvent == schemas.OverrideEvent, e.HookEvent == schemas.GateAlertEvent,
		e.HookEvent == schemas.HookCrashEvent, e.HookEvent == schemas.GateFindingEvent, e.HookEvent == schemas.HookUserPromptSubmit,
		e.HookEvent == schemas.HookStop, e.HookEvent == schemas.HookSessionStart, e.HookEvent == schemas.HookSessionEnd:
		return "claimcheck." + e.HookEvent, []attribute.KeyValue{attribute.String("claimcheck.summary", d.Summary)}
	}
	return "", nil
}

// emitLog writes the entry as a log record, in the context of its span.
func (e *Exporter) emitLog(ctx context.Context, r *replay.Record, d *export.Decoded, at time.Time) {
	en := &d.Entry
	var rec otellog.Record
	rec.SetTimestamp(at)
	if t, err := time.Parse(time.RFC3339Nano, en.IngestedAt); err == nil {
		rec.SetObservedTimestamp(t)
	}
	sev, text := otellog.SeverityInfo, "INFO"
	switch {
	case r.Check == replay.CheckFault || en.HookEvent == schemas.HookCrashEvent:
		sev, text = otellog.SeverityError, "ERROR"
	case d.Decision == schemas.GateDeny || d.Decision == schemas.GateBlock || en.HookEvent == schemas.GateAlertEvent ||
		en.HookEvent == schemas.HookPostToolUseFailure:
		sev, text = otellog.SeverityWarn, "WARN"
	}
	rec.SetSeverity(sev)
	rec.SetSeverityText(text)
	rec.SetEventName("claimcheck." + first(en.HookEvent, en.Kind))
	rec.SetBody(attribute.StringValue(d.Summary))
	rec.AddAttributes(attribute.String("claimcheck.pos", r.Pos.String()), attribute.String("claimcheck.chain", r.Chain),
		attribute.Int64("claimcheck.n", int64(en.N)), attribute.String("claimcheck.hash", en.Hash),
		attribute.String("claimcheck.kind", en.Kind), attribute.String("claimcheck.hook_event", en.HookEvent),
		attribute.String("claimcheck.check", string(r.Check)), attribute.String("host.name", en.Host),
		attribute.String("event.original", string(r.Raw)))
	e.logger.Emit(ctx, rec)
	e.Logs++
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Package hook is claimcheck-hook, the command an agent CLI runs for every
// hook event. It reads one payload from stdin, wraps it in an event.v1
// envelope (event id, host, agent, per-session sequence, received time) and
// publishes it to INTAKE, waiting for JetStream's acknowledgement. When NATS
// cannot be reached it spools the event to a private directory; the next
// invocation delivers the spool first, in order. Inputs it cannot accept
// (too large, malformed, no or hostile session id) are recorded as rejected
// events with their digest and reason, and reported on stderr.
//
// For the events it only records it prints nothing on stdout and exits 0
// (Claude Code reads stdout as a hook decision). For Stop and PreToolUse it
// then asks the gatekeeper (cc.gate.*) with a fresh nonce, verifies the
// signed decision against a locally trusted key set and answers Claude
// Code; on any failure it answers block or deny (fail closed) unless the
// event is configured fail-open, and records the decision either way.
package hook

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/claimcheck/claimcheck/pkg/clock"
	"github.com/claimcheck/claimcheck/pkg/dialect"
	"github.com/claimcheck/claimcheck/pkg/envelope"
	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/oneshot"
	"github.com/claimcheck/claimcheck/pkg/payload"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
)

// Version is set at build time.
var Version = "dev"

// Main runs the hook and returns its exit code. A panic is reported on
// stderr and turned into a non-zero exit, never into silent success.
func Main(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	var h *hook
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "claimcheck-hook: internal error: %v\n", r)
			code = ExitFailed
			if h != nil && h.info.SessionID != "" {
				h.crashed(fmt.Errorf("internal error: %v", r))
			}
			if h != nil && h.gated != "" {
				// Fail closed: exit 2 blocks a Stop and denies a PreToolUse.
				fmt.Fprintf(stderr, "claimcheck blocked this %s because its hook failed (fail closed); tell the human\n", h.gated)
				code = ExitBlock
			}
		}
	}()
	cfg, rest, err := ParseConfig(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "claimcheck-hook: configuration: %v\n", err)
		return ExitRejected
	}
	h = &hook{cfg: cfg, stderr: stderr, gen: id.NewGenerator(clock.Real{}, id.FastEntropy{}),
		sp: spool{dir: filepath.Join(cfg.StateDir, "spool")}}
	switch {
	case len(rest) == 1 && rest[0] == "version":
		fmt.Fprintln(stdout, versionLine())
		return ExitOK
	case len(rest) == 1 && rest[0] == "flush":
		return h.flushCommand(ctx, stdout)
	case len(rest) > 0:
		fmt.Fprintf(stderr, "claimcheck-hook: unknown command %q (commands: flush)\n", rest[0])
		return ExitRejected
	}
	return h.record(ctx, stdin, stdout)
}

type hook struct {
	cfg    Config
	stderr io.Writer
	gen    *id.Generator
	sp     spool

	// keep makes deliver leave a working connection in conn (for the gate
	// request that follows); delivered reports the last deliver published
	// rather than spooled.
	keep      bool
	conn      *oneshot.Conn
	delivered bool
	q         *question // the gate request of a gated or audited event
	gated     string    // the gated event being answered (for the panic handler)
	rejected  bool      // the input was rejected (and recorded as such)
	// refused: NATS refused this host's credentials (revoked, expired,
	// unknown); events are spooled, and the hook says so.
	refused error
	// movedToFailed counts spooled events flush moved to failed/.
	movedToFailed int
	info          payload.Info
	eventID       string
	agent         dialect.Agent // the dialect of the payload read
	// agentEvent is the event as the agent named it (Cursor answers its
	// events in different shapes).
	agentEvent string
}

// crashed records a panic as a HookCrash, itself guarded: a second panic
// while recording is swallowed (the exit code already reports the first).
func (h *hook) crashed(cause error) {
	defer func() { _ = recover() }()
	ctx, cancel := context.WithTimeout(context.Background(), h.cfg.Deadline)
	defer cancel()
	if h.conn != nil {
		_ = h.conn.Close()
		h.conn = nil
	}
	h.recordCrash(ctx, h.info.SessionID, h.info.HookEvent, h.eventID, schemas.CrashPanic, cause)
}

// release closes c, or keeps it for the gate request.
func (h *hook) release(c *oneshot.Conn, ok bool) {
	if ok && h.keep && h.conn == nil {
		h.conn = c
		return
	}
	_ = c.Close()
}

func (h *hook) source() envelope.Source {
	return envelope.Source{Host: h.cfg.Host, AgentType: h.agentType(), AgentID: h.cfg.AgentID}
}

// agentType is --agent-type, or else the agent_type of the dialect read
// (of --agent before a payload is read).
func (h *hook) agentType() string {
	if h.cfg.AgentType != "" {
		return h.cfg.AgentType
	}
	if h.agent != "" {
		return h.agent.AgentType()
	}
	return h.cfg.Agent.AgentType()
}

// record handles one hook invocation.
func (h *hook) record(ctx context.Context, stdin io.Reader, stdout io.Writer) int {
	received := time.Now()
	raw, digest, size, inErr := h.read(stdin)
	var info payload.Info
	h.agent = h.cfg.Agent
	if inErr == nil {
		// The agent's dialect mapped onto the ledger's event model; raw
		// becomes what is published (the agent's bytes, or for a mapped
		// event the mapping carrying them).
		var ev dialect.Event
		ev, inErr = dialect.Read(h.cfg.Agent, raw, dialect.Options{MaxDepth: payload.DefaultMaxDepth, MaxBytes: MaxInputLimit,
			StopFeedback: func(session, prompt string) bool { return isStopReason(h.cfg.StateDir, session, prompt) },
			Event:        h.cfg.Event, Transcript: dialect.ReadTranscript})
		info, h.agent, h.agentEvent = ev.Info, ev.Agent, ev.AgentEvent
		if inErr == nil {
			if inErr = id.CheckSession(info.SessionID); inErr == nil {
				raw = ev.Payload
			}
		}
	}
	eventID, err := h.gen.New()
	if err != nil {
		fmt.Fprintf(h.stderr, "claimcheck-hook: %v\n", err)
		return ExitFailed
	}
	token := id.EventToken(info.HookEvent)
	chain := info.SessionID
	seqKey := info.SessionID
	if inErr != nil {
		chain, seqKey = schemas.RejectedChain, schemas.RejectedChain
	}
	seq, err := nextSeq(h.cfg.StateDir, seqKey)
	if err != nil {
		fmt.Fprintf(h.stderr, "claimcheck-hook: state dir %s: %v\n", h.cfg.StateDir, err)
		return ExitFailed
	}
	var env []byte
	if inErr != nil {
		env, err = envelope.Rejected(eventID, info.SessionID, info.HookEvent, seq, received, h.source(), digest, size, raw, inErr.Error())
	} else if info.HookEvent == schemas.HookSessionStart && h.agent == dialect.Claude {
		// The hook configuration read is Claude Code's settings layers.
		env, err = envelope.SessionStart(eventID, info.SessionID, seq, received, h.source(), raw, h.hookConfig(raw))
		if err != nil { // the configuration is evidence, not a reason to lose the event
			env, err = envelope.Event(eventID, info.SessionID, info.HookEvent, seq, received, h.source(), raw)
		}
	} else {
		env, err = envelope.Event(eventID, info.SessionID, info.HookEvent, seq, received, h.source(), raw)
	}
	if err != nil {
		fmt.Fprintf(h.stderr, "claimcheck-hook: %v\n", err)
		return ExitFailed
	}
	h.info, h.eventID, h.rejected = info, eventID, inErr != nil
	gated := h.cfg.Gate && GatedEvents[info.HookEvent]
	advisory := h.cfg.Gate && inErr == nil && info.HookEvent == schemas.HookUserPromptSubmit
	selfTest := inErr == nil && info.HookEvent == schemas.HookSessionStart
	// A tool result the post-tool firewall inspects.
	result := info.HookEvent == schemas.HookPostToolUse || info.HookEvent == schemas.HookPostToolUseFailure
	inspected := h.cfg.Gate && inErr == nil && result && dialect.Inspected(info.ToolName)
	advisory = advisory || inspected
	h.keep = (gated || advisory || selfTest) && inErr == nil
	if gated && !h.cfg.FailOpen[info.HookEvent] {
		h.gated = info.HookEvent
	}
	defer func() {
		if h.conn != nil {
			_ = h.conn.Close()
		}
	}()
	if (gated || advisory) && inErr == nil {
		h.q = h.prepare(info, eventID, raw)
	}
	if err := h.deliver(ctx, eventID, chain, token, env); err != nil {
		fmt.Fprintf(h.stderr, "claimcheck-hook: event %s was neither delivered nor spooled: %v\n", eventID, err)
		if gated {
			return h.fallback(ctx, stdout, info, eventID, seq, fmt.Errorf("the event could not be recorded: %w", err))
		}
		return ExitFailed
	}
	if h.refused != nil && !gated {
		// Not an outage: the credentials are no good (revoked?). The event
		// is kept; a non-zero exit makes the agent CLI show why.
		fmt.Fprintf(h.stderr,
			"claimcheck-hook: %v; event %s is kept in the spool. Ask for new credentials for this host (claimcheck creds issue --role hook)\n", h.refused, eventID)
		return ExitFailed
	}
	if inErr != nil {
		fmt.Fprintf(h.stderr, "claimcheck-hook: input rejected (recorded as event %s): %v\n", eventID, inErr)
		if gated {
			return h.fallback(ctx, stdout, info, eventID, seq, fmt.Errorf("the hook input was rejected: %w", inErr))
		}
		return ExitRejected
	}
	if info.HookEvent == schemas.HookUserPromptSubmit {
		h.countBlocks(func(int) int { return 0 }) // a prompt starts a turn, as for the gatekeeper
	}
	switch {
	case gated:
		return h.gate(ctx, stdout, received, info, eventID, seq)
	case inspected:
		return h.inspect(ctx, stdout, received, info, eventID)
	case advisory:
		return h.advise(ctx, stdout, received, info)
	case selfTest:
		return h.selfTest(ctx, stdout, received)
	}
	return ExitOK
}

// read reads stdin up to the cap. It returns the trimmed payload, and the
// digest and size of everything read. For oversized input it reads (and
// hashes, without keeping) the rest, up to 256 MiB, so that the rejected
// record carries the digest of the whole input.
func (h *hook) read(stdin io.Reader) (raw []byte, dig string, size int, err error) {
	hasher := sha256.New()
	buf, rerr := io.ReadAll(io.LimitReader(stdin, int64(h.cfg.MaxInputBytes)+1))
	hasher.Write(buf)
	size = len(buf)
	switch {
	case rerr != nil:
		err = fmt.Errorf("%w: reading stdin: %w", payload.ErrMalformed, rerr)
	case len(buf) > h.cfg.MaxInputBytes:
		n, _ := io.Copy(hasher, io.LimitReader(stdin, 256<<20))
		size += int(n)
		err = fmt.Errorf("%w: %d bytes or more, the limit is %d (--max-input-bytes)", payload.ErrTooLarge, size, h.cfg.MaxInputBytes)
	}
	trimmed := bytes.TrimSpace(buf)
	if err == nil {
		// The digest covers the payload as carried: without surrounding whitespace.
		sum := sha256.Sum256(trimmed)
		return trimmed, "sha256:" + hex.EncodeToString(sum[:]), len(trimmed), nil
	}
	return trimmed, "sha256:" + hex.EncodeToString(hasher.Sum(nil)), size, err
}

// deliver publishes one envelope, delivering any spool first; on failure it
// spools the envelope. It returns an error only when the event could not be
// kept at all.
func (h *hook) deliver(ctx context.Context, eventID, chain, token string, data []byte) error {
	ctx, cancel := context.WithTimeout(ctx, h.cfg.Deadline)
	defer cancel()
	subject := subject.Intake(subject.OriginHook, h.cfg.hostTok, chain, token)
	tried := false
	if !h.sp.pending() && !h.sp.recentlyUnreachable(h.cfg.RetryAfter) {
		// Fast path: nothing spooled, so publishing now keeps the order.
		tried = true
		err := h.publishNow(ctx, subject, eventID, data)
		switch {
		case errors.Is(err, oneshot.ErrNoTLS):
			// A configuration mistake, not an outage: say so every time.
			fmt.Fprintf(h.stderr, "claimcheck-hook: %v; the event is spooled until then\n", err)
		case errors.Is(err, oneshot.ErrRefused):
			h.refused = err
		}
		if err == nil {
			h.delivered = true
			return nil
		}
		if permanent(err) {
			return h.failed(eventID, chain, token, data, err)
		}
	}
	lk, err := h.sp.lock()
	if err != nil {
		return err
	}
	defer func() { _ = lk.Close() }()
	if !tried && !h.sp.recentlyUnreachable(h.cfg.RetryAfter) {
		tried = true
		if c, err := h.dial(ctx); errors.Is(err, oneshot.ErrRefused) {
			h.refused = err
		} else if err == nil {
			ok := h.flush(ctx, c)
			if ok {
				err = publish(ctx, c, subject, eventID, data)
				if err == nil {
					h.release(c, true)
					h.sp.clearUnreachable()
					h.delivered = true
					return nil
				}
				if permanent(err) {
					_ = c.Close()
					return h.failed(eventID, chain, token, data, err)
				}
			}
			_ = c.Close()
		}
	}
	if tried {
		// Only a failed attempt postpones the next one: a run that spooled
		// without trying must not, or hooks that run more often than
		// retry_after would never try NATS again.
		h.sp.markUnreachable()
	}
	if err := h.sp.add(eventID, chain, token, data); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	return nil
}

// publishNow publishes on the connection kept from this invocation's event
// (the gate decision record then needs no second connect and handshake),
// or on a new one; a kept connection that fails (say, left mid-message by a
// timed-out gate request) is dropped and the publish tried once more on a
// new connection. The gate request, if any, rides behind the first publish.
func (h *hook) publishNow(ctx context.Context, subject, eventID string, data []byte) error {
	if c := h.conn; c != nil {
		err := h.send(ctx, c, subject, eventID, data)
		if err == nil || permanent(err) {
			return err
		}
		_ = c.Close()
		h.conn = nil
	}
	c, err := h.dial(ctx)
	if err != nil {
		return err
	}
	err = h.send(ctx, c, subject, eventID, data)
	h.release(c, err == nil)
	return err
}

// send publishes one envelope on c and waits for its acknowledgement,
// sending the gate request right behind it.
func (h *hook) send(ctx context.Context, c *oneshot.Conn, subject, eventID string, data []byte) error {
	p, err := c.Send(ctx, subject, map[string]string{"Nats-Msg-Id": eventID}, data)
	if err != nil {
		return err
	}
	h.q.send(ctx, c)
	_, err = c.WaitAck(ctx, p)
	return err
}

// flush delivers spooled events in order; it stops at the first failure
// and reports whether the spool is now empty. The caller holds the lock.
func (h *hook) flush(ctx context.Context, c *oneshot.Conn) bool {
	entries, bad := h.sp.list()
	for _, name := range bad {
		fmt.Fprintf(h.stderr, "claimcheck-hook: spool file %s is not a claimcheck spool entry; moved to failed/\n", name)
		_ = h.sp.fail(name)
	}
	for _, e := range entries {
		data, err := h.sp.read(e)
		if err != nil {
			fmt.Fprintf(h.stderr, "claimcheck-hook: spool %s: %v\n", e.name, err)
			return false
		}
		err = publish(ctx, c, subject.Intake(subject.OriginHook, h.cfg.hostTok, e.chain, e.token), e.eventID, data)
		switch {
		case err == nil:
			_ = h.sp.remove(e)
		case permanent(err):
			fmt.Fprintf(h.stderr, "claimcheck-hook: NATS refused spooled event %s for good (%v); moved to failed/\n", e.eventID, err)
			_ = h.sp.fail(e.name)
			h.movedToFailed++
		default:
			if errors.Is(err, oneshot.ErrRefused) {
				h.refused = err
			}
			return false
		}
	}
	return true
}

func (h *hook) flushCommand(ctx context.Context, stdout io.Writer) int {
	ctx, cancel := context.WithTimeout(ctx, h.cfg.Deadline)
	defer cancel()
	lk, err := h.sp.lock()
	if err != nil {
		fmt.Fprintf(h.stderr, "claimcheck-hook: %v\n", err)
		return ExitFailed
	}
	defer func() { _ = lk.Close() }()
	before, _ := h.sp.list()
	c, err := h.dial(ctx)
	if err != nil {
		fmt.Fprintf(h.stderr, "claimcheck-hook: %d spooled events kept: %v\n", len(before), err)
		return ExitFailed
	}
	defer func() { _ = c.Close() }()
	ok := h.flush(ctx, c)
	after, _ := h.sp.list()
	if h.movedToFailed > 0 {
		fmt.Fprintf(stdout, "delivered %d spooled events, moved %d to failed/, %d remain\n",
			len(before)-len(after)-h.movedToFailed, h.movedToFailed, len(after))
	} else {
		fmt.Fprintf(stdout, "delivered %d spooled events, %d remain\n", len(before)-len(after), len(after))
	}
	if h.refused != nil {
		fmt.Fprintf(h.stderr, "claimcheck-hook: %v; this host needs new credentials (claimcheck creds issue --role hook)\n", h.refused)
	}
	if !ok {
		return ExitFailed
	}
	h.sp.clearUnreachable()
	return ExitOK
}

// failed keeps an event NATS refused permanently in failed/ and reports it.
func (h *hook) failed(eventID, chain, token string, data []byte, cause error) error {
	fs := spool{dir: filepath.Join(h.cfg.StateDir, "failed")}
	lk, err := fs.lock()
	if err == nil {
		err = fs.add(eventID, chain, token, data)
		_ = lk.Close()
	}
	if err != nil {
		return fmt.Errorf("NATS refused the event (%w) and keeping it in failed/ failed too: %w", cause, err)
	}
	return fmt.Errorf("NATS refused the event for good; kept in %s: %w", fs.dir, cause)
}

func (h *hook) dial(ctx context.Context) (*oneshot.Conn, error) {
	c, err := oneshot.Dial(ctx, oneshot.Options{URL: h.cfg.NATSURL, Name: "claimcheck-hook", Credentials: h.cfg.creds, Inbox: h.cfg.inbox,
		Bearer: h.cfg.bearer})
	if errors.Is(err, oneshot.ErrNoTLS) {
		return nil, fmt.Errorf(
			"%w: this claimcheck-hook is the lean build without TLS; run claimcheck-hook-tls for TLS NATS (`claimcheck hooks install` picks it for tls:// URLs)", err)
	}
	return c, err
}

// versionLine is what --version prints: the lean build says it has no TLS.
func versionLine() string {
	if oneshot.TLSSupported {
		return "claimcheck-hook " + Version
	}
	return "claimcheck-hook " + Version + " (lean build without TLS; claimcheck-hook-tls speaks TLS)"
}

func publish(ctx context.Context, c *oneshot.Conn, subject, eventID string, data []byte) error {
	_, err := c.Publish(ctx, subject, map[string]string{"Nats-Msg-Id": eventID}, data)
	return err
}

// JetStream refusals that are 4xx yet pass: the stream leader still holds
// an earlier publish of the same Nats-Msg-Id it has not committed (a
// retry right after a timed-out attempt, or a group that lost its quorum
// with the proposal in hand), and too many publishes in flight. Retrying
// the same id later gets the stored copy's ack or stores it.
const (
	errCodeDuplicateInProcess = 10158 // 409 "duplicate message id is in process"
	codeTooManyRequests       = 429
)

// permanent reports a refusal that retrying cannot fix (a 4xx JetStream
// error such as a message above the stream's size limit), which sends the
// event to failed/ instead of the spool.
func permanent(err error) bool {
	var apiErr *oneshot.APIError
	if !errors.As(err, &apiErr) || apiErr.Code < 400 || apiErr.Code >= 500 {
		return false
	}
	return apiErr.ErrCode != errCodeDuplicateInProcess && apiErr.Code != codeTooManyRequests
}

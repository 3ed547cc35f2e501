// Package record turns one INTAKE message into one (unsealed) ledger entry.
// It is pure: no NATS, no clock of its own, no I/O. Every input yields an
// entry — a valid event, an "invalid" record in the session's chain, or a
// "rejected" record in the _rejected chain — so nothing is ever dropped
// silently and no input can block another.
package record

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/claimcheck/claimcheck/pkg/contract"
	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/payload"
	"github.com/claimcheck/claimcheck/pkg/scrub"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/schemas/validation"
)

// Builder builds entries. It is safe for concurrent use.
type Builder struct {
	Scrub     *scrub.Scrubber
	Schemas   *validation.Validator
	InlineMax int    // scrubbed payloads larger than this are elided inline and stored whole as an artifact
	MaxDepth  int    // payload nesting limit
	Bundle    string // recorded in every entry
}

// Input is one INTAKE message.
type Input struct {
	// Subject is the stored subject,
	// cc.intake.<partition>.<origin>.<name>.<chain>.<event> (or a legacy
	// cc.intake.<partition>.<chain>.<event>).
	Subject string
	Seq     uint64    // INTAKE stream sequence
	Time    time.Time // when INTAKE stored it
	Data    []byte
	Now     time.Time // ingest time (recorded as ingested_at)
}

// Record is the outcome for one input.
type Record struct {
	Entry    *schemas.Entry
	Artifact []byte // the whole scrubbed payload, when Entry.Artifact is set
	Outcome  string // "event", "invalid", "rejected" or "claim", for metrics
	// Contract, when the input was an actionable prompt, is the contract
	// entry chained right after Entry.
	Contract *schemas.Entry
	// ReplyTo, for a claim request that is recorded as invalid, is the
	// requester's inbox (claim.v1's pattern), to be told why.
	ReplyTo string
}

const excerptBytes = 2048

// Build never fails: problems become invalid or rejected records.
func (b *Builder) Build(in Input) Record {
	st, ok := subject.ParseIntake(in.Subject)
	if !ok {
		return b.rejected(in, "", fmt.Sprintf("unexpected intake subject %s", id.Quote(in.Subject)), in.Data)
	}
	chainTok := st.Chain
	// invalid records a well-addressed envelope's problem in its session's
	// chain, if its publisher may write there at all.
	invalid := func(env *schemas.Envelope, reason string) Record {
		if why := admit(st, env); why != "" {
			return b.refused(in, env, why)
		}
		return b.invalid(in, env, reason)
	}
	var env schemas.Envelope
	if err := json.Unmarshal(in.Data, &env, json.RejectUnknownMembers(true)); err != nil {
		reason := "envelope is not a valid event.v1 document: " + trimErr(err)
		// If a lenient reading finds a well-addressed event (its session
		// matches the subject, its id is a ULID), record the problem in that
		// session's chain, where a reader of the session will see it.
		var loose schemas.Envelope
		if json.Unmarshal(in.Data, &loose, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)) == nil &&
			loose.Kind == schemas.KindEvent && id.CheckSession(loose.SessionID) == nil && loose.SessionID == chainTok &&
			id.ValidULID(loose.EventID) {
			return invalid(&loose, reason)
		}
		return b.rejected(in, "", reason, in.Data)
	}
	eventID := env.EventID
	if !id.ValidULID(eventID) {
		eventID = ""
	}
	wellAddressed := env.Kind == schemas.KindEvent && id.CheckSession(env.SessionID) == nil && chainTok == env.SessionID && eventID != ""
	raw := []byte(env.Payload)
	var info payload.Info
	var perr error
	if env.Kind == schemas.KindEvent && len(raw) > 0 {
		info, perr = payload.Inspect(raw, b.MaxDepth)
	}
	if perr != nil && wellAddressed {
		return invalid(&env, perr.Error())
	}
	if err := b.validateEnvelope(&env, info, perr == nil); err != nil {
		if wellAddressed {
			return invalid(&env, "envelope: "+err.Error())
		}
		return b.rejected(in, eventID, "envelope: "+err.Error(), in.Data)
	}
	if why := admit(st, &env); why != "" {
		return b.refused(in, &env, why)
	}
	switch env.Kind {
	case schemas.KindRejected:
		if chainTok != schemas.RejectedChain {
			return b.rejected(in, eventID, fmt.Sprintf("rejected input published on chain %s", id.Quote(chainTok)), nil)
		}
		r := b.rejected(in, eventID, "hook refused input: "+env.Rejected.Reason, []byte(env.Rejected.Excerpt))
		fillSource(r.Entry, &env)
		r.Entry.PayloadDigest, r.Entry.PayloadSize = env.PayloadDigest, env.PayloadSize
		return r
	case schemas.KindEvent:
	default:
		return b.rejected(in, eventID, fmt.Sprintf("unknown envelope kind %s", id.Quote(env.Kind)), in.Data)
	}
	if chainTok != env.SessionID {
		return b.rejected(in, eventID,
			fmt.Sprintf("subject names chain %s but the envelope names session %s", id.Quote(chainTok), id.Quote(env.SessionID)), in.Data)
	}
	if got := digest.SHA256(raw); got != env.PayloadDigest || len(raw) != env.PayloadSize {
		return b.invalid(in, &env,
			fmt.Sprintf("payload does not match its envelope: envelope says %s (%d bytes), payload is %s (%d bytes)", env.PayloadDigest,
				env.PayloadSize, got, len(raw)))
	}
	if info.SessionID != env.SessionID || info.HookEvent != env.HookEvent {
		return b.invalid(in, &env, fmt.Sprintf("envelope names session %s event %s, payload names session %s event %s",
			id.Quote(env.SessionID), id.Quote(env.HookEvent), id.Quote(info.SessionID), id.Quote(info.HookEvent)))
	}
	scrubbed, reds, err := b.Scrub.JSON(raw)
	if err != nil {
		return b.invalid(in, &env, err.Error())
	}
	e := b.base(in, &env, schemas.EntryEvent, env.SessionID)
	e.EventID = eventID
	e.ToolName, e.ToolUseID = info.ToolName, info.ToolUseID
	if info.ToolName != "" {
		e.ToolInput = payload.ToolInputDigest(raw)
	}
	e.PayloadDigest, e.PayloadSize = env.PayloadDigest, env.PayloadSize
	e.Redactions = reds
	e.HookConfig = env.HookConfig // schema-checked; SessionStart only
	rec := Record{Entry: e, Outcome: schemas.EntryEvent}
	inline := scrubbed
	if len(scrubbed) > b.InlineMax {
		inline = Elide(scrubbed, b.InlineMax)
		e.PayloadElided = true
		d := digest.SHA256(scrubbed)
		e.Artifact = &schemas.Artifact{Object: "sha256-" + digest.Hex(d), Digest: d, Size: len(scrubbed)}
		rec.Artifact = scrubbed
	}
	text := string(inline)
	e.Payload = &text
	switch env.HookEvent {
	case schemas.HookUserPromptSubmit:
		rec.Contract = b.contract(in, e, scrubbed)
	case schemas.ClaimRequestEvent:
		claim, err := b.claim(scrubbed)
		if err != nil {
			rec := b.invalid(in, &env, "claim request: "+err.Error())
			if checkReplyTo(st, replyInbox(scrubbed)) == "" {
				rec.ReplyTo = replyInbox(scrubbed)
			}
			return rec
		}
		if why := checkReplyTo(st, claim.ReplyTo); why != "" {
			return b.invalid(in, &env, "claim request: "+why)
		}
		e.Kind, e.Claim, rec.Outcome = schemas.EntryClaim, claim, schemas.EntryClaim
	}
	return rec
}

// refused records, in the _rejected chain, an envelope its publisher may
// not publish (another host's events, another role's records), with the
// envelope's attribution and the reason naming both.
func (b *Builder) refused(in Input, env *schemas.Envelope, why string) Record {
	eventID := ""
	if id.ValidULID(env.EventID) {
		eventID = env.EventID
	}
	src := []byte(env.Payload)
	if len(src) == 0 {
		src = in.Data
	}
	r := b.rejected(in, eventID, why, src)
	fillSource(r.Entry, env)
	return r
}

// contract derives the contract of an actionable prompt (from the scrubbed
// text, so a secret in a prompt never reaches a contract).
func (b *Builder) contract(in Input, prompt *schemas.Entry, scrubbed []byte) *schemas.Entry {
	var p struct {
		Prompt   string `json:"prompt"`
		PromptID string `json:"prompt_id"`
	}
	if json.Unmarshal(scrubbed, &p, json.RejectUnknownMembers(false)) != nil || p.Prompt == "" {
		return nil
	}
	c, ok := contract.Derive(
		contract.Prompt{SessionID: prompt.SessionID, EventID: prompt.EventID, PromptID: clip(p.PromptID, 256), Text: p.Prompt})
	if !ok {
		return nil
	}
	e := b.base(in, nil, schemas.EntryContract, prompt.Chain)
	e.SessionID, e.HookEvent = prompt.SessionID, prompt.HookEvent
	e.EventID = id.Derived(in.Time, []byte("contract\x00"+prompt.EventID))
	e.Contract = &c
	return e
}

// replyInbox returns a claim request's reply_to if it is an inbox subject.
func replyInbox(payload []byte) string {
	var r struct {
		ReplyTo string `json:"reply_to"`
	}
	if json.Unmarshal(payload, &r, json.RejectUnknownMembers(false)) != nil || !subject.ValidReply(r.ReplyTo) {
		return ""
	}
	return r.ReplyTo
}

// claimRequest is the payload `claimcheck claim` sends (claim.v1).
type claimRequest struct {
	SessionID     string         `json:"session_id"`
	HookEventName string         `json:"hook_event_name"`
	RequestID     string         `json:"request_id"`
	Claim         string         `json:"claim"`
	Validator     string         `json:"validator"`
	Args          jsontext.Value `json:"args"`
	ReplyTo       string         `json:"reply_to"`
}

func (b *Builder) claim(scrubbed []byte) (*schemas.Claim, error) {
	if err := b.Schemas.Validate(schemas.ClaimV1, scrubbed); err != nil {
		return nil, err
	}
	var r claimRequest
	if err := json.Unmarshal(scrubbed, &r, json.RejectUnknownMembers(true)); err != nil {
		return nil, err
	}
	if len(r.Args) > 8<<10 {
		return nil, fmt.Errorf("args are %d bytes; the limit is 8192", len(r.Args))
	}
	args := jsontext.Value(append([]byte(nil), r.Args...))
	if err := args.Canonicalize(); err != nil {
		return nil, fmt.Errorf("args: %w", err)
	}
	return &schemas.Claim{RequestID: r.RequestID, Claim: r.Claim, Validator: r.Validator, Args: args, ReplyTo: r.ReplyTo}, nil
}

// validateEnvelope checks the envelope against event.v1. The fast path
// (checkEnvelope, compiled by hand from the schema) accepts or refuses; only
// a refusal runs the JSON Schema validator, which is the authority and words
// the error. TestFastPathAgreesWithSchema and FuzzFastPathAgreesWithSchema
// keep the two in agreement. The payload, already checked strictly by
// payload.Inspect, is represented by the two members the schema constrains.
func (b *Builder) validateEnvelope(env *schemas.Envelope, info payload.Info, payloadOK bool) error {
	if checkEnvelope(env, payloadOK) {
		return nil
	}
	return b.schemaCheck(env, info, payloadOK)
}

func (b *Builder) schemaCheck(env *schemas.Envelope, info payload.Info, payloadOK bool) error {
	head := *env
	head.Payload = nil
	enc, err := json.Marshal(&head)
	if err != nil {
		return err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(enc))
	if err != nil {
		return err
	}
	if m, ok := doc.(map[string]any); ok && len(env.Payload) > 0 && payloadOK {
		m["payload"] = map[string]any{"session_id": info.SessionID, "hook_event_name": info.HookEvent}
	}
	if err := b.Schemas.ValidateValue(schemas.EventV1, doc); err != nil {
		return err
	}
	if !payloadOK && len(env.Payload) > 0 {
		return errors.New("payload is not a valid hook payload")
	}
	return nil
}

// maxSafeInt is the largest integer RFC 8785 (IEEE 754 doubles) keeps exact.
const maxSafeInt = 1<<53 - 1

var (
	agentTypeRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
	digestRE    = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
)

// checkEnvelope is event.v1.schema.json as Go. It reports true only for
// documents the schema accepts; decoding into schemas.Envelope with
// RejectUnknownMembers already enforced the member set and types. A
// SessionStart's hook_config is left to the schema (one per session).
func checkEnvelope(e *schemas.Envelope, payloadOK bool) bool {
	if e.HookConfig != nil || e.V != 1 || e.ClientSeq > maxSafeInt || e.PayloadSize > maxSafeInt || !id.ValidULID(e.EventID) ||
		!digestRE.MatchString(e.PayloadDigest) ||
		e.PayloadSize < 0 || !agentTypeRE.MatchString(e.AgentType) ||
		e.Host == "" || utf8.RuneCountInString(e.Host) > 255 ||
		e.AgentID == "" || utf8.RuneCountInString(e.AgentID) > 255 ||
		utf8.RuneCountInString(e.SessionID) > 4096 || utf8.RuneCountInString(e.HookEvent) > 256 ||
		!validDateTime(e.ReceivedAt) {
		return false
	}
	switch e.Kind {
	case schemas.KindEvent:
		return e.Rejected == nil && len(e.Payload) > 0 && payloadOK && e.HookEvent != "" && id.CheckSession(e.SessionID) == nil
	case schemas.KindRejected:
		return e.Rejected != nil && len(e.Payload) == 0 && e.Rejected.Reason != "" &&
			utf8.RuneCountInString(e.Rejected.Reason) <= 2048 && utf8.RuneCountInString(e.Rejected.Excerpt) <= 8192
	}
	return false
}

// validDateTime accepts the RFC 3339 date-time claimcheck-hook writes:
// YYYY-MM-DDTHH:MM:SS(.fraction)(Z|±hh:mm).
func validDateTime(s string) bool {
	if len(s) < 20 || s[10] != 'T' || strings.ContainsRune(s, ',') || !strings.ContainsRune(".Z+-", rune(s[19])) {
		return false
	}
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

func (b *Builder) base(in Input, env *schemas.Envelope, kind, chainName string) *schemas.Entry {
	e := &schemas.Entry{
		V:          1,
		Kind:       kind,
		Chain:      chainName,
		IngestedAt: in.Now.UTC().Format(time.RFC3339Nano),
		IntakeSeq:  in.Seq,
		Bundle:     b.Bundle,
	}
	if st, ok := subject.ParseIntake(in.Subject); ok {
		e.Origin = originOf(st)
	}
	if env != nil {
		fillSource(e, env)
	}
	return e
}

// fillSource copies the envelope's attribution into e.
func fillSource(e *schemas.Entry, env *schemas.Envelope) {
	e.SessionID = clip(env.SessionID, 4096)
	e.HookEvent = clip(env.HookEvent, 256)
	e.Host = clip(env.Host, 255)
	e.AgentType = clip(env.AgentType, 64)
	e.AgentID = clip(env.AgentID, 255)
	e.ClientSeq = env.ClientSeq
	// Kept in normalised form: Go's parser accepts spellings RFC 3339 does
	// not (e.g. a one-digit hour), and the entry must stay schema-valid.
	if t, err := time.Parse(time.RFC3339Nano, env.ReceivedAt); err == nil {
		e.ReceivedAt = t.UTC().Format(time.RFC3339Nano)
	}
}

// invalid records a well-addressed envelope (valid session and event id)
// whose content is wrong, in the session's own chain.
func (b *Builder) invalid(in Input, env *schemas.Envelope, reason string) Record {
	e := b.base(in, env, schemas.EntryInvalid, env.SessionID)
	e.EventID = env.EventID
	e.Reason = clip(reason, 4000)
	e.PayloadDigest = digest.SHA256(in.Data)
	e.PayloadSize = len(in.Data)
	src := []byte(env.Payload)
	if len(src) == 0 {
		src = in.Data
	}
	e.Excerpt, e.Redactions = b.excerpt(src)
	return Record{Entry: e, Outcome: schemas.EntryInvalid}
}

// rejected records an input that cannot be attributed to a session.
func (b *Builder) rejected(in Input, eventID, reason string, excerptOf []byte) Record {
	e := b.base(in, nil, schemas.EntryRejected, schemas.RejectedChain)
	if eventID == "" {
		// Stable across redeliveries of the same message.
		eventID = id.Derived(in.Time, fmt.Appendf(nil, "%s\x00%d\x00%s", in.Subject, in.Seq, in.Data))
	}
	e.EventID = eventID
	e.Reason = clip(reason, 4000)
	e.PayloadDigest = digest.SHA256(in.Data)
	e.PayloadSize = len(in.Data)
	if len(excerptOf) > 0 {
		e.Excerpt, e.Redactions = b.excerpt(excerptOf)
	}
	return Record{Entry: e, Outcome: schemas.EntryRejected}
}

func (b *Builder) excerpt(src []byte) (string, []schemas.Redaction) {
	if len(src) > excerptBytes {
		src = src[:excerptBytes]
	}
	return b.Scrub.Text(string(src))
}

func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func trimErr(err error) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "json: ")
	return clip(msg, 1000)
}

// Elide shortens the JSON text raw until it fits in max bytes: strings longer
// than a limit keep their head and tail around a marker. If even that does
// not fit, the result is the empty object. The output is valid JSON.
func Elide(raw []byte, max int) []byte {
	for _, keep := range []int{4096, 1024, 256, 64} {
		out, err := shortenStrings(raw, keep)
		if err == nil && len(out) <= max {
			return out
		}
	}
	return []byte("{}")
}

func shortenStrings(raw []byte, keep int) ([]byte, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	var out bytes.Buffer
	last := 0
	for {
		start := dec.InputOffset()
		if dec.PeekKind() == 0 {
			break
		}
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		if tok.Kind() != '"' {
			continue
		}
		s := tok.String()
		if len(s) <= 2*keep+64 {
			continue
		}
		end := int(dec.InputOffset())
		tokStart := int(start)
		for tokStart < end && raw[tokStart] != '"' {
			tokStart++
		}
		head, tail := clip(s, keep), s[len(s)-keep:]
		for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
			tail = tail[1:]
		}
		short := fmt.Sprintf("%s…[claimcheck: %d of %d bytes elided; the whole payload is in the artifact]…%s", head,
			len(s)-len(head)-len(tail), len(s), tail)
		enc, err := jsontext.AppendQuote(nil, short)
		if err != nil {
			return nil, err
		}
		out.Write(raw[last:tokStart])
		out.Write(enc)
		last = end
	}
	out.Write(raw[last:])
	if !jsontext.Value(out.Bytes()).IsValid() {
		return nil, errors.New("elision produced invalid JSON")
	}
	return out.Bytes(), nil
}

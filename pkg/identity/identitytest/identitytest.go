// Package identitytest is the attack table of claimcheck's NATS
// permissions: what each identity tries against a running claimcheck (the
// evidence streams, the buckets, the JetStream API, other clients'
// subjects), and which roles may succeed. Package identity's tests run it
// against an in-process server; the end-to-end tests run it against
// `claimcheck up` and against the service binaries.
//
// Every attempt that some role may make is harmless when it succeeds (a
// purge that matches nothing, an update to the configuration a stream
// already has, a bucket key no one reads); attempts no role may make are
// the real thing (deleting LEDGER), so a hole in the permissions would
// show as lost data too.
package identitytest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/identity"
	"github.com/claimcheck/claimcheck/pkg/subject"
)

// Target names what the attempts aim at.
type Target struct {
	// Session is a session of the attacking hook's own host, with entries.
	Session string
	// OtherSession is a session of another host, with entries.
	OtherSession string
	// OtherHost is another host's token.
	OtherHost string
}

// Attempt is one row of the table.
type Attempt struct {
	Name string
	// Allowed are the roles that may do it; everyone else is refused.
	Allowed []string
	Do      func(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, t Target, self identity.Identity) error
}

func roles(r ...string) []string { return r }

var (
	readers = roles(identity.RoleIngest, identity.RoleVerifier, identity.RoleGatekeeper, identity.RoleRotator,
		identity.RoleAuditor, identity.RoleOperator, identity.RoleAdmin)
	nobody []string
)

// Attempts is the table.
func Attempts() []Attempt {
	return []Attempt{
		{"publish a foreign entry on a session's LEDGER subject", roles(identity.RoleIngest, identity.RoleVerifier, identity.RoleAdmin),
			func(ctx context.Context, nc *nats.Conn, _ jetstream.JetStream, t Target, _ identity.Identity) error {
				// Harmless when allowed: expects a last subject sequence the
				// chain does not have, so nothing is stored.
				m := nats.NewMsg(subject.Ledger(t.Session))
				m.Data = []byte(`{"forged":true}`)
				m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, "999999999")
				return requestStored(ctx, nc, m, "wrong last sequence")
			}},
		{"publish into ATTEST", roles(identity.RoleVerifier),
			func(ctx context.Context, nc *nats.Conn, _ jetstream.JetStream, t Target, _ identity.Identity) error {
				m := nats.NewMsg(subject.Attestation(t.Session, "01FORGED0000000000000000000"))
				m.Data = []byte(`{"forged":true}`)
				m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, "999999999")
				return requestStored(ctx, nc, m, "wrong last sequence")
			}},
		{"put into the keys bucket (the signing key registry)", roles(identity.RoleRotator), kvPut("keys")},
		{"put into the policies bucket", roles(identity.RoleVerifier), kvPut("policies")},
		{"put into the contracts bucket", roles(identity.RoleIngest), kvPut("contracts")},
		{"put into the heads bucket (chain anchors)", roles(identity.RoleRotator, identity.RoleAdmin), kvPut("heads")},
		{"put into the levels bucket (degradation levels)", roles(identity.RoleGatekeeper), kvPut("levels")},
		{"purge LEDGER", roles(identity.RoleRotator), purge("LEDGER")},
		{"purge INTAKE", roles(identity.RoleIngest), purge("INTAKE")},
		{"purge ATTEST", nobody, purge("ATTEST")},
		{"purge the keys bucket's stream", nobody, purge("KV_keys")},
		{"purge the account's JetStream data ($JS.API.ACCOUNT.PURGE, CVE-2025-30215)", nobody,
			func(ctx context.Context, nc *nats.Conn, _ jetstream.JetStream, _ Target, _ identity.Identity) error {
				return apiRequest(ctx, nc, "$JS.API.ACCOUNT.PURGE.CLAIMCHECK", nil)
			}},
		{"delete LEDGER", nobody, deleteStream("LEDGER")},
		{"delete ATTEST", nobody, deleteStream("ATTEST")},
		{"delete INTAKE", nobody, deleteStream("INTAKE")},
		{"delete the keys bucket", nobody, deleteStream("KV_keys")},
		{"delete a ledger message", nobody,
			func(ctx context.Context, nc *nats.Conn, _ jetstream.JetStream, _ Target, _ identity.Identity) error {
				return apiRequest(ctx, nc, "$JS.API.STREAM.MSG.DELETE.LEDGER", []byte(`{"seq":1}`))
			}},
		{"update LEDGER's configuration", roles(identity.RoleAdmin),
			func(ctx context.Context, _ *nats.Conn, js jetstream.JetStream, _ Target, _ identity.Identity) error {
				// Harmless when allowed: the configuration it already has.
				s, err := js.Stream(ctx, "LEDGER")
				if err != nil {
					return err
				}
				_, err = js.UpdateStream(ctx, s.CachedInfo().Config)
				return err
			}},
		{"delete an ingest consumer", nobody, deleteConsumer("INTAKE", "ingest-0")},
		{"delete the verifiers' consumer", nobody, deleteConsumer("CLAIMS", "verifier")},
		{"direct get of another host's session entries", readers,
			func(ctx context.Context, nc *nats.Conn, _ jetstream.JetStream, t Target, _ identity.Identity) error {
				return directGet(ctx, nc, subject.Ledger(t.OtherSession))
			}},
		{"direct get of its own session's entries", readers,
			func(ctx context.Context, nc *nats.Conn, _ jetstream.JetStream, t Target, _ identity.Identity) error {
				return directGet(ctx, nc, subject.Ledger(t.Session))
			}},
		{"subscribe to every inbox (_INBOX.>)", nobody, subscribe(subject.InboxPrefix + ".>")},
		{"subscribe to another host's replies", nobody,
			func(ctx context.Context, nc *nats.Conn, _ jetstream.JetStream, t Target, _ identity.Identity) error {
				return subscribe(subject.Inbox(identity.RoleHook, t.OtherHost)+".>")(ctx, nc, nil, t, identity.Identity{})
			}},
		{"subscribe to the gate requests (cc.gate.>)", nobody, subscribe(subject.GatePrefix + ".>")},
		{"answer gate requests as a gatekeeper (cc.gate.*.*, queue gatekeeper)", roles(identity.RoleGatekeeper),
			func(ctx context.Context, nc *nats.Conn, _ jetstream.JetStream, _ Target, _ identity.Identity) error {
				sub, err := nc.QueueSubscribe(subject.GatePrefix+".*.*", "identitytest", func(*nats.Msg) {})
				if err != nil {
					return err
				}
				defer func() { _ = sub.Unsubscribe() }()
				return nc.FlushWithContext(ctx)
			}},
		{"publish another host's hook events", nobody,
			func(ctx context.Context, nc *nats.Conn, _ jetstream.JetStream, t Target, _ identity.Identity) error {
				return publish(ctx, nc, subject.Intake(subject.OriginHook, t.OtherHost, t.OtherSession, "PostToolUse"))
			}},
		{"ask the gate about another host's session", nobody,
			func(ctx context.Context, nc *nats.Conn, _ jetstream.JetStream, t Target, _ identity.Identity) error {
				return publish(ctx, nc, subject.Gate(t.OtherHost, subject.GateStop))
			}},
		{"ask the gatekeepers to change a degradation level (cc.level.set)", roles(identity.RoleOperator),
			func(ctx context.Context, nc *nats.Conn, _ jetstream.JetStream, _ Target, _ identity.Identity) error {
				return publish(ctx, nc, subject.GateLevel)
			}},
		{"publish a gate override", roles(identity.RoleOperator),
			func(ctx context.Context, nc *nats.Conn, _ jetstream.JetStream, t Target, self identity.Identity) error {
				// Harmless when allowed: not an envelope, so ingest records
				// it as rejected input.
				return publish(ctx, nc, subject.Intake(subject.OriginOperator, self.Name, t.Session, "GateOverride"))
			}},
	}
}

// Own returns what identities must be able to do for themselves (the
// allowed path): a hook publishes its own host's events; everyone
// receives its own replies.
func Own() []Attempt {
	return []Attempt{
		{"publish its own host's event", roles(identity.RoleHook),
			func(ctx context.Context, nc *nats.Conn, _ jetstream.JetStream, t Target, self identity.Identity) error {
				return publish(ctx, nc, subject.Intake(subject.OriginHook, self.Name, t.Session, "Notification"))
			}},
		{"receive its own replies", identity.Roles,
			func(ctx context.Context, nc *nats.Conn, _ jetstream.JetStream, _ Target, self identity.Identity) error {
				return subscribe(self.Inbox()+".>")(ctx, nc, nil, Target{}, self)
			}},
	}
}

// Outcome of one attempt.
type Outcome int

// Outcomes.
const (
	Refused Outcome = iota // a permission or authorization violation
	Done                   // it went through
	Failed                 // neither: some other error (the test is broken)
)

func (o Outcome) String() string { return [...]string{"refused", "done", "failed"}[o] }

// Run makes one attempt on a fresh connection with opts (none: no
// credentials) and says how it ended.
func Run(ctx context.Context, url string, opts []nats.Option, a Attempt, t Target, self identity.Identity) (Outcome, error) {
	actx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	// A refused request gets no answer: stop waiting for it as soon as the
	// server reports the violation.
	onErr := nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		if errors.Is(err, nats.ErrPermissionViolation) {
			cancel()
		}
	})
	nc, err := nats.Connect(url, append([]nats.Option{nats.MaxReconnects(0), onErr}, opts...)...)
	if err != nil {
		if errors.Is(err, nats.ErrAuthorization) || strings.Contains(strings.ToLower(err.Error()), "authorization") {
			return Refused, err
		}
		return Failed, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return Failed, err
	}
	err = a.Do(actx, nc, js, t, self)
	_ = nc.Flush()
	if le := nc.LastError(); le != nil && errors.Is(le, nats.ErrPermissionViolation) {
		return Refused, le
	}
	if err != nil && errors.Is(err, nats.ErrPermissionViolation) {
		return Refused, err
	}
	if err != nil {
		return Failed, err
	}
	return Done, nil
}

// errNoAnswer: a request got no answer and no violation was reported.
var errNoAnswer = errors.New("no answer")

// Expect is what a to do as role: Done when role is allowed, else Refused.
func Expect(a Attempt, role string) Outcome {
	if slices.Contains(a.Allowed, role) {
		return Done
	}
	return Refused
}

func kvPut(bucket string) func(context.Context, *nats.Conn, jetstream.JetStream, Target, identity.Identity) error {
	return func(ctx context.Context, nc *nats.Conn, _ jetstream.JetStream, _ Target, _ identity.Identity) error {
		// Harmless when allowed: a key no one reads, written once.
		m := nats.NewMsg("$KV." + bucket + ".identitytest-" + fmt.Sprint(time.Now().UnixNano()))
		m.Data = []byte("x")
		m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, "999999999")
		return requestStored(ctx, nc, m, "wrong last sequence")
	}
}

func purge(stream string) func(context.Context, *nats.Conn, jetstream.JetStream, Target, identity.Identity) error {
	return func(ctx context.Context, nc *nats.Conn, _ jetstream.JetStream, _ Target, _ identity.Identity) error {
		return apiRequest(ctx, nc, "$JS.API.STREAM.PURGE."+stream, []byte(`{"filter":"identitytest.no-such-subject"}`))
	}
}

func deleteStream(stream string) func(context.Context, *nats.Conn, jetstream.JetStream, Target, identity.Identity) error {
	return func(ctx context.Context, nc *nats.Conn, _ jetstream.JetStream, _ Target, _ identity.Identity) error {
		return apiRequest(ctx, nc, "$JS.API.STREAM.DELETE."+stream, nil)
	}
}

func deleteConsumer(stream, consumer string) func(context.Context, *nats.Conn, jetstream.JetStream, Target, identity.Identity) error {
	return func(ctx context.Context, nc *nats.Conn, _ jetstream.JetStream, _ Target, _ identity.Identity) error {
		return apiRequest(ctx, nc, "$JS.API.CONSUMER.DELETE."+stream+"."+consumer, nil)
	}
}

func subscribe(subj string) func(context.Context, *nats.Conn, jetstream.JetStream, Target, identity.Identity) error {
	return func(ctx context.Context, nc *nats.Conn, _ jetstream.JetStream, _ Target, _ identity.Identity) error {
		sub, err := nc.SubscribeSync(subj)
		if err != nil {
			return err
		}
		defer func() { _ = sub.Unsubscribe() }()
		return nc.FlushWithContext(ctx)
	}
}

// publish publishes a core NATS message (no acknowledgement awaited) and
// flushes, so that a refusal is reported before it returns.
func publish(ctx context.Context, nc *nats.Conn, subj string) error {
	if err := nc.Publish(subj, []byte("identitytest")); err != nil {
		return err
	}
	return nc.FlushWithContext(ctx)
}

// apiRequest sends a JetStream API request. A refused request gets no
// answer (the server reports the violation to the connection instead, and
// Run reads it); no answer without a violation is errNoAnswer.
func apiRequest(ctx context.Context, nc *nats.Conn, subj string, body []byte) error {
	m, err := nc.RequestWithContext(ctx, subj, body)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) {
		return errNoAnswer
	}
	if err != nil {
		return err
	}
	if strings.Contains(string(m.Data), `"error"`) && !strings.Contains(string(m.Data), `"success":true`) {
		// An answer that is an API error still means the request was
		// allowed through; say what it was.
		return fmt.Errorf("api answered %s", m.Data)
	}
	return nil
}

// requestStored publishes a message to a stream with an expectation that
// makes the store refuse it; the expected refusal (benign) means the
// publish was allowed.
func requestStored(ctx context.Context, nc *nats.Conn, m *nats.Msg, benign string) error {
	r, err := nc.RequestMsgWithContext(ctx, m)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) {
		return errNoAnswer
	}
	if err != nil {
		return err
	}
	if strings.Contains(string(r.Data), benign) {
		return nil
	}
	return fmt.Errorf("stream answered %s", r.Data)
}

// directGet asks for the last message of subj; found or not (404), an
// answer means the get was allowed.
func directGet(ctx context.Context, nc *nats.Conn, subj string) error {
	m, err := nc.RequestWithContext(ctx, "$JS.API.DIRECT.GET.LEDGER."+subj, nil)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) {
		return errNoAnswer
	}
	if err != nil {
		return err
	}
	if st := m.Header.Get("Status"); st != "" && st != "404" {
		return fmt.Errorf("direct get answered status %s %s", st, m.Header.Get("Description"))
	}
	return nil
}

// Package intake publishes envelopes to the INTAKE stream: the one way a
// process other than the hook (the gatekeeper's own records, its HTTP
// endpoint, claimcheck claim and gate override) puts an event in front of
// ingest. The hook, built without nats.go, publishes with pkg/oneshot to
// the same subjects.
package intake

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/envelope"
	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
)

// Publisher publishes as one origin (subject.OriginHook, ...) and name (the
// host or service the client's identity is bound to): ingest admits an
// envelope only on the subjects of its publisher's own origin and name.
type Publisher struct {
	JS     jetstream.JetStream
	Origin string
	Name   string
}

// Msg is the INTAKE message of envelope env, for chain (a session, or
// schemas.RejectedChain) and hookEvent; msgID is its JetStream dedupe id,
// so a retried publication is stored once.
func (p Publisher) Msg(chain, hookEvent, msgID string, env []byte) *nats.Msg {
	msg := nats.NewMsg(subject.Intake(p.Origin, p.Name, chain, id.EventToken(hookEvent)))
	msg.Header.Set(jetstream.MsgIDHeader, msgID)
	msg.Data = env
	return msg
}

// Publish publishes env and waits for JetStream to store it.
func (p Publisher) Publish(ctx context.Context, chain, hookEvent, msgID string, env []byte) error {
	_, err := p.JS.PublishMsg(ctx, p.Msg(chain, hookEvent, msgID, env))
	return err
}

// PublishAsync publishes env without waiting; the future reports the
// outcome.
func (p Publisher) PublishAsync(chain, hookEvent, msgID string, env []byte) (jetstream.PubAckFuture, error) {
	return p.JS.PublishMsgAsync(p.Msg(chain, hookEvent, msgID, env))
}

// Settle waits for fut, the acknowledgement of PublishAsync(chain,
// hookEvent, msgID, env), and when it is a failure retrying can cure
// (stream.Transient: above all JetStream's 409 "duplicate message id is
// in process", its answer while the stream's leader holds an uncommitted
// earlier copy of the same message id, such as the hook's copy of the same
// gate decision while the group has no quorum; or no answer in time)
// publishes env again, with the same dedupe id, backing off, until one is
// acknowledged (stored, or a duplicate of the stored copy) or ctx ends.
// Any other failure is returned at once, as is a connection closed or
// draining (it will not publish again).
func (p Publisher) Settle(ctx context.Context, fut jetstream.PubAckFuture, chain, hookEvent, msgID string, env []byte) error {
	var err error
	select {
	case <-fut.Ok():
		return nil
	case err = <-fut.Err():
	case <-ctx.Done():
		return ctx.Err()
	}
	for wait := settleFirst; stream.Transient(err) && !errors.Is(err, nats.ErrConnectionClosed) &&
		!errors.Is(err, nats.ErrConnectionDraining); wait = min(2*wait, settleMax) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (retried until: %w)", err, ctx.Err())
		case <-time.After(wait):
		}
		try, cancel := context.WithTimeout(ctx, settleTry)
		err = p.Publish(try, chain, hookEvent, msgID, env)
		cancel()
		if err == nil {
			return nil
		}
	}
	return err
}

// Settle's backoff, and the bound of each try.
const (
	settleFirst = 50 * time.Millisecond
	settleMax   = time.Second
	settleTry   = 2 * time.Second
)

// Event wraps raw, a valid event of session, in an envelope
// (envelope.Event) and publishes it with its event id as the dedupe id.
// An error building the envelope is returned as is (envelope.Event names
// what was wrong); a publication error comes as a *PublishError.
func (p Publisher) Event(ctx context.Context, eventID, session, hookEvent string, at time.Time, src envelope.Source, raw []byte) error {
	env, err := envelope.Event(eventID, session, hookEvent, 0, at, src, raw)
	if err != nil {
		return err
	}
	if err := p.Publish(ctx, session, hookEvent, eventID, env); err != nil {
		return &PublishError{Err: err}
	}
	return nil
}

// PublishError is a failure to publish, as distinct from input that could
// not be wrapped in an envelope.
type PublishError struct{ Err error }

func (e *PublishError) Error() string { return e.Err.Error() }
func (e *PublishError) Unwrap() error { return e.Err }

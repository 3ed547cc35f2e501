package stream

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// EnsureRetry is Ensure for a service starting beside a NATS cluster that
// may not serve JetStream yet: a cluster that has just formed answers no
// JetStream request until it has elected a meta leader, and a server
// restarting with JetStream answers with "not enabled" for a moment.
// Such transient failures are logged and retried, with backoff up to
// maxBackoff, until ctx ends; any other failure (an unsafe ledger, a
// different partition count, invalid options) is returned at once.
func EnsureRetry(ctx context.Context, js jetstream.JetStream, o Options, log *slog.Logger) error {
	return retry(ctx, log, func() error { return Ensure(ctx, js, o) }, Transient)
}

// CheckRetry is Check for a service whose credentials may not change
// streams: it also waits, logging why, while JetStream is not set up for
// this claimcheck (ErrNotSetUp) until an admin has run `claimcheck streams
// ensure`.
func CheckRetry(ctx context.Context, js jetstream.JetStream, o Options, log *slog.Logger) error {
	return retry(ctx, log, func() error { return Check(ctx, js, o) }, func(err error) bool {
		return errors.Is(err, ErrNotSetUp) || Transient(err)
	})
}

func retry(ctx context.Context, log *slog.Logger, try func() error, transient func(error) bool) error {
	const first, maxBackoff = 250 * time.Millisecond, 5 * time.Second
	wait := first
	for attempt := 1; ; attempt++ {
		err := try()
		if err == nil {
			if attempt > 1 {
				log.InfoContext(ctx, "JetStream streams ready", slog.Any("attempts", attempt))
			}
			return nil
		}
		if ctx.Err() != nil {
			return errors.Join(ctx.Err(), err)
		}
		if !transient(err) {
			return err
		}
		log.WarnContext(ctx, "JetStream not available yet; retrying", slog.Any("attempt", attempt),
			slog.Duration("retry_in", wait), slog.Any("err", err))
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), err)
		case <-time.After(wait):
		}
		wait = min(2*wait, maxBackoff)
	}
}

// Transient reports whether err is a failure to reach JetStream that
// retrying can cure: no answer in time, nobody answering, JetStream not
// (yet) enabled, the server saying it is unavailable (503), or a cluster
// that cannot place a stream's replicas because peers are offline
// (PeersOffline).
func Transient(err error) bool {
	if errors.Is(err, ErrUnsafe) {
		return false
	}
	for _, t := range []error{context.DeadlineExceeded, nats.ErrTimeout, nats.ErrNoResponders, jetstream.ErrJetStreamNotEnabled,
		nats.ErrConnectionClosed, nats.ErrConnectionReconnecting, nats.ErrDisconnected} {
		if errors.Is(err, t) {
			return true
		}
	}
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.Code == http.StatusServiceUnavailable || InProcess(err) || PeersOffline(err)
}

// errCodeNoPeers is JetStream's 400 "no suitable peers for placement",
// followed by its reasons.
const errCodeNoPeers = 10005

// PeersOffline reports a stream or consumer its cluster could not place
// because some of the peers it needs are offline: a meta leader counts a
// peer offline until it has had the peer's stats (for a moment after a
// cluster forms or a route between two servers is set up again) and while
// too few of a group's peers are up for its quorum, so waiting cures it.
// The same refusal for other reasons (storage, tags) is for good.
func PeersOffline(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == errCodeNoPeers && strings.Contains(apiErr.Description, "peer offline")
}

// errCodeDuplicateInProcess is JetStream's 409 "duplicate message id is in
// process".
const errCodeDuplicateInProcess = 10158

// InProcess reports a publish refused for now, not for good, though its
// code is 4xx: the stream's leader still holds an earlier publish of the
// same Nats-Msg-Id that it has not committed (409, err_code 10158: a retry
// right after an attempt that timed out, or a group that lost its quorum
// with the proposal in hand), or too many publishes are in flight (429).
// A later retry of the same message id gets the stored copy's
// acknowledgement, or stores it.
func InProcess(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == errCodeDuplicateInProcess || apiErr.Code == http.StatusTooManyRequests)
}

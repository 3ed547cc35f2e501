package stream

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Consume is cons.Consume kept alive until ctx ends. nats.go ends a
// consume subscription for good when the server answers a pull with
// "409 Consumer Deleted" or "400 Bad Request", which a cluster recovering
// its quorum can do for a consumer that still exists, and when the
// connection is closed; a service that went on waiting for messages would
// then wait for ever with its work piling up in the stream. Consume
// subscribes again after such an end, with backoff up to maxBackoff,
// logging why, and calls resubscribed (when not nil) each time it did.
//
// The opts must not set a ConsumeErrHandler: Consume sets its own, which
// passes every error but missed heartbeats and closed connections to
// onErr (when not nil). It returns once the first subscription is made,
// or its error; stop ends the subscription and waits for the watcher.
func Consume(ctx context.Context, cons jetstream.Consumer, h jetstream.MessageHandler, log *slog.Logger,
	onErr func(error), resubscribed func(), opts ...jetstream.PullConsumeOpt,
) (stop func(), err error) {
	var mu sync.Mutex
	var last error // the error that ended the current subscription, if it said
	subscribe := func() (jetstream.ConsumeContext, error) {
		return cons.Consume(h, append(opts[:len(opts):len(opts)], jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			mu.Lock()
			last = err
			mu.Unlock()
			if onErr != nil && !errors.Is(err, jetstream.ErrNoHeartbeat) && !errors.Is(err, jetstream.ErrConnectionClosed) {
				onErr(err)
			}
		}))...)
	}
	cc, err := subscribe()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	var ccMu sync.Mutex
	go func() {
		defer close(done)
		const first, maxBackoff = 100 * time.Millisecond, 5 * time.Second
		for {
			ccMu.Lock()
			closed := cc.Closed()
			ccMu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-closed:
			}
			mu.Lock()
			why := last
			mu.Unlock()
			wait := first
			for attempt := 1; ; attempt++ {
				if ctx.Err() != nil {
					return
				}
				log.WarnContext(ctx, "the server ended the consumer's subscription; subscribing again",
					slog.String("consumer", cons.CachedInfo().Name), slog.Any("attempt", attempt), slog.Any("err", why))
				next, err := subscribe()
				if err == nil {
					ccMu.Lock()
					cc = next
					ccMu.Unlock()
					if resubscribed != nil {
						resubscribed()
					}
					break
				}
				why = err
				select {
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
				wait = min(2*wait, maxBackoff)
			}
			// A subscription the server ends at once again is retried
			// after a pause, not in a tight loop.
			select {
			case <-ctx.Done():
				return
			case <-time.After(first):
			}
		}
	}()
	return func() {
		cancel()
		<-done
		ccMu.Lock()
		cc.Stop()
		ccMu.Unlock()
	}, nil
}

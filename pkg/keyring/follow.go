package keyring

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/claimcheck/claimcheck/pkg/clock"
)

// FollowConfig says what a Follower keeps current.
type FollowConfig struct {
	// Registry is the registry followed.
	Registry *Registry
	// Dir holds the private keys. With a Path the follower keeps a Signer
	// of the keys active now; without one it does not sign.
	Dir Dir
	// Verify keeps a verification Set of every registered key.
	Verify bool
	// Every is how often the keys are reloaded besides on registry
	// changes (default 10s): keys' windows open and close with time, and a
	// watch can stall without a reconnect (a paused server or process) until
	// its consumer is reset. It bounds how long a signer may go on with a
	// key the registry has retired or revoked, so a rotation's key_overlap
	// must be longer than it.
	Every time.Duration
	// Clock dates the signer's reloads (default the system clock).
	Clock clock.Clock
	// Logger gets the failed reloads and the changes of the signing keys
	// (default: discarded).
	Logger *slog.Logger
}

// Follower keeps a process's keys current with the registry: the signer of
// the active keys, the verification set, or both. It reloads them when the
// registry changes and every FollowConfig.Every; a reload that fails
// keeps the previous keys (logged). Its methods are safe for concurrent
// use.
type Follower struct {
	cfg    FollowConfig
	signer *Signer
	set    atomic.Pointer[Set]
	done   chan struct{}
}

// Follow starts watching the registry, loads the keys (failing as
// NewSigner and NewSet do), and then follows the registry until ctx ends;
// Wait waits for that.
func Follow(ctx context.Context, cfg FollowConfig) (*Follower, error) {
	if cfg.Registry == nil {
		return nil, errors.New("follow keys: no registry")
	}
	if cfg.Every <= 0 {
		cfg.Every = 10 * time.Second
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	// Watch first: a change made while the keys are listed is not missed.
	changes := make(chan struct{}, 1)
	wctx, stop := context.WithCancel(ctx)
	watching, err := cfg.Registry.watch(wctx, func() {
		select {
		case changes <- struct{}{}:
		default: // a reload is due already
		}
	})
	if err != nil {
		stop()
		return nil, fmt.Errorf("watch key registry: %w", err)
	}
	f := &Follower{cfg: cfg, done: make(chan struct{})}
	if err := f.load(ctx); err != nil {
		stop()
		<-watching
		return nil, err
	}
	go func() {
		defer close(f.done)
		f.follow(ctx, changes)
		stop()
		<-watching
	}()
	return f, nil
}

// load is the first load.
func (f *Follower) load(ctx context.Context) error {
	keys, err := f.cfg.Registry.List(ctx)
	if err != nil {
		return err
	}
	if f.cfg.Dir.Path != "" {
		if f.signer, err = NewSigner(keys, f.cfg.Dir, f.cfg.Clock.Now()); err != nil {
			return err
		}
	}
	if f.cfg.Verify {
		vs, err := NewSet(keys)
		if err != nil {
			return err
		}
		f.set.Store(vs)
	}
	return nil
}

// follow reloads on every registry change (the registry's watch survives
// reconnects) and every cfg.Every until ctx ends.
func (f *Follower) follow(ctx context.Context, changes <-chan struct{}) {
	t := time.NewTicker(f.cfg.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-changes:
			f.reload(ctx)
		case <-t.C:
			f.reload(ctx)
		}
	}
}

// reload lists the registry again and rebuilds the signer and the set,
// keeping the previous ones when that fails. Only the follower's goroutine
// calls it, under the follower's ctx.
func (f *Follower) reload(ctx context.Context) {
	log := f.cfg.Logger
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	keys, err := f.cfg.Registry.List(ctx)
	if err != nil {
		log.ErrorContext(ctx,
			"the keys could not be reloaded from the registry; using the previous ones while they are valid", slog.Any("err", err))
		return
	}
	if f.signer != nil {
		before := fmt.Sprint(f.signer.KeyIDs())
		if err := f.signer.Reload(keys, f.cfg.Dir, f.cfg.Clock.Now()); err != nil {
			log.ErrorContext(ctx,
				"the signing keys could not be reloaded; signing with the previous ones while they are valid", slog.Any("err", err))
			return
		}
		if after := f.signer.KeyIDs(); fmt.Sprint(after) != before {
			log.InfoContext(ctx, "signing keys changed", slog.Any("keys", after))
		}
	}
	if f.cfg.Verify {
		vs, err := NewSet(keys)
		if err != nil {
			log.ErrorContext(ctx, "the verification keys could not be reloaded; using the previous ones", slog.Any("err", err))
			return
		}
		f.set.Store(vs)
	}
}

// Signer is the signer of the active keys (nil without FollowConfig.Dir).
// It stays the same object: reloads change its keys in place.
func (f *Follower) Signer() *Signer { return f.signer }

// Set is the current verification set (nil without FollowConfig.Verify).
func (f *Follower) Set() *Set { return f.set.Load() }

// Wait returns once the follower has stopped (after its context ended).
func (f *Follower) Wait() { <-f.done }

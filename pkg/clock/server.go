package clock

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Server tells the time of another machine, the NATS server, so that every
// service of a fleet dates its signatures and judges key windows by one
// clock. It measures the server's time (a request whose answer carries it,
// corrected by half the round trip) and between measurements advances it
// by the process's monotonic clock, so a step of this host's wall clock
// (an NTP step, someone's date -s) moves nothing. Before its first
// measurement it reads the local clock. Once measured, Now never goes back:
// a measurement that would move it back (noise of a few milliseconds) holds
// it until it catches up.
type Server struct {
	measure func(context.Context) (time.Time, error)
	local   Clock
	log     *slog.Logger

	mu     sync.RWMutex
	anchor time.Time // the server's time at mono
	mono   time.Time // time.Now() (monotonic reading) when anchor held
	synced bool
	ready  chan struct{}
	last   atomic.Int64 // UnixNano of the latest Now, which never goes back
}

// MaxRoundTrip is the longest round trip whose measurement counts once the
// clock has one: a slower answer says little about when it was made.
const MaxRoundTrip = 2 * time.Second

// WarnOffset is how far the local clock may be from the server's before a
// measurement logs a warning.
const WarnOffset = 2 * time.Second

// NewServer measures with measure until the first success (every 250 ms),
// then every every (default 10 s), until ctx ends. local answers Now until
// the first measurement and is the clock the warnings compare with.
func NewServer(ctx context.Context, measure func(context.Context) (time.Time, error), local Clock,
	every time.Duration, log *slog.Logger) *Server {
	if every <= 0 {
		every = 10 * time.Second
	}
	if local == nil {
		local = Real{}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{measure: measure, local: local, log: log, ready: make(chan struct{})}
	go s.run(ctx, every)
	return s
}

func (s *Server) run(ctx context.Context, every time.Duration) {
	wait := 250 * time.Millisecond
	failures := 0
	for {
		if err := s.Sync(ctx); err != nil {
			failures++
			if failures == 1 || failures%60 == 0 {
				s.log.WarnContext(ctx,
					"could not read the NATS server's time; the clock goes on from the last reading (or this host's clock before the first)",
					slog.Any("err", err), slog.Int("failures", failures))
			}
		} else {
			failures = 0
			wait = every
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// Sync measures the server's time once.
func (s *Server) Sync(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	t0 := time.Now()
	at, err := s.measure(ctx)
	t1 := time.Now()
	if err != nil {
		return err
	}
	rtt := t1.Sub(t0)
	s.mu.Lock()
	if s.synced && rtt > MaxRoundTrip {
		s.mu.Unlock()
		return nil // keep the better reading
	}
	s.anchor, s.mono = at.Add(rtt/2), t1
	first := !s.synced
	s.synced = true
	s.mu.Unlock()
	if first {
		close(s.ready)
	}
	if off := s.local.Now().Sub(at.Add(rtt / 2)); off > WarnOffset || off < -WarnOffset {
		s.log.WarnContext(ctx, "this host's clock is off the NATS server's; signatures and key windows use the server's",
			slog.Duration("local_minus_server", off.Round(time.Millisecond)))
	}
	return nil
}

// Ready is closed once the first measurement succeeded.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// Synced reports whether Now is the server's time (not yet the local clock's).
func (s *Server) Synced() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.synced
}

// Now returns the server's time, advanced by the monotonic clock since the
// last measurement; before the first, the local clock's.
func (s *Server) Now() time.Time {
	s.mu.RLock()
	synced, anchor, mono := s.synced, s.anchor, s.mono
	s.mu.RUnlock()
	if !synced {
		return s.local.Now()
	}
	n := anchor.Add(time.Since(mono)).UnixNano()
	for {
		last := s.last.Load()
		if n <= last {
			return time.Unix(0, last)
		}
		if s.last.CompareAndSwap(last, n) {
			return time.Unix(0, n)
		}
	}
}

package clock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// serverAt is a measure function answering a settable server time (a
// server whose clock is off this host's by off), or an error.
type serverAt struct {
	mu    sync.Mutex
	off   time.Duration
	delay time.Duration
	err   error
}

func (s *serverAt) measure(ctx context.Context) (time.Time, error) {
	s.mu.Lock()
	off, delay, err := s.off, s.delay, s.err
	s.mu.Unlock()
	time.Sleep(delay)
	if err != nil {
		return time.Time{}, err
	}
	return time.Now().Add(off), nil
}

func (s *serverAt) set(off, delay time.Duration, err error) {
	s.mu.Lock()
	s.off, s.delay, s.err = off, delay, err
	s.mu.Unlock()
}

func near(t *testing.T, what string, got, want time.Time, tol time.Duration) {
	t.Helper()
	if d := got.Sub(want); d > tol || d < -tol {
		t.Fatalf("%s: %v off the expected time (tolerance %v)", what, d, tol)
	}
}

func TestServerClockFollowsTheServerNotThisHost(t *testing.T) {
	srv := &serverAt{err: errors.New("no JetStream yet")}
	local := NewFake(time.Now().Add(-10 * time.Minute)) // this host's clock, ten minutes behind
	c := NewServer(t.Context(), srv.measure, local, time.Hour, nil)
	if c.Synced() {
		t.Fatal("synced without a measurement")
	}
	if got := c.Now(); !got.Equal(local.Now()) {
		t.Fatalf("before the first measurement Now is %v, want the local clock's %v", got, local.Now())
	}
	srv.set(0, 0, nil)
	select {
	case <-c.Ready():
	case <-time.After(5 * time.Second):
		t.Fatal("no measurement within 5 s of the server answering (retries every 250 ms)")
	}
	near(t, "after the first measurement", c.Now(), time.Now(), 50*time.Millisecond)

	// The host's wall clock jumps: nothing moves.
	local.Set(time.Now().Add(time.Hour))
	near(t, "after the local clock jumped an hour", c.Now(), time.Now(), 50*time.Millisecond)

	// The server's clock is ahead by a minute: the next measurement says so.
	srv.set(time.Minute, 0, nil)
	if err := c.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	near(t, "server a minute ahead", c.Now(), time.Now().Add(time.Minute), 50*time.Millisecond)

	// Back to the true time: Now holds rather than going back.
	before := c.Now()
	srv.set(0, 0, nil)
	if err := c.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := c.Now(); got.Before(before) {
		t.Fatalf("Now went back from %v to %v", before, got)
	}

	// A failed measurement keeps the last reading going.
	srv.set(0, 0, errors.New("NATS down"))
	if err := c.Sync(t.Context()); err == nil {
		t.Fatal("Sync reported no error for a failed measurement")
	}
	if got := c.Now(); got.Before(before) {
		t.Fatalf("after a failed measurement Now is %v, before %v", got, before)
	}
}

func TestServerClockIgnoresASlowAnswerOnceSynced(t *testing.T) {
	srv := &serverAt{}
	c := NewServer(t.Context(), srv.measure, Real{}, time.Hour, nil)
	<-c.Ready()
	srv.set(time.Hour, MaxRoundTrip+100*time.Millisecond, nil)
	if err := c.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	near(t, "after an answer slower than MaxRoundTrip", c.Now(), time.Now(), 100*time.Millisecond)
	srv.set(time.Hour, 0, nil)
	if err := c.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	near(t, "after a prompt answer", c.Now(), time.Now().Add(time.Hour), 100*time.Millisecond)
}

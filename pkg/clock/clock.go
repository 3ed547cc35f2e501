// Package clock abstracts wall-clock time so that services can be driven by a
// fake clock in tests (ordering never depends on it: chains are ordered by n).
package clock

import (
	"context"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Clock tells the time.
type Clock interface {
	Now() time.Time
}

// Real is the system clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// Fake is a settable clock for tests. The zero value is not usable; use NewFake.
type Fake struct {
	mu sync.Mutex
	t  time.Time
}

// NewFake returns a Fake clock reading t.
func NewFake(t time.Time) *Fake { return &Fake{t: t} }

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

// Advance moves the fake time by d (which may be negative).
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	f.t = f.t.Add(d)
	f.mu.Unlock()
}

// Set sets the fake time.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	f.t = t
	f.mu.Unlock()
}

// SkewFileEnv names a file whose content moves a service process's clock:
// the fault-injection tests' clock jumps (e2e TestTorture). Unset, as in
// any deployment, services run on Real.
const SkewFileEnv = "CLAIMCHECK_TEST_CLOCK_SKEW_FILE"

// FileSkew is the real clock moved by an offset read from a file holding a
// Go duration ("-90s", "10m", "0s"), read again every poll. A missing,
// unreadable or malformed file keeps the last offset read: a test writes
// the file whole (rename) and checks Skew to know it took.
type FileSkew struct {
	path string
	off  atomic.Int64
}

// NewFileSkew reads path once and then every poll until ctx ends.
func NewFileSkew(ctx context.Context, path string, poll time.Duration) *FileSkew {
	f := &FileSkew{path: path}
	f.read()
	go func() {
		t := time.NewTicker(poll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				f.read()
			}
		}
	}()
	return f
}

func (f *FileSkew) read() {
	b, err := os.ReadFile(f.path)
	if err != nil {
		return
	}
	d, err := time.ParseDuration(strings.TrimSpace(string(b)))
	if err != nil {
		return
	}
	f.off.Store(int64(d))
}

// Skew is the offset in force.
func (f *FileSkew) Skew() time.Duration { return time.Duration(f.off.Load()) }

// Now returns the real time moved by the offset.
func (f *FileSkew) Now() time.Time { return time.Now().Add(f.Skew()) }

package keyring

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claimcheck/claimcheck/pkg/clock"
	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/schemas"
)

// logBuffer collects a logger's output for the test to poll.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// followed is a registry with key v1 and a follower of it.
type followed struct {
	reg *Registry
	dir Dir
	f   *Follower
	log *logBuffer
}

func newFollowed(t *testing.T, clk clock.Clock, every time.Duration) *followed {
	t.Helper()
	srv := natstest.RunServer(t)
	_, js := natstest.Connect(t, srv.ClientURL())
	natstest.Bootstrap(t, js, nil)
	reg, err := OpenRegistry(t.Context(), js)
	if err != nil {
		t.Fatal(err)
	}
	x := &followed{reg: reg, dir: Dir{Path: filepath.Join(t.TempDir(), "keys")}, log: &logBuffer{}}
	if _, _, err := EnsureFirst(t.Context(), reg, x.dir, ECDSA, clk.Now()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	x.f, err = Follow(ctx, FollowConfig{Registry: reg, Dir: x.dir, Verify: true, Every: every, Clock: clk,
		Logger: slog.New(slog.NewTextHandler(x.log, nil))})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		done := make(chan struct{})
		go func() { x.f.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("the follower did not stop with its context")
		}
	})
	return x
}

// signs waits until the follower's signer signs with exactly ids.
func (x *followed) signs(t *testing.T, ids ...string) {
	t.Helper()
	natstest.Eventually(t, 5*time.Second, func() error {
		if got := x.f.Signer().KeyIDs(); !slices.Equal(got, ids) {
			return fmt.Errorf("signing keys %v, want %v", got, ids)
		}
		return nil
	})
}

// signedBy returns an envelope signed at by key keyid alone (its private
// key in dir).
func signedBy(t *testing.T, reg *Registry, dir Dir, keyid string, at time.Time) []byte {
	t.Helper()
	keys, err := reg.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	keys = slices.DeleteFunc(keys, func(k schemas.Key) bool { return k.KeyID != keyid })
	s, err := NewSigner(keys, dir, at)
	if err != nil {
		t.Fatal(err)
	}
	env, err := s.SignAt(t.Context(), at, pt, []byte(`{"n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func TestFollowerPicksUpRegistryChanges(t *testing.T) {
	x := newFollowed(t, clock.Real{}, time.Hour) // only the watch reloads
	x.signs(t, "v1")
	if _, err := Rotate(t.Context(), x.reg, x.dir, NewKey{Algorithm: Ed25519}, time.Hour, time.Now()); err != nil {
		t.Fatal(err)
	}
	x.signs(t, "v1", "v2")
	now := time.Now()
	if _, err := x.f.Set().Verify(signedBy(t, x.reg, x.dir, "v2", now), pt, now); err != nil {
		t.Fatalf("the verification set does not know the new key: %v", err)
	}
	if _, err := Revoke(t.Context(), x.reg, "v1", time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	x.signs(t, "v2")
	if !strings.Contains(x.log.String(), "signing keys changed") {
		t.Errorf("the change of signing keys is not logged:\n%s", x.log)
	}
}

func TestFollowerKeepsThePreviousKeysWhenAReloadFails(t *testing.T) {
	x := newFollowed(t, clock.Real{}, time.Hour)
	x.signs(t, "v1")
	// The private key goes, and the new key's private half is elsewhere:
	// the reload finds nothing to sign with.
	v1pem := filepath.Join(x.dir.Path, "v1.pem")
	if err := os.Remove(v1pem); err != nil {
		t.Fatal(err)
	}
	elsewhere := Dir{Path: filepath.Join(t.TempDir(), "other")}
	if _, err := Rotate(t.Context(), x.reg, elsewhere, NewKey{}, time.Hour, time.Now()); err != nil {
		t.Fatal(err)
	}
	natstest.Eventually(t, 5*time.Second, func() error {
		if !strings.Contains(x.log.String(), "could not be reloaded") {
			return fmt.Errorf("no failed reload logged yet:\n%s", x.log)
		}
		return nil
	})
	if got := x.f.Signer().KeyIDs(); !slices.Equal(got, []string{"v1"}) {
		t.Fatalf("after a failed reload the signer has %v, want the previous v1", got)
	}
	if _, err := x.f.Signer().Sign(t.Context(), pt, []byte(`{}`)); err != nil {
		t.Fatalf("the previous key no longer signs: %v", err)
	}
	now := time.Now()
	if _, err := x.f.Set().Verify(signedBy(t, x.reg, elsewhere, "v2", now), pt, now); err == nil {
		t.Fatal("the verification set changed although the reload failed")
	}
	// Once the new key's private half is there, the next change loads it.
	raw, err := os.ReadFile(filepath.Join(elsewhere.Path, "v2.pem"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(x.dir.Path, "v2.pem"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Revoke(t.Context(), x.reg, "v1", time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	x.signs(t, "v2")
}

// Keys' windows open and close with time, not only with registry changes:
// the follower reloads on its own every FollowConfig.Every.
func TestFollowerReloadsAsTimePasses(t *testing.T) {
	now := time.Now()
	clk := clock.NewFake(now)
	x := newFollowed(t, clk, 20*time.Millisecond)
	// v2 is valid from an hour on; v1 retires then.
	if _, err := Rotate(t.Context(), x.reg, x.dir, NewKey{}, 0, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	later := now.Add(2 * time.Hour)
	byV2 := signedBy(t, x.reg, x.dir, "v2", later)
	natstest.Eventually(t, 5*time.Second, func() error {
		_, err := x.f.Set().Verify(byV2, pt, later)
		return err
	})
	// The registry does not change again: only the timer reloads now.
	x.signs(t, "v1")
	clk.Set(later)
	x.signs(t, "v2")
}

// TestFollowerPicksUpChangesAfterTheServerRestarts: the registry watch must
// outlive a restart of the NATS server. When it did not (the torture test
// found it), a verifier kept signing with a key the registry had retired
// until its next periodic reload, and its attestations did not verify.
func TestFollowerPicksUpChangesAfterTheServerRestarts(t *testing.T) {
	dir, listen := t.TempDir(), fmt.Sprintf("127.0.0.1:%d", natstest.FreePort(t))
	srv := natstest.RunServerAt(t, dir, listen)
	_, js := natstest.Connect(t, srv.ClientURL())
	natstest.Bootstrap(t, js, nil)
	reg, err := OpenRegistry(t.Context(), js)
	if err != nil {
		t.Fatal(err)
	}
	x := &followed{reg: reg, dir: Dir{Path: filepath.Join(t.TempDir(), "keys")}, log: &logBuffer{}}
	if _, _, err := EnsureFirst(t.Context(), reg, x.dir, ECDSA, time.Now()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	x.f, err = Follow(ctx, FollowConfig{Registry: reg, Dir: x.dir, Verify: true, Every: time.Hour, // only the watch reloads
		Logger: slog.New(slog.NewTextHandler(x.log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	x.signs(t, "v1")
	srv.Shutdown()
	natstest.RunServerAt(t, dir, listen)
	_, js2 := natstest.Connect(t, "nats://"+listen)
	reg2, err := OpenRegistry(t.Context(), js2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Rotate(t.Context(), reg2, x.dir, NewKey{Algorithm: Ed25519}, time.Hour, time.Now()); err != nil {
		t.Fatal(err)
	}
	x.signs(t, "v1", "v2")
}

package rotator_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/archive"
	"github.com/claimcheck/claimcheck/pkg/clock"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/service"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/services/rotator"
)

// crashChild runs one rotator pass in a child process (this test binary
// re-executed) that kills itself with SIGKILL at the step named by
// CLAIMCHECK_ROTATOR_CRASH_AT. TestMain exits with its result.
func crashChild() int {
	now, err := time.Parse(time.RFC3339Nano, os.Getenv("ROTATOR_CHILD_NOW"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	nc, err := nats.Connect(os.Getenv("ROTATOR_CHILD_NATS"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	cfg := rotator.DefaultConfig()
	cfg.ArchiveURL, cfg.KeyDir = os.Getenv("ROTATOR_CHILD_ARCHIVE"), os.Getenv("ROTATOR_CHILD_KEYS")
	r, err := rotator.New(cfg, service.Settings{Conn: nc, Clock: clock.NewFake(now), Logger: slog.New(slog.DiscardHandler)})
	if err == nil {
		err = r.Open(context.Background())
	}
	if err == nil {
		_, err = r.Pass(context.Background())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	return 0 // the step was not reached
}

func (e *env) crashAt(step string) {
	e.t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "ROTATOR_CRASH_CHILD=1", "CLAIMCHECK_ROTATOR_CRASH_AT="+step,
		"ROTATOR_CHILD_NOW="+e.clock.Now().Format(time.RFC3339Nano), "ROTATOR_CHILD_NATS="+e.srv.ClientURL(),
		"ROTATOR_CHILD_ARCHIVE="+e.cfg.ArchiveURL, "ROTATOR_CHILD_KEYS="+e.cfg.KeyDir)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		e.t.Fatalf("child at %s: %v (want SIGKILL) %s", step, err, out)
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		e.t.Fatalf("child at %s ended with %v, want SIGKILL: %s", step, err, out)
	}
}

func (e *env) ledgerMsgs() uint64 {
	e.t.Helper()
	s, err := e.js.Stream(e.t.Context(), stream.Ledger)
	if err != nil {
		e.t.Fatal(err)
	}
	info, err := s.Info(e.t.Context())
	if err != nil {
		e.t.Fatal(err)
	}
	return info.State.Msgs
}

// kill -9 at each step (after upload before verification, after
// verification before trimming, after a trim before its bookkeeping), then
// a normal pass: nothing lost, nothing archived twice, nothing trimmed
// without a verified copy.
func TestKilledAtEachStepLosesNothing(t *testing.T) {
	for _, step := range []string{"uploaded", "verified", "trimmed"} {
		t.Run(step, func(t *testing.T) {
			e := newEnv(t, nil)
			e.fill(40, 5)
			// The pass first records key v1 in the rotator's chain.
			before := e.ledgerMsgs() + 1
			e.crashAt(step)
			l, err := e.store.List(t.Context(), stream.Ledger)
			if err != nil {
				t.Fatal(err)
			}
			switch step {
			case "uploaded":
				// Uploaded, not verified: no checkpoint, nothing trimmed.
				if len(l.Segments) != 1 || l.Segments[0].Checkpoint || !l.Segments[0].Segment {
					t.Fatalf("archive after a crash before verification: %+v", l.Segments)
				}
				if got := e.ledgerMsgs(); got != before {
					t.Fatalf("LEDGER lost %d messages before anything was verified", before-got)
				}
			case "verified":
				if len(l.Segments) != 1 || !l.Segments[0].Checkpoint {
					t.Fatalf("archive after a crash after verification: %+v", l.Segments)
				}
				if got := e.ledgerMsgs(); got != before {
					t.Fatalf("LEDGER lost %d messages before the trim step", before-got)
				}
			case "trimmed":
				if got := e.ledgerMsgs(); got >= before {
					t.Fatalf("nothing was trimmed before the crash (%d messages)", got)
				}
			}
			// Every message gone from the hot stream has a verified copy.
			rep, err := archive.Verify(t.Context(), e.store, stream.Ledger, archive.Options{Keys: e.keySet(), Now: e.clock.Now()})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Problems) > 0 {
				t.Fatalf("archive after the crash: %v", rep.Problems)
			}
			// A restarted rotator finishes the work.
			e.rot = e.newRotator()
			e.pass()
			e.pass() // and a second pass changes nothing
			cr := e.verifyChains()
			if !cr.OK() || len(cr.Archive.Pending) > 0 {
				t.Fatalf("after restart: %v %v pending %v", cr.Archive.Problems, cr.Problems, cr.Archive.Pending)
			}
			if cr.Archive.Messages != int(before) || cr.Archive.Segments != 1 {
				t.Fatalf("archive holds %d messages in %d segments, want %d in 1 (archived once)", cr.Archive.Messages, cr.Archive.Segments, before)
			}
			if cr.Entries != 401 {
				t.Fatalf("%d entries verify across archive and hot stream, want 401", cr.Entries)
			}
			// Days 15..39 are inside the 30-day window on day 45: 25 days of
			// 5 chains, and the rotator's record.
			if got := e.ledgerMsgs(); got != 126 {
				t.Fatalf("LEDGER holds %d messages after the trims, want 126 (the hot window and the rotator's record)", got)
			}
		})
	}
}

// A chain whose hot entries JetStream lost is detected by verifying the
// ledger across archive and hot stream, and archive.Restore brings it back
// from the archive; appends to it continue.
func TestLostChainIsDetectedAndRestored(t *testing.T) {
	e := newEnv(t, nil)
	e.fill(40, 3)
	e.pass()
	if cr := e.verifyChains(); !cr.OK() {
		t.Fatalf("before the loss: %v %v", cr.Archive.Problems, cr.Problems)
	}
	// JetStream loses every message of s1 (purge stands in for the loss).
	st, err := e.js.Stream(t.Context(), stream.Ledger)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Purge(t.Context(), jetstreamPurgeSubject("s1")...); err != nil {
		t.Fatal(err)
	}
	cr := e.verifyChains()
	if cr.OK() || len(cr.Lost) != 1 || cr.Lost[0] != "s1" {
		t.Fatalf("loss not detected: lost %v problems %v", cr.Lost, cr.Problems)
	}
	res, starts, err := archive.Restore(t.Context(), e.store, e.js, stream.Ledger, "", archive.Options{Keys: e.keySet(), Now: e.clock.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Chains) != 1 || res.Chains[0] != "s1" || res.Messages != 40 || len(starts) != 0 {
		t.Fatalf("restored %+v, starts %v", res, starts)
	}
	if cr := e.verifyChains(); !cr.OK() {
		t.Fatalf("after restore: %v %v", cr.Archive.Problems, cr.Problems)
	}
	e.app = ledger.NewAppender(e.js, ledger.AppenderConfig{})
	e.add("s1", 1)
	if cr := e.verifyChains(); !cr.OK() || cr.Entries != 3*80+1+1 {
		t.Fatalf("after appending to the restored chain: %d entries, %v %v", cr.Entries, cr.Archive.Problems, cr.Problems)
	}
	// The next pass archives the restored copies; the archive still verifies.
	e.clock.Set(t0.Add(46 * day))
	e.pass()
	if cr := e.verifyChains(); !cr.OK() {
		t.Fatalf("after archiving the restored copies: %v %v", cr.Archive.Problems, cr.Problems)
	}
	// A replayed archived message is a fault, with or without a restore
	// mark that does not match.
	first := map[string]archive.Message{}
	_, err = archive.Verify(t.Context(), e.store, stream.Ledger, archive.Options{Keys: e.keySet(), Segment: func(_ archive.Manifest, msgs []archive.Message) error {
		for _, m := range msgs {
			if _, ok := first[m.Subject]; !ok {
				first[m.Subject] = m
			}
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	for c, mark := range map[string]bool{"s0": false, "s2": true} {
		old := first[subject.Ledger(c)]
		m := nats.NewMsg(old.Subject)
		m.Data = []byte(old.Data)
		want := "repeated"
		if mark {
			m.Header.Set(archive.RestoredHeader, fmt.Sprint(old.Seq+1))
			want = "restore"
		}
		if _, err := e.js.PublishMsg(t.Context(), m); err != nil {
			t.Fatal(err)
		}
		cr := e.verifyChains()
		found := false
		for _, p := range cr.Problems {
			found = found || strings.Contains(p.Segment, c) && strings.Contains(p.Reason, want)
		}
		if !found {
			t.Errorf("a replayed archived message of %s (restore mark %v) went unnoticed: %v", c, mark, cr.Problems)
		}
	}
}

func jetstreamPurgeSubject(c string) []jetstream.StreamPurgeOpt {
	return []jetstream.StreamPurgeOpt{jetstream.WithPurgeSubject(subject.Ledger(c))}
}

// A ledger created with deny_purge (by claimcheck before the rotator
// trimmed) is archived and verified but never trimmed, and the pass says so.
func TestOlderLedgerWithDenyPurgeIsArchivedNotTrimmed(t *testing.T) {
	e := newEnvWith(t, nil, func(js jetstream.JetStream) {
		cfg := stream.LedgerConfig(stream.DefaultOptions())
		cfg.DenyPurge = true
		if _, err := js.CreateStream(t.Context(), cfg); err != nil {
			t.Fatal(err)
		}
	})
	for d := range 40 {
		e.clock.Set(t0.Add(time.Duration(d) * day))
		e.add("s1", 2)
	}
	e.clock.Set(t0.Add(45 * day))
	before := e.ledgerMsgs()
	rep := e.pass()
	if rep.TrimDisabled == "" || rep.TrimmedMsgs != 0 {
		t.Fatalf("pass report %+v: want trimming reported off", rep)
	}
	if got := e.ledgerMsgs(); got != before+1 { // the rotator's key record
		t.Fatalf("LEDGER went from %d to %d messages", before, got)
	}
	if cr := e.verifyChains(); !cr.OK() || cr.Archive.Messages != int(before)+1 {
		t.Fatalf("archive: %d messages, %v %v", cr.Archive.Messages, cr.Archive.Problems, cr.Problems)
	}
}

package rotator_test

import (
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claimcheck/claimcheck/pkg/archive"
	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/service"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/services/rotator"
)

func validConfig(t *testing.T) rotator.Config {
	c := rotator.DefaultConfig()
	c.ArchiveURL = "file://" + t.TempDir()
	c.KeyDir = t.TempDir()
	return c
}

func TestConfigErrorsNameTheKey(t *testing.T) {
	s := natstest.RunServer(t)
	nc, _ := natstest.Connect(t, s.ClientURL())
	set := service.Settings{Conn: nc}
	if _, err := rotator.New(validConfig(t), set); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	for _, tc := range []struct {
		edit func(*rotator.Config)
		want string
	}{
		{func(c *rotator.Config) { c.ArchiveURL = "" }, "rotator.archive_url"},
		{func(c *rotator.Config) { c.KeyDir = "" }, "rotator.key_dir"},
		{func(c *rotator.Config) { c.Interval = 0 }, "rotator.interval"},
		{func(c *rotator.Config) { c.HotWindow = -time.Hour }, "rotator.hot_window"},
		{func(c *rotator.Config) { c.ProtectWindow = 0 }, "rotator.protect_window"},
		{func(c *rotator.Config) { c.ArchiveRetention = 24 * time.Hour }, "rotator.archive_retention"},
		{func(c *rotator.Config) { c.KeyRotationPeriod = -time.Hour }, "rotator.key_rotation_period"},
		{func(c *rotator.Config) { c.KeyOverlap = c.KeyRotationPeriod }, "rotator.key_overlap"},
		{func(c *rotator.Config) { c.KeyAlgorithm = "rsa" }, "rotator.key_algorithm"},
		{func(c *rotator.Config) { c.SegmentMessages = 0 }, "rotator.segment_messages"},
		{func(c *rotator.Config) { c.SegmentBytes = 10 }, "rotator.segment_bytes"},
	} {
		c := validConfig(t)
		tc.edit(&c)
		if _, err := rotator.New(c, set); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v", tc.want, err)
		}
	}
}

// Unreadable or foreign archive URLs fail at start with an error naming
// the URL, and the hot stream is untouched.
func TestBadArchiveURLs(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plain")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	for _, u := range []string{"ftp://example.com/x", "not a url", "file://" + file + "/archive", "file://", "s3://claimcheck-test-bucket?region=us-east-1&endpoint=http://127.0.0.1:1&use_path_style=true"} {
		t.Run(u, func(t *testing.T) {
			e := newEnv(t, nil)
			e.add("s1", 3)
			before := e.ledgerMsgs()
			c := e.cfg
			c.ArchiveURL = u
			r, err := rotator.New(c, service.Settings{Conn: e.nc, Clock: e.clock, Logger: slog.New(slog.DiscardHandler)})
			if err == nil {
				err = r.Open(t.Context())
			}
			if err == nil || !strings.Contains(err.Error(), "archive URL") {
				t.Fatalf("got %v, want an error naming the archive URL", err)
			}
			if got := e.ledgerMsgs(); got != before {
				t.Fatalf("LEDGER changed: %d -> %d", before, got)
			}
		})
	}
}

// A full archive disk (a small tmpfs): the pass fails with the disk's
// error, nothing is trimmed, no segment counts; with space again the next
// pass completes.
func TestArchiveDiskFull(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", mnt).Run() })
	e := newEnv(t, func(c *rotator.Config) { c.ArchiveURL = "file://" + mnt + "/archive" })
	// Incompressible payloads, more than the disk holds.
	for d := range 40 {
		e.clock.Set(t0.Add(time.Duration(d) * day))
		e.add(fmt.Sprintf("s%d", d%4), 1)
		if _, err := e.js.Publish(t.Context(), subject.AttestPrefix+".s0.a"+fmt.Sprint(d), []byte(fmt.Sprintf(`{"r":%q}`, randomText(8192, uint64(d)+1)))); err != nil {
			t.Fatal(err)
		}
	}
	e.clock.Set(t0.Add(45 * day))
	before := e.ledgerMsgs()
	_, err := e.rot.Pass(t.Context())
	if err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("pass on a full disk: %v, want a no-space error", err)
	}
	if got := e.ledgerMsgs(); got > before+1 { // +1: the key record
		t.Fatalf("LEDGER grew unexpectedly: %d -> %d", before, got)
	}
	rep, err := archive.Verify(t.Context(), e.store, stream.Attest, archive.Options{Keys: e.keySet(), Now: e.clock.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Segments != 0 || len(rep.Problems) > 0 {
		t.Fatalf("after the failed pass: %d verified segments, problems %v", rep.Segments, rep.Problems)
	}
	// Make room: a bigger tmpfs on top, and the next pass completes.
	if out, err := exec.Command("mount", "-o", "remount,size=8m", mnt).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v %s", err, out)
	}
	e.pass()
	if cr := e.verifyChains(); !cr.OK() {
		t.Fatalf("after freeing space: %v %v", cr.Archive.Problems, cr.Problems)
	}
}

func randomText(n int, seed uint64) string {
	b := make([]byte, n)
	x := 88172645463325252 ^ seed*0x9E3779B97F4A7C15
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[x%36]
	}
	return string(b)
}

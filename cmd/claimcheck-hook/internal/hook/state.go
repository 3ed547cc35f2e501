package hook

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The state directory (0700) holds:
//
//	seq/<sha256(session)[:32]>   per-session client sequence counters
//	blocks/<sha256(session)[:32]>  per-session consecutive blocked stops
//	feedback/<sha256(session)[:32]>  sha256 of the session's last stop block reason (Gemini CLI)
//	spool/<n>.<event>.<chain>.<token>.evt   events not yet delivered, in order
//	spool/.seq, spool/.lock      spool order counter and its lock
//	spool/.unreachable           when delivery last failed (its mtime)
//	failed/                      spooled events NATS refused permanently
//
// File names never contain a raw session id: sequence files are named by a
// hash, spool files only by validated tokens.

func ensureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("%s is accessible to other users and cannot be made private: %w", dir, err)
		}
	}
	return nil
}

// lockFile opens (creating, 0600) and exclusively locks path.
func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}

// bump reads the decimal counter in f, increments it and writes it back.
func bump(f *os.File) (uint64, error) {
	var buf [24]byte
	n, err := f.ReadAt(buf[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	cur := uint64(0)
	if s := strings.TrimSpace(string(buf[:n])); s != "" {
		if cur, err = strconv.ParseUint(s, 10, 64); err != nil {
			return 0, fmt.Errorf("corrupt counter %s: %q", f.Name(), s)
		}
	}
	cur++
	out := strconv.FormatUint(cur, 10) + "\n"
	if _, err := f.WriteAt([]byte(out), 0); err != nil {
		return 0, err
	}
	return cur, f.Truncate(int64(len(out)))
}

// nextSeq returns the next client sequence number of a session (1, 2, …).
// The counter is not fsynced: after a power loss a number may repeat, which
// ingest tolerates (events are identified by their ULID).
func nextSeq(stateDir, session string) (uint64, error) {
	dir := filepath.Join(stateDir, "seq")
	if err := ensureDir(dir); err != nil {
		return 0, fmt.Errorf("sequence dir: %w", err)
	}
	sum := sha256.Sum256([]byte(session))
	f, err := lockFile(filepath.Join(dir, hex.EncodeToString(sum[:16])))
	if err != nil {
		return 0, fmt.Errorf("sequence file: %w", err)
	}
	defer func() { _ = f.Close() }()
	return bump(f)
}

// stopBlocks reads a session's count of consecutive blocked stops, sets
// it with set (which receives the current count), and returns the new one.
// The count follows the gatekeeper's signed decisions and the hook's own
// fail-closed blocks, so that the hook can cap its blocks as the
// gatekeeper does while the gatekeeper cannot be reached.
func stopBlocks(stateDir, session string, set func(cur int) int) (int, error) {
	dir := filepath.Join(stateDir, "blocks")
	if err := ensureDir(dir); err != nil {
		return 0, fmt.Errorf("blocks dir: %w", err)
	}
	sum := sha256.Sum256([]byte(session))
	f, err := lockFile(filepath.Join(dir, hex.EncodeToString(sum[:16])))
	if err != nil {
		return 0, fmt.Errorf("blocks file: %w", err)
	}
	defer func() { _ = f.Close() }()
	var buf [24]byte
	n, err := f.ReadAt(buf[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	cur, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil || cur < 0 {
		cur = 0 // absent or damaged: start again (the gatekeeper keeps the real count)
	}
	next := set(cur)
	out := strconv.Itoa(next) + "\n"
	if _, err := f.WriteAt([]byte(out), 0); err != nil {
		return 0, err
	}
	return next, f.Truncate(int64(len(out)))
}

// spool is the directory of undelivered events.
type spool struct{ dir string }

type spooled struct {
	name    string
	eventID string
	chain   string
	token   string
}

func (s spool) pending() bool {
	d, err := os.Open(s.dir)
	if err != nil {
		return false
	}
	defer func() { _ = d.Close() }()
	names, _ := d.Readdirnames(-1)
	for _, n := range names {
		if strings.HasSuffix(n, ".evt") {
			return true
		}
	}
	return false
}

// lock takes the spool lock (creating the directory).
func (s spool) lock() (*os.File, error) {
	if err := ensureDir(s.dir); err != nil {
		return nil, fmt.Errorf("spool dir: %w", err)
	}
	return lockFile(filepath.Join(s.dir, ".lock"))
}

// add stores an event durably (write, fsync, rename, fsync dir). The caller
// holds the lock.
func (s spool) add(eventID, chain, token string, data []byte) error {
	cf, err := os.OpenFile(filepath.Join(s.dir, ".seq"), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	n, err := bump(cf)
	_ = cf.Close()
	if err != nil {
		return err
	}
	name := fmt.Sprintf("%016d.%s.%s.%s.evt", n, eventID, chain, token)
	tmp, err := os.CreateTemp(s.dir, ".tmp-*")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), filepath.Join(s.dir, name)); err != nil {
		return err
	}
	return syncDir(s.dir)
}

// list returns the spooled events in order. Files whose names do not parse
// are moved to failed/ and reported.
func (s spool) list() ([]spooled, []string) {
	d, err := os.Open(s.dir)
	if err != nil {
		return nil, nil
	}
	names, _ := d.Readdirnames(-1)
	_ = d.Close()
	sort.Strings(names)
	var out []spooled
	var bad []string
	for _, n := range names {
		if !strings.HasSuffix(n, ".evt") {
			continue
		}
		parts := strings.Split(strings.TrimSuffix(n, ".evt"), ".")
		if len(parts) != 4 || len(parts[0]) != 16 {
			bad = append(bad, n)
			continue
		}
		out = append(out, spooled{name: n, eventID: parts[1], chain: parts[2], token: parts[3]})
	}
	return out, bad
}

func (s spool) read(e spooled) ([]byte, error) {
	return os.ReadFile(filepath.Join(s.dir, e.name))
}

func (s spool) remove(e spooled) error {
	return os.Remove(filepath.Join(s.dir, e.name))
}

// fail moves a spooled file NATS refused for good to failed/.
func (s spool) fail(name string) error {
	dir := filepath.Join(filepath.Dir(s.dir), "failed")
	if err := ensureDir(dir); err != nil {
		return err
	}
	return os.Rename(filepath.Join(s.dir, name), filepath.Join(dir, name))
}

func (s spool) markUnreachable() {
	p := filepath.Join(s.dir, ".unreachable")
	if f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o600); err == nil {
		_ = f.Close()
	}
	now := time.Now()
	_ = os.Chtimes(p, now, now)
}

func (s spool) clearUnreachable() { _ = os.Remove(filepath.Join(s.dir, ".unreachable")) }

// recentlyUnreachable reports whether delivery failed less than d ago.
func (s spool) recentlyUnreachable(d time.Duration) bool {
	if d <= 0 {
		return false
	}
	fi, err := os.Stat(filepath.Join(s.dir, ".unreachable"))
	return err == nil && time.Since(fi.ModTime()) < d
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	return d.Sync()
}

// rememberStopReason keeps the digest of the reason a session's stop was
// blocked with: Gemini CLI feeds the reason back as a BeforeAgent prompt,
// which isStopReason then tells from a prompt of the user's.
func rememberStopReason(stateDir, session, reason string) error {
	dir := filepath.Join(stateDir, "feedback")
	if err := ensureDir(dir); err != nil {
		return fmt.Errorf("feedback dir: %w", err)
	}
	sum := sha256.Sum256([]byte(session))
	r := sha256.Sum256([]byte(reason))
	return os.WriteFile(filepath.Join(dir, hex.EncodeToString(sum[:16])), []byte(hex.EncodeToString(r[:])+"\n"), 0o600)
}

// isStopReason reports whether prompt is the reason the session's last
// blocked stop was given (rememberStopReason).
func isStopReason(stateDir, session, prompt string) bool {
	sum := sha256.Sum256([]byte(session))
	b, err := os.ReadFile(filepath.Join(stateDir, "feedback", hex.EncodeToString(sum[:16])))
	if err != nil {
		return false
	}
	r := sha256.Sum256([]byte(prompt))
	return strings.TrimSpace(string(b)) == hex.EncodeToString(r[:])
}

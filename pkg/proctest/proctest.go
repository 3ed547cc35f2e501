// Package proctest runs claimcheck's built binaries, and other programs, as
// child processes of black-box tests: it builds the binaries when no
// directory of them is given, captures each child's output, delivers its
// stdout lines as they come, and kills it when the test ends.
package proctest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binaries are the main packages of claimcheck's binaries, with their build
// tags (the hook's lean build, as make build makes it).
var binaries = map[string]struct{ pkg, tags string }{
	"claimcheck":      {"./cmd/claimcheck", ""},
	"claimcheck-hook": {"./cmd/claimcheck-hook", "oneshot_notls"},
	"ingest":          {"./services/ingest/cmd/ingest", ""},
	"verifier":        {"./services/verifier/cmd/verifier", ""},
	"gatekeeper":      {"./services/gatekeeper/cmd/gatekeeper", ""},
	"rotator":         {"./services/rotator/cmd/rotator", ""},
	// The NATS server a cluster runs (the version claimcheck's modules
	// pin), for tests of a cluster outside claimcheck up.
	"nats-server": {"github.com/nats-io/nats-server/v2", ""},
}

// Build builds the named binaries (all of them when none is named) from
// this checkout into dir, as make build does but without version stamps.
func Build(dir string, names ...string) error {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(filepath.Dir(file)))
	if len(names) == 0 {
		for name := range binaries {
			names = append(names, name)
		}
	}
	for _, name := range names {
		b, ok := binaries[name]
		if !ok {
			return fmt.Errorf("no binary named %q", name)
		}
		args := []string{"build", "-o", filepath.Join(dir, name)}
		if b.tags != "" {
			args = append(args, "-tags", b.tags)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		cmd := exec.CommandContext(ctx, "go", append(args, b.pkg)...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			return fmt.Errorf("%s: %w\n%s", name, err, out)
		}
	}
	return nil
}

// BinDir returns $CLAIMCHECK_BIN when set (make e2e sets it after make
// build) and checks that it holds the named binaries; otherwise it builds
// them into a temporary directory, removed by the returned cleanup.
func BinDir(names ...string) (dir string, cleanup func(), err error) {
	cleanup = func() {}
	if dir = os.Getenv("CLAIMCHECK_BIN"); dir == "" {
		if dir, err = os.MkdirTemp("", "claimcheck-e2e-bin"); err != nil {
			return "", cleanup, err
		}
		cleanup = func() { _ = os.RemoveAll(dir) }
		if err := Build(dir, names...); err != nil {
			cleanup()
			return "", func() {}, fmt.Errorf("build binaries: %w", err)
		}
	}
	for _, b := range names {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			cleanup()
			return "", func() {}, fmt.Errorf("binary %s missing in %s (run make build): %w", b, dir, err)
		}
	}
	return dir, cleanup, nil
}

// Proc is a long-running child process with its output captured.
type Proc struct {
	Cmd    *exec.Cmd
	mu     sync.Mutex
	stdout bytes.Buffer
	stderr bytes.Buffer
	lines  chan string
	done   chan error
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(b)
}

// Start starts cmd (its Path, Args, Env and Dir set by the caller; give it
// SysProcAttr.Setpgid to have Kill take its whole process group). Stdout
// lines are also delivered to WaitLine. When the test ends the process is
// killed and, if the test failed, its output logged.
func Start(t testing.TB, cmd *exec.Cmd) *Proc {
	t.Helper()
	p := &Proc{Cmd: cmd, lines: make(chan string, 1000), done: make(chan error, 1)}
	cmd.Stderr = lockedWriter{&p.mu, &p.stderr}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.stdout.WriteString(line + "\n")
			p.mu.Unlock()
			select {
			case p.lines <- line:
			default:
			}
		}
		p.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			line := strings.Join(append([]string{filepath.Base(cmd.Path)}, cmd.Args[1:]...), " ")
			t.Logf("%s output:\n%s", line, Truncate(p.Output(), 8000))
		}
	})
	return p
}

// Output returns both streams so far.
func (p *Proc) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return "stdout:\n" + p.stdout.String() + "\nstderr:\n" + p.stderr.String()
}

// Stderr returns the standard error so far.
func (p *Proc) Stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// WaitLine waits for a stdout line matching pred and returns it.
func (p *Proc) WaitLine(t testing.TB, timeout time.Duration, pred func(string) bool) string {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case l := <-p.lines:
			if pred(l) {
				return l
			}
		case err := <-p.done:
			p.done <- err
			t.Fatalf("%s exited (%v) before printing the expected line\n%s", p.Cmd.Path, err, p.Output())
		case <-deadline:
			t.Fatalf("%s did not print the expected line within %s\n%s", p.Cmd.Path, timeout, p.Output())
		}
	}
}

// WaitStderr waits until the standard error contains substr.
func (p *Proc) WaitStderr(t testing.TB, timeout time.Duration, substr string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !strings.Contains(p.Stderr(), substr) {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not log %q within %s\n%s", p.Cmd.Path, substr, timeout, p.Output())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Wait waits up to timeout for the process to exit and returns how it
// exited; ok is false if it did not exit in time.
func (p *Proc) Wait(timeout time.Duration) (exit error, ok bool) {
	if timeout <= 0 {
		select {
		case err := <-p.done:
			p.done <- err
			return err, true
		default:
			return nil, false
		}
	}
	select {
	case err := <-p.done:
		p.done <- err
		return err, true
	case <-time.After(timeout):
		return nil, false
	}
}

// Signal sends sig and waits up to 30 s for a clean exit. It may run on any
// goroutine.
func (p *Proc) Signal(sig syscall.Signal) error {
	_ = p.Cmd.Process.Signal(sig)
	err, ok := p.Wait(30 * time.Second)
	switch {
	case !ok:
		return fmt.Errorf("%s did not stop within 30s after %s\n%s", p.Cmd.Path, sig, p.Output())
	case err != nil:
		return fmt.Errorf("%s did not stop cleanly: %w\n%s", p.Cmd.Path, err, p.Output())
	}
	return nil
}

// Stop sends SIGTERM and fails the test unless the process exits cleanly.
func (p *Proc) Stop(t testing.TB) {
	t.Helper()
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
}

// Kill kills the process (its process group when it has one of its own)
// unless it has exited, and waits for it.
func (p *Proc) Kill() {
	group := p.Cmd.SysProcAttr != nil && p.Cmd.SysProcAttr.Setpgid
	if _, exited := p.Wait(0); exited && !group {
		return
	}
	if group { // children it started may outlive it
		_ = syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL)
	} else {
		_ = p.Cmd.Process.Kill()
	}
	_, _ = p.Wait(10 * time.Second)
}

// Truncate keeps the first and last n/2 bytes of s.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n/2] + fmt.Sprintf("\n… (%d bytes cut) …\n", len(s)-n) + s[len(s)-n/2:]
}

package agents

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// world is one scenario's machine: an isolated HOME (claimcheck's data
// dir, the hook's state and Claude Code's settings live under it, at their
// defaults), a git project, `claimcheck up`, and the scripted model.
type world struct {
	t       *testing.T
	client  client
	exe     string
	home    string
	project string
	natsURL string
	up      *proc
	model   *model
	// last is the latest client run, entries the latest ledger read (for
	// the report).
	last    *clientRun
	entries []entry
}

func newWorld(t *testing.T, c client, exe string) *world {
	t.Helper()
	root := t.TempDir()
	w := &world{t: t, client: c, exe: exe, home: filepath.Join(root, "home"), project: filepath.Join(root, "project")}
	for _, d := range []string{w.home, filepath.Join(w.home, "tmp"), w.project} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	w.writeProject()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s, at step %s; the three views:\n%s", w.client, w.stepName(), w.views())
		}
	})
	return w
}

// errorf and fatalf report a failed check, naming the client, its version
// and the script's step; the three views follow once, at cleanup.
func (w *world) errorf(format string, args ...any) {
	w.t.Helper()
	w.t.Errorf("[%s, step %s] %s", w.client, w.stepName(), fmt.Sprintf(format, args...))
}

func (w *world) fatalf(format string, args ...any) {
	w.t.Helper()
	w.t.Fatalf("[%s, step %s] %s", w.client, w.stepName(), fmt.Sprintf(format, args...))
}

func (w *world) stepName() string {
	if w.model == nil {
		return "(no model yet)"
	}
	return w.model.at()
}

// env is the environment of every command of the scenario: nothing of the
// host's but PATH (claimcheck's binaries first) and the Go build cache.
func (w *world) env() []string {
	env := []string{
		"HOME=" + w.home,
		"PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH"),
		"TMPDIR=" + filepath.Join(w.home, "tmp"),
		"USER=e2e",
		"LANG=C.UTF-8",
		"GOCACHE=" + goCache,
		"GOTOOLCHAIN=local",
		"GOPROXY=off",
		"GOFLAGS=-count=1", // a test run is a run, never a cached result
		"GOTELEMETRY=off",
	}
	if w.natsURL != "" {
		env = append(env, "CLAIMCHECK_NATS_URL="+w.natsURL)
	}
	return env
}

// The project: a Go module with a passing test; the dishonest scenario
// breaks Add.
const (
	calcGo     = "package calc\n\n// Add returns a+b.\nfunc Add(a, b int) int { return a + b }\n"
	calcTestGo = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n"
)

func (w *world) writeProject() {
	files := map[string]string{
		"go.mod":       "module example.com/calc\n\ngo 1.26\n",
		"calc.go":      calcGo,
		"calc_test.go": calcTestGo,
		// A secrets file, for the pre-tool policy's "ask".
		".env": "API_TOKEN=not-a-real-token\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(w.project, name), []byte(body), 0o644); err != nil {
			w.t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "go.mod", "calc.go", "calc_test.go"},
		{"-c", "user.name=e2e", "-c", "user.email=e2e@example.com", "commit", "-q", "-m", "calc"},
	} {
		if r := w.run("git", args...); r.code != 0 {
			w.t.Fatalf("git %v: %+v", args, r)
		}
	}
}

// startUp starts `claimcheck up` on listen (127.0.0.1:0 the first time; the
// same address again after a restart, since the installed hook command
// names it).
func (w *world) startUp(listen string) {
	w.t.Helper()
	p := start(w.t, w.env(), w.project, bin("claimcheck"), "up", "--listen", listen, "--http-listen", "")
	url := p.waitLine(w.t, 60*time.Second, func(l string) bool { return strings.HasPrefix(l, "nats://") })
	p.waitLine(w.t, 60*time.Second, func(l string) bool { return strings.HasPrefix(l, "claimcheck is up") })
	w.up, w.natsURL = p, url
}

// claimcheck runs a claimcheck command in the project, as the user.
func (w *world) claimcheck(args ...string) result {
	w.t.Helper()
	return w.run(bin("claimcheck"), args...)
}

// run runs a command to completion in the project.
func (w *world) run(name string, args ...string) result {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = w.project, w.env()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			w.t.Fatalf("run %s: %v", name, err)
		}
		code = ee.ExitCode()
	}
	return result{code, out.String(), errb.String()}
}

type result struct {
	code           int
	stdout, stderr string
}

// proc is a long-running child process with its output captured.
type proc struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	stdout bytes.Buffer
	stderr bytes.Buffer
	lines  chan string
	done   chan error
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return "stdout:\n" + p.stdout.String() + "\nstderr:\n" + p.stderr.String()
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

// start runs a program in its own process group; stdout lines are also
// delivered on p.lines. The test's cleanup kills the group.
func start(t *testing.T, env []string, dir, name string, args ...string) *proc {
	t.Helper()
	p := &proc{lines: make(chan string, 1000), done: make(chan error, 1)}
	p.cmd = exec.Command(name, args...)
	p.cmd.Dir, p.cmd.Env = dir, env
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	p.cmd.Stderr = lockedWriter{&p.mu, &p.stderr}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
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
		p.done <- p.cmd.Wait()
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("%s %s output:\n%s", filepath.Base(name), strings.Join(args, " "), truncate(p.output(), 4000))
		}
	})
	return p
}

// waitLine waits for a stdout line matching pred.
func (p *proc) waitLine(t *testing.T, timeout time.Duration, pred func(string) bool) string {
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
			t.Fatalf("%s exited (%v) before printing the expected line\n%s", p.cmd.Path, err, p.output())
		case <-deadline:
			t.Fatalf("%s did not print the expected line within %s\n%s", p.cmd.Path, timeout, p.output())
		}
	}
}

// terminate sends SIGTERM and waits for a clean exit. It may run on any
// goroutine (a model step stops NATS mid-session).
func (p *proc) terminate() error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		p.done <- err
		if err != nil {
			return fmt.Errorf("%s did not stop cleanly: %w\n%s", p.cmd.Path, err, p.output())
		}
		return nil
	case <-time.After(30 * time.Second):
		return fmt.Errorf("%s did not stop within 30s after SIGTERM\n%s", p.cmd.Path, p.output())
	}
}

// kill kills the process group and waits for the process.
func (p *proc) kill() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case err := <-p.done:
		p.done <- err
	case <-time.After(10 * time.Second):
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n/2] + fmt.Sprintf("\n… (%d bytes cut) …\n", len(s)-n) + s[len(s)-n/2:]
}

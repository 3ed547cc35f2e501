package agents

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/claimcheck/claimcheck/pkg/proctest"
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
	up      *proctest.Proc
	model   *model
	// install is the claimcheck command setup installs the hooks with
	// (default: `hooks install`, the user's settings).
	install []string
	// extraEnv is added to env (Codex's CODEX_HOME).
	extraEnv []string
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
	return append(env, w.extraEnv...)
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
	url := p.WaitLine(w.t, 60*time.Second, func(l string) bool { return strings.HasPrefix(l, "nats://") })
	p.WaitLine(w.t, 60*time.Second, func(l string) bool { return strings.HasPrefix(l, "claimcheck is up") })
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

// start runs a program in its own process group, killed with it when the
// test ends.
func start(t *testing.T, env []string, dir, name string, args ...string) *proctest.Proc {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return proctest.Start(t, cmd)
}

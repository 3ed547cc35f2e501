package agents

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// pinnedCLI is one of the pinned clients (clients.json), found and checked
// once per test process (inside the namespace): check compares what its
// --version says with the pin.
type pinnedCLI struct {
	name  string
	check func(t *testing.T, c client, exe string) error

	once sync.Once
	c    client
	exe  string
	err  error
}

// get returns the client and its executable, or fails t.
func (p *pinnedCLI) get(t *testing.T) (client, string) {
	t.Helper()
	needClients(t)
	p.once.Do(func() {
		if p.c, p.err = clientNamed(p.name); p.err != nil {
			return
		}
		if p.exe, p.err = executable(p.c, installDir(p.c)); p.err != nil {
			return
		}
		p.err = p.check(t, p.c, p.exe)
	})
	if p.err != nil {
		t.Fatal(p.err)
	}
	return p.c, p.exe
}

var claudePin = &pinnedCLI{name: "claude-code", check: func(_ *testing.T, c client, exe string) error {
	out, err := exec.Command(exe, "--version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), c.Version+" ") {
		return &versionError{exe, c.Version, string(out), err}
	}
	return nil
}}

// claudeCode returns the pinned Claude Code and its executable.
func claudeCode(t *testing.T) (client, string) {
	t.Helper()
	return claudePin.get(t)
}

type versionError struct {
	exe, want, out string
	err            error
}

func (e *versionError) Error() string {
	return "`" + e.exe + " --version` printed " + strings.TrimSpace(e.out) + " (want " + e.want + ")"
}

// clientRun is one run of the agent CLI: its stream-json stdout, stderr
// and exit code.
type clientRun struct {
	args     []string
	code     int
	stdout   string
	stderr   string
	events   []streamEvent
	took     time.Duration
	timedOut bool
}

// streamEvent is one line of `--output-format stream-json`.
type streamEvent struct {
	raw  string
	Type string `json:"type"`
	// system/init, result: subtype and session
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	// result
	Result  string `json:"result"`
	IsError bool   `json:"is_error"`
	NumTurn int    `json:"num_turns"`
	// assistant, user
	Message *struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
	// Codex's `exec --json`: thread.started names the thread (the hooks'
	// session_id); item.started and item.completed carry an item.
	ThreadID string     `json:"thread_id"`
	Item     *codexItem `json:"item"`
}

// claude runs `claude -p PROMPT --output-format stream-json --verbose` in
// the project against the scripted model, bounded by timeout (the process
// group is killed then). Permissions: --allowedTools lets Read, Edit, Write
// and Bash run headless without --dangerously-skip-permissions, which
// Claude Code refuses as root unless IS_SANDBOX=1; hooks still run first
// and their deny (or ask) decisions still apply.
func (w *world) claude(prompt string, timeout time.Duration, extra ...string) *clientRun {
	w.t.Helper()
	args := append([]string{"-p", prompt, "--output-format", "stream-json", "--verbose", "--allowedTools", "Read,Edit,Write,Bash",
		"--debug-file", w.debugLog()}, extra...)
	cmd := exec.Command(w.exe, args...)
	cmd.Dir = w.project
	cmd.Env = append(w.env(),
		"ANTHROPIC_BASE_URL="+w.model.url(),
		"ANTHROPIC_API_KEY=sk-ant-e2e-not-a-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1",
		"DISABLE_BUG_COMMAND=1",
	)
	return w.runClient(cmd, args, timeout)
}

// runClient runs the client's command to completion, bounded by timeout
// (its process group is killed then), and reads its JSON lines.
func (w *world) runClient(cmd *exec.Cmd, args []string, timeout time.Duration) *clientRun {
	w.t.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	run := &clientRun{args: args}
	began := time.Now()
	if err := cmd.Start(); err != nil {
		w.t.Fatalf("start %s: %v", w.client, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	kill := func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	w.t.Cleanup(kill) // hooks it started, should any outlive it
	var err error
	select {
	case err = <-done:
	case <-time.After(timeout):
		run.timedOut = true
		kill()
		err = <-done
	}
	run.took = time.Since(began)
	run.code = cmd.ProcessState.ExitCode()
	if err != nil && run.code == 0 {
		run.code = -1
	}
	run.stdout, run.stderr = out.String(), errb.String()
	sc := bufio.NewScanner(strings.NewReader(run.stdout))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e streamEvent
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			e.raw = sc.Text()
			run.events = append(run.events, e)
		}
	}
	w.last = run
	return run
}

// debugLog is where the client writes its debug log: the only place a
// headless Claude Code reports a settings file it skipped ("Invalid setting
// skipped without dialog (automated session)").
func (w *world) debugLog() string { return filepath.Join(w.home, "claude-debug.log") }

// settingsErrors returns the debug log's lines about skipped settings.
func (w *world) settingsErrors() []string {
	b, _ := os.ReadFile(w.debugLog())
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "Invalid setting") {
			out = append(out, l)
		}
	}
	return out
}

// sessionID is the session the client reported (system/init).
func (r *clientRun) sessionID() string {
	for _, e := range r.events {
		if e.SessionID != "" {
			return e.SessionID
		}
	}
	return ""
}

// result is the final result event, if the client printed one.
func (r *clientRun) result() (streamEvent, bool) {
	for i := len(r.events) - 1; i >= 0; i-- {
		if r.events[i].Type == "result" {
			return r.events[i], true
		}
	}
	return streamEvent{}, false
}

// toolResults maps tool_use_id to the tool_result the client reported.
func (r *clientRun) toolResults() map[string]apiBlock {
	out := map[string]apiBlock{}
	for _, e := range r.events {
		if e.Type != "user" || e.Message == nil {
			continue
		}
		for _, b := range (apiMessage{Content: e.Message.Content}).blocks() {
			if b.Type == "tool_result" {
				out[b.ToolUseID] = b
			}
		}
	}
	return out
}

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/claimcheck/claimcheck/pkg/natstest"
)

// TestUpStorageErrorsAtStart runs `claimcheck up` on an existing data
// directory while strace fails every fsync from the nth on (the report of
// issue #23: one failed fsync in the NATS store during start-up killed the
// process with a nil dereference in the rotator). Each such start must come
// up, or exit with an error that names the fault, never panic; and the
// next start without faults must come up on the same data and verify it.
func TestUpStorageErrorsAtStart(t *testing.T) {
	strace, why := straceUsable()
	if strace == "" {
		t.Skip(why)
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	listen := fmt.Sprintf("127.0.0.1:%d", natstest.FreePort(t))
	env := []string{"CLAIMCHECK_HOOK_STATE_DIR=" + filepath.Join(dir, "hook")}
	p, url := upEnv(t, env, data, listen)
	hookEnv := append([]string{"CLAIMCHECK_NATS_URL=" + url, "CLAIMCHECK_HOOK_GATE=false"}, env...)
	for i := range 3 {
		in := fmt.Sprintf(`{"session_id":"startfault","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"make %d"}}`, i)
		if r := runBin(t, hookEnv, []byte(in), "claimcheck-hook"); r.code != 0 {
			t.Fatalf("hook: %+v", r)
		}
	}
	show(t, url, "startfault", 3)
	p.Stop(t)
	panicked := regexp.MustCompile(`(?m)^(panic: |fatal error: |goroutine \d+ \[running\]:)`)
	for _, when := range []int{1, 2, 3, 5, 8, 13, 21} {
		args := []string{"-f", "-qq", "--seccomp-bpf", "-o", filepath.Join(dir, fmt.Sprintf("strace.%d", when)), "-e", "trace=fsync,fdatasync",
			"-e", fmt.Sprintf("inject=fsync,fdatasync:error=EIO:when=%d+", when), "--",
			bin("claimcheck"), "up", "--data-dir", data, "--listen", listen, "--http-listen", ""}
		ctx, cancel := context.WithTimeout(t.Context(), 150*time.Second)
		cmd := exec.CommandContext(ctx, strace, args...)
		cmd.Env = append(os.Environ(), env...)
		out := &natstest.SyncBuffer{}
		cmd.Stdout, cmd.Stderr = out, out
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // strace and claimcheck up are killed together
		if err := cmd.Start(); err != nil {
			cancel()
			t.Fatal(err)
		}
		// Up or down within the time: stop it once it says it is up.
		deadline := time.Now().Add(120 * time.Second)
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		var exit error
		running := false
	wait:
		for {
			select {
			case exit = <-exited:
				break wait
			case <-time.After(100 * time.Millisecond):
			}
			if !running && strings.Contains(out.String(), "claimcheck is up") {
				running = true
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
			}
			if time.Now().After(deadline) {
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				exit = <-exited
				t.Fatalf("fsync failing from call %d: claimcheck up neither came up nor exited within 120s (killed: %v):\n%s", when, exit,
					clip(out.String(), 6000))
			}
		}
		cancel()
		log := out.String()
		if loc := panicked.FindStringIndex(log); loc != nil {
			t.Fatalf("fsync failing from call %d: claimcheck up panicked:\n%s", when, clip(log[loc[0]:], 4000))
		}
		if !running {
			last := lastLine(log)
			if exit == nil || !strings.Contains(last, "input/output error") {
				t.Fatalf("fsync failing from call %d: claimcheck up exited (%v) without naming the fault; last line %q", when, exit, last)
			}
		}
		t.Logf("fsync failing from call %d: up %v, exit %v, %s", when, running, exit, clip(lastLine(log), 300))
		// The next start without faults comes up on the same data.
		p, url := upEnv(t, env, data, listen)
		if r := runBin(t, []string{"CLAIMCHECK_NATS_URL=" + url}, nil, "claimcheck", "ledger", "verify"); r.code != 0 {
			t.Fatalf("after a start with fsync failing from call %d: ledger verify: %+v", when, r)
		}
		show(t, url, "startfault", 3)
		p.Stop(t)
	}
}

// straceUsable returns strace's path when it can inject faults here, or
// why not.
func straceUsable() (path, why string) {
	path, err := exec.LookPath("strace")
	if err != nil {
		return "", "strace is not installed (CI installs it; apt-get install strace): no storage errors to inject"
	}
	out, err := exec.Command(path, "-f", "-qq", "-o", os.DevNull, "-e", "trace=fsync", "-e", "inject=fsync:error=EIO", "--", "true").CombinedOutput()
	if err != nil {
		return "", fmt.Sprintf("strace cannot trace here (%v: %s): no storage errors to inject", err, strings.TrimSpace(string(out)))
	}
	return path, ""
}

package proctest

import (
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKillTakesTheGroup: a child started with its own process group is
// killed with the processes it started; stdout lines and stderr arrive.
func TestKillTakesTheGroup(t *testing.T) {
	cmd := exec.Command("sh", "-c", `sleep 60 & echo "child $!"; echo warming >&2; echo ready; wait`)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := Start(t, cmd)
	line := p.WaitLine(t, 10*time.Second, func(l string) bool { return strings.HasPrefix(l, "child ") })
	child, err := strconv.Atoi(strings.TrimPrefix(line, "child "))
	if err != nil {
		t.Fatal(err)
	}
	p.WaitLine(t, 10*time.Second, func(l string) bool { return l == "ready" })
	p.WaitStderr(t, 10*time.Second, "warming")
	if _, exited := p.Wait(0); exited {
		t.Fatal("exited before Kill")
	}
	p.Kill()
	if _, exited := p.Wait(0); !exited {
		t.Fatal("still running after Kill")
	}
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(child, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the group's sleep (pid %d) outlived Kill", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSignalReportsAnUncleanExit: Signal is nil for a clean exit on the
// signal and an error naming the exit otherwise.
func TestSignalReportsAnUncleanExit(t *testing.T) {
	clean := Start(t, exec.Command("sh", "-c", `trap 'exit 0' TERM; echo ready; while :; do sleep 0.05; done`))
	clean.WaitLine(t, 10*time.Second, func(l string) bool { return l == "ready" })
	if err := clean.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("clean exit: %v", err)
	}
	unclean := Start(t, exec.Command("sh", "-c", `trap 'exit 3' TERM; echo ready; while :; do sleep 0.05; done`))
	unclean.WaitLine(t, 10*time.Second, func(l string) bool { return l == "ready" })
	if err := unclean.Signal(syscall.SIGTERM); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("exit 3 on SIGTERM: %v", err)
	}
}

func TestTruncate(t *testing.T) {
	if got := Truncate("short", 10); got != "short" {
		t.Fatalf("%q", got)
	}
	got := Truncate(strings.Repeat("a", 50)+strings.Repeat("b", 50), 20)
	if !strings.HasPrefix(got, strings.Repeat("a", 10)) || !strings.HasSuffix(got, strings.Repeat("b", 10)) || !strings.Contains(got, "80 bytes cut") {
		t.Fatalf("%q", got)
	}
}

package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// component is one long-running process of the deployment (nats-server or
// a service), kept running by a supervisor as systemd or Kubernetes would:
// whenever it exits it is started again after a moment, unless held down.
// Faults signal its whole process group (it runs in one of its own, with
// strace around it when a storage fault wraps it).
type component struct {
	name    string
	tt      *torture
	bin     string
	args    []string
	env     []string
	running string // the log line that says a service runs ("" for nats)

	mu       sync.Mutex
	cmd      *exec.Cmd
	log      string // the current run's output file
	runs     int
	wrap     []string // strace and its options for the next start
	wrapSys  string   // the syscalls strace fails then
	expect   bool     // the current run is being stopped on purpose
	held     bool     // do not restart (stopping for good)
	exited   chan struct{}
	stopping bool
	wg       sync.WaitGroup
}

// supervise starts the component and keeps it running.
func (c *component) supervise() {
	c.mu.Lock()
	c.stopping = false
	c.mu.Unlock()
	c.wg.Go(func() {
		for {
			if err := c.startOnce(); errors.Is(err, errHeld) {
				return
			} else if err != nil {
				c.tt.rec.violation("%s could not be started: %v", c.name, err)
				return
			}
			<-c.currentExit()
			c.mu.Lock()
			stop := c.stopping || c.held
			c.mu.Unlock()
			if stop {
				return
			}
			time.Sleep(300 * time.Millisecond) // the supervisor's restart delay
		}
	})
}

func (c *component) currentExit() chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.exited
}

// errHeld: the component is held down or stopping; it is not started.
var errHeld = errors.New("held down")

// startOnce starts a run, unless the component is held down or stopping
// (checked under the lock a fault takes to hold it, so that a fault's
// SIGKILL always finds the run it must stop).
func (c *component) startOnce() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held || c.stopping {
		return errHeld
	}
	c.runs++
	c.log = filepath.Join(c.tt.logDir, fmt.Sprintf("%s.%03d.log", c.name, c.runs))
	f, err := os.Create(c.log)
	if err != nil {
		return err
	}
	argv := append(append(append([]string{}, c.wrap...), c.bin), c.args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), c.env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return err
	}
	wrapped := c.wrapSys
	c.cmd, c.expect, c.exited = cmd, false, make(chan struct{})
	exited, run, logFile := c.exited, c.runs, c.log
	go func() {
		err := cmd.Wait()
		_ = f.Close()
		c.mu.Lock()
		expected := c.expect
		c.mu.Unlock()
		c.tt.rec.exit(c.name, run, wrapped, expected, err, logFile)
		close(exited)
	}()
	return nil
}

// signal sends sig to the component's process group; expected says the
// exit that may follow is the test's doing. For SIGTERM it waits up to
// 20 s for the exit and then kills the group.
func (c *component) signal(sig syscall.Signal, expected bool) {
	c.mu.Lock()
	cmd, exited := c.cmd, c.exited
	if expected {
		c.expect = true
	}
	c.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
	if sig == syscall.SIGSTOP {
		return
	}
	if sig == syscall.SIGTERM {
		// A stopped group would never act on the SIGTERM.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGCONT)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			c.tt.rec.note("%s did not exit within 20s of SIGTERM; killed", c.name)
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	}
}

// isRunning says whether the current run is up: its log has the line a
// running service prints (nats: the process is alive and healthy).
func (c *component) isRunning() error {
	c.mu.Lock()
	exited, logFile := c.exited, c.log
	c.mu.Unlock()
	select {
	case <-exited:
		return fmt.Errorf("%s is not running (restarting)", c.name)
	default:
	}
	if c.running == "" {
		return c.tt.natsHealthy()
	}
	b, err := os.ReadFile(logFile)
	if err != nil {
		return err
	}
	if !strings.Contains(string(b), c.running) {
		return fmt.Errorf("%s has not logged %q yet", c.name, c.running)
	}
	return nil
}

// stopClean stops the component for good with SIGTERM and reports an
// unclean exit.
func (c *component) stopClean() error {
	c.mu.Lock()
	c.stopping = true
	cmd, exited := c.cmd, c.exited
	c.expect = true
	c.mu.Unlock()
	if cmd == nil {
		return nil
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGCONT)
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	var err error
	select {
	case <-exited:
		if st := cmd.ProcessState; st != nil && !st.Success() {
			err = fmt.Errorf("exit %s", st)
		}
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		err = errors.New("did not exit within 30s of SIGTERM")
	}
	c.wg.Wait()
	return err
}

// stopAll kills whatever still runs (test cleanup).
func (tt *torture) stopAll() {
	for i := len(tt.order) - 1; i >= 0; i-- {
		c := tt.comps[tt.order[i]]
		c.mu.Lock()
		c.stopping, c.held = true, true
		cmd, exited := c.cmd, c.exited
		c.expect = true
		c.mu.Unlock()
		if cmd != nil && cmd.Process != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		c.wg.Wait()
	}
}

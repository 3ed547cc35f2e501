package e2e

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

type faultKind int

const (
	faultKill        faultKind = iota // SIGKILL, down for a moment, started again
	faultPause                        // SIGSTOP, then SIGCONT
	faultNATSRestart                  // nats-server stopped (SIGTERM) and started again under load
	faultStorage                      // restarted under strace failing a syscall, then restarted clean
	faultDiskFull                     // the tmpfs holding the store and the archive filled up, then freed
	faultClockJump                    // a service's clock moved (clock.SkewFileEnv), then set right

	faultLast = faultClockJump
)

func (k faultKind) String() string {
	return [...]string{"kill -9", "pause", "nats restart", "storage error", "disk full", "clock jump"}[k]
}

// fault is one entry of the schedule.
type fault struct {
	at     time.Duration // from the start of injection
	kind   faultKind
	target string
	hold   time.Duration // down, paused, wrapped or full for this long
	// storage errors: the syscalls, the errno and the nth call (every call
	// from the nth on when repeat)
	sys    string
	errno  string
	nth    int
	repeat bool
	// clock jumps: how far the service's clock moves
	skew time.Duration
}

func (f fault) String() string {
	s := fmt.Sprintf("t+%5.1fs %-13s %-10s for %4.1fs", f.at.Seconds(), f.kind, f.target, f.hold.Seconds())
	if f.kind == faultStorage {
		when := fmt.Sprint(f.nth)
		if f.repeat {
			when += "+"
		}
		s += fmt.Sprintf("  %s=%s when=%s", f.sys, f.errno, when)
	}
	if f.kind == faultClockJump {
		s += fmt.Sprintf("  by %+v", f.skew)
	}
	return s
}

type schedule []fault

func (s schedule) String() string {
	var b strings.Builder
	for _, f := range s {
		b.WriteString("  " + f.String() + "\n")
	}
	return b.String()
}

// storageSyscalls are the syscall sets a storage fault fails, with the
// largest nth call it picks (strace counts calls per thread, and a Go
// program spreads its calls over its threads). write(2) fails socket writes
// too (Go writes files and sockets alike with it): the component then also
// loses its connections.
var storageSyscalls = []struct {
	name string
	sys  []string
	max  int
}{
	{"fsync", []string{"fsync", "fdatasync"}, 6},
	{"pwrite", []string{"pwrite64"}, 8},
	{"write", []string{"write"}, 12},
	{"rename", []string{"rename", "renameat", "renameat2"}, 3},
}

// newSchedule draws the faults of a run from its seed: the same seed and
// duration give the same schedule.
func newSchedule(seed uint64, d time.Duration, can map[faultKind]bool) schedule {
	rng := rand.New(rand.NewPCG(seed, 0x746f7274757265))
	weights := map[faultKind]int{faultKill: 3, faultPause: 3, faultStorage: 4, faultNATSRestart: 1, faultDiskFull: 1, faultClockJump: 2}
	var kinds []faultKind
	for k := faultKill; k <= faultLast; k++ {
		for range weights[k] {
			if can[k] {
				kinds = append(kinds, k)
			}
		}
	}
	targets := []string{"nats", "ingest", "verifier", "gatekeeper", "rotator"}
	var s schedule
	for at := 3 * time.Second; at < d; at += time.Duration(1500+rng.IntN(3500)) * time.Millisecond {
		f := fault{at: at, kind: kinds[rng.IntN(len(kinds))], target: targets[rng.IntN(len(targets))]}
		f.hold = time.Duration(300+rng.IntN(3700)) * time.Millisecond
		switch f.kind {
		case faultNATSRestart, faultDiskFull:
			f.target = "nats"
		case faultStorage:
			// Most storage is nats-server's and the rotator's (the archive,
			// the keys); the other services write to disk only at start, so
			// for them write(2) fails their sockets too.
			f.target = []string{"nats", "nats", "nats", "nats", "rotator", "rotator", "ingest", "verifier", "gatekeeper"}[rng.IntN(9)]
			sc := storageSyscalls[rng.IntN(len(storageSyscalls))]
			f.sys, f.errno = sc.name, []string{"EIO", "ENOSPC"}[rng.IntN(2)]
			f.nth, f.repeat = 1+rng.IntN(sc.max), rng.IntN(2) == 0
			f.hold += 3 * time.Second
		case faultClockJump:
			// A service's host clock, forward or back by up to ten minutes
			// (far beyond key_overlap, 30 s here), for up to ten seconds.
			// The services date signatures and key windows by the NATS
			// server's clock (clock.Server), so a jump moves only what they
			// do before their first reading of it (docs/security.md,
			// "Clocks"). Before that clock, jumps of minutes dated
			// signatures outside their keys' windows.
			if f.target == "nats" {
				f.target = targets[1+rng.IntN(len(targets)-1)]
			}
			f.skew = time.Duration(2+rng.IntN(599)) * time.Second
			if rng.IntN(2) == 0 {
				f.skew = -f.skew
			}
			f.hold += time.Duration(rng.IntN(6000)) * time.Millisecond
		}
		s = append(s, f)
	}
	return s
}

// inject applies the schedule in real time: each fault at its time, in a
// goroutine of its own, so that faults on different components overlap. A
// fault whose component is still under the previous one is skipped (and
// counted), so that faults never queue up behind each other.
func (tt *torture) inject(s schedule) {
	start := time.Now()
	locks := map[string]*sync.Mutex{}
	for _, name := range tt.order {
		locks[name] = &sync.Mutex{}
	}
	var wg sync.WaitGroup
	for i, f := range s {
		time.Sleep(time.Until(start.Add(f.at)))
		mu := locks[f.target]
		if !mu.TryLock() {
			tt.rec.skipped(f)
			continue
		}
		wg.Go(func() {
			defer mu.Unlock()
			tt.apply(i, f)
		})
	}
	wg.Wait()
}

func (tt *torture) apply(i int, f fault) {
	c := tt.comps[f.target]
	tt.rec.fault(f)
	switch f.kind {
	case faultKill:
		c.mu.Lock()
		c.held = true
		c.mu.Unlock()
		c.signal(syscall.SIGKILL, true)
		<-c.currentExit()
		c.wg.Wait()
		time.Sleep(f.hold)
		c.mu.Lock()
		c.held = false
		c.mu.Unlock()
		c.supervise()
	case faultPause:
		c.signal(syscall.SIGSTOP, false)
		time.Sleep(f.hold)
		c.signal(syscall.SIGCONT, false)
	case faultNATSRestart:
		c.signal(syscall.SIGTERM, true)
	case faultStorage:
		log := filepath.Join(tt.logDir, fmt.Sprintf("strace.%03d.%s.log", i, f.target))
		c.mu.Lock()
		c.wrap, c.wrapSys = tt.straceArgs(f, log), f.sys
		c.mu.Unlock()
		c.signal(syscall.SIGTERM, true)
		time.Sleep(f.hold)
		c.mu.Lock()
		c.wrap, c.wrapSys = nil, ""
		c.mu.Unlock()
		c.signal(syscall.SIGTERM, true)
		tt.rec.injected(f, log)
	case faultDiskFull:
		tt.fillDisk(f)
	case faultClockJump:
		tt.setSkew(f.target, f.skew)
		time.Sleep(f.hold)
		tt.setSkew(f.target, 0)
	}
}

// skewFile is where a service reads its clock's offset (clock.SkewFileEnv).
func (tt *torture) skewFile(name string) string { return filepath.Join(tt.dir, "clock."+name) }

// setSkew moves a service's clock by d (0: sets it right), writing the
// file whole; the service reads it within 50 ms.
func (tt *torture) setSkew(name string, d time.Duration) {
	tmp := tt.skewFile(name) + ".tmp"
	if err := os.WriteFile(tmp, []byte(d.String()), 0o600); err == nil {
		err = os.Rename(tmp, tt.skewFile(name))
		if err != nil {
			tt.rec.note("clock jump of %s: %v", name, err)
		}
	} else {
		tt.rec.note("clock jump of %s: %v", name, err)
	}
}

// straceArgs wraps a component in strace failing the fault's syscalls.
func (tt *torture) straceArgs(f fault, log string) []string {
	var sys []string
	for _, sc := range storageSyscalls {
		if sc.name == f.sys {
			sys = sc.sys
		}
	}
	when := fmt.Sprint(f.nth)
	if f.repeat {
		when += "+"
	}
	set := strings.Join(sys, ",")
	return []string{tt.strace, "-f", "-qq", "--seccomp-bpf", "-o", log, "-e", "trace=" + set,
		"-e", fmt.Sprintf("inject=%s:error=%s:when=%s", set, f.errno, when), "--"}
}

var injectedLine = regexp.MustCompile(`\(INJECTED\)`)

// fillDisk fills the tmpfs holding the NATS store and the archive, keeps
// it full for the fault's time, frees it, and restarts nats-server if
// JetStream disabled itself (as it does when it runs out of space).
func (tt *torture) fillDisk(f fault) {
	path := filepath.Join(tt.disk, "filler")
	fh, err := os.Create(path)
	if err != nil {
		tt.rec.note("disk full: %v", err)
		return
	}
	buf := make([]byte, 1<<20)
	var n int64
	for {
		w, err := fh.Write(buf)
		n += int64(w)
		if err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				tt.rec.note("disk full: filling stopped early: %v", err)
			}
			break
		}
	}
	_ = fh.Close()
	tt.rec.note("disk full: %d MiB filler written", n>>20)
	time.Sleep(f.hold)
	tt.freeDisk()
	deadline := time.Now().Add(3 * time.Second)
	for tt.natsHealthy() != nil {
		if time.Now().After(deadline) {
			tt.rec.note("disk full: JetStream did not come back once the disk was freed; restarting nats-server")
			tt.comps["nats"].signal(syscall.SIGTERM, true)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (tt *torture) freeDisk() { _ = os.Remove(filepath.Join(tt.disk, "filler")) }

// recorder keeps what happened: faults, syscalls failed, exits, panics,
// notes and violations found on the way.
type recorder struct {
	start      time.Time
	mu         sync.Mutex
	faults     []string
	counts     map[faultKind]int
	failedSys  int
	skips      int
	exits      []string
	panics     []string
	notes      []string
	violations []string
}

func newRecorder(start time.Time) *recorder {
	return &recorder{start: start, counts: map[faultKind]int{}}
}

func (r *recorder) at() string { return fmt.Sprintf("t+%.1fs", time.Since(r.start).Seconds()) }

func (r *recorder) fault(f fault) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.counts[f.kind]++
	r.faults = append(r.faults, r.at()+" "+f.String())
}

func (r *recorder) skipped(f fault) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.skips++
	r.faults = append(r.faults, r.at()+" skipped ("+f.target+" is still under the previous fault): "+f.String())
}

func (r *recorder) injected(f fault, log string) {
	b, _ := os.ReadFile(log)
	n := len(injectedLine.FindAll(b, -1))
	calls := 0
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "(") && !strings.Contains(l, " --- ") && !strings.Contains(l, "+++") {
			calls++
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failedSys += n
	r.faults = append(r.faults, fmt.Sprintf("%s   %s: %d of %d %s calls failed with %s", r.at(), f.target, n, calls, f.sys, f.errno))
}

func (r *recorder) note(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes = append(r.notes, r.at()+" "+fmt.Sprintf(format, args...))
	r.faults = append(r.faults, r.at()+"   "+fmt.Sprintf(format, args...))
}

func (r *recorder) violation(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.violations = append(r.violations, fmt.Sprintf(format, args...))
}

var panicLine = regexp.MustCompile(`(?m)^(panic: |fatal error: |goroutine \d+ \[running\]:)`)

// scan records a panic or a Go runtime crash in a process's output.
func (r *recorder) scan(where, out string) {
	loc := panicLine.FindStringIndex(out)
	if loc == nil {
		return
	}
	end := min(len(out), loc[0]+1500)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.panics = append(r.panics, fmt.Sprintf("%s %s:\n%s", r.at(), where, out[loc[0]:end]))
}

// faultNames are the words an error that names a storage or connection
// fault contains.
var faultNames = []string{"error", "err=", "[err]", "[ftl]", "fatal", "failed", "no space left", "input/output", "refused", "timeout",
	"unavailable"}

// exit records how a run of a component ended. An exit the test did not
// cause must be a clean exit with an error that names the fault, never a
// crash.
func (r *recorder) exit(name string, run int, wrapped string, expected bool, err error, logFile string) {
	b, _ := os.ReadFile(logFile)
	out := string(b)
	if wrapped == "write" && strings.Contains(out, "netpollBreak write failed") {
		// The Go runtime's own wake-up write failed under the injection:
		// an artefact of failing every write(2), not a crash of the code.
		r.note("%s run %d: the Go runtime died of the injected write(2) failures (netpollBreak)", name, run)
	} else {
		r.scan(fmt.Sprintf("%s run %d (%s)", name, run, logFile), out)
	}
	if expected {
		return
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	tail := strings.Join(lines[max(0, len(lines)-4):], "\n")
	r.mu.Lock()
	defer r.mu.Unlock()
	r.exits = append(r.exits, fmt.Sprintf("%s %s run %d exited by itself (%v, strace failing: %q):\n%s", r.at(), name, run, err, wrapped, tail))
	var ee *exec.ExitError
	signaled := false
	if errors.As(err, &ee) {
		ws, ok := ee.Sys().(syscall.WaitStatus)
		signaled = ok && ws.Signaled()
	}
	named := slices.ContainsFunc(faultNames, func(s string) bool { return strings.Contains(strings.ToLower(tail), s) })
	switch {
	case wrapped == "write":
		// Its log writes failed too: it cannot name the fault, and a
		// panic's trace would be lost as well. Counted, not judged.
	case signaled:
		r.violations = append(r.violations, fmt.Sprintf("%s run %d was killed by a signal the test did not send (%v):\n%s", name, run, err, tail))
	case !named:
		r.violations = append(r.violations, fmt.Sprintf("%s run %d exited (%v) without an error that names the fault:\n%s", name, run, err, tail))
	}
}

func (r *recorder) faultSummary() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var parts []string
	total := 0
	for k := faultKill; k <= faultLast; k++ {
		total += r.counts[k]
		parts = append(parts, fmt.Sprintf("%d %s", r.counts[k], k))
	}
	return fmt.Sprintf("%d faults (%s; %d syscalls failed by strace; %d skipped, their component still under the previous one); "+
		"%d exits the test did not cause", total, strings.Join(parts, ", "), r.failedSys, r.skips, len(r.exits))
}

func (r *recorder) faultLog() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.faults, "\n") + "\nexits the test did not cause:\n" + strings.Join(r.exits, "\n")
}

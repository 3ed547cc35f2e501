package main

// CPU quotas for the scale section: each service process in its own cgroup
// with a CFS bandwidth limit, as a Kubernetes CPU limit would give a pod.
// cgroup v1 (the cpu controller's cpu.cfs_quota_us and cpu.cfs_period_us)
// and v2 (cpu.max) are supported.

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// cfsPeriod is the CFS period of every quota (µs): the kernel's default.
const cfsPeriod = 100000

// cpuQuotas makes cgroups with a CPU quota under one parent and removes
// them again.
type cpuQuotas struct {
	v2     bool
	parent string  // the cpu controller's mount (v1) or the cgroup2 mount
	cpus   float64 // the quota of each cgroup, in CPUs
	made   []string
	prefix string
}

// detectCPUQuotas finds a cgroup hierarchy with the cpu controller where
// this process may create cgroups. It returns why not when there is none:
// the caller skips what needs quotas.
func detectCPUQuotas(cpus float64) (*cpuQuotas, string) {
	if cpus <= 0 || cpus > float64(numCPU()) {
		return nil, fmt.Sprintf("a quota of %.2f CPUs is not within (0, %d]", cpus, numCPU())
	}
	mounts, err := os.ReadFile("/proc/mounts")
	if err != nil {
		return nil, "cannot read /proc/mounts: " + err.Error()
	}
	var v1, v2 string
	for line := range strings.Lines(string(mounts)) {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		switch {
		case f[2] == "cgroup" && slices.Contains(strings.Split(f[3], ","), "cpu") && v1 == "":
			v1 = f[1]
		case f[2] == "cgroup2" && v2 == "":
			v2 = f[1]
		}
	}
	q := &cpuQuotas{cpus: cpus, prefix: fmt.Sprintf("ccbench-%d-", os.Getpid())}
	var why string
	switch {
	case v1 != "":
		q.parent = v1
	case v2 != "":
		ctl, err := os.ReadFile(filepath.Join(v2, "cgroup.subtree_control"))
		if err != nil || !slices.Contains(strings.Fields(string(ctl)), "cpu") {
			return nil, fmt.Sprintf("the cgroup2 hierarchy at %s does not delegate the cpu controller (cgroup.subtree_control: %q)", v2,
				strings.TrimSpace(string(ctl)))
		}
		q.parent, q.v2 = v2, true
	default:
		return nil, "no cgroup hierarchy with the cpu controller in /proc/mounts"
	}
	// Can we? (root, a writable hierarchy)
	probe := filepath.Join(q.parent, q.prefix+"probe")
	if err := os.Mkdir(probe, 0o755); err != nil {
		why = fmt.Sprintf("cannot create a cgroup under %s (%v): run as root", q.parent, err)
		return nil, why
	}
	_ = os.Remove(probe)
	return q, ""
}

func (q *cpuQuotas) String() string {
	v := "v1 cpu.cfs_quota_us/cpu.cfs_period_us"
	if q.v2 {
		v = "v2 cpu.max"
	}
	return fmt.Sprintf("%.2f CPU each (cgroup %s = %d/%d µs under %s)", q.cpus, v, q.quotaUS(), cfsPeriod, q.parent)
}

func (q *cpuQuotas) quotaUS() int { return int(q.cpus * cfsPeriod) }

// group creates cgroup ccbench-<pid>-<name> with the quota and returns its
// directory.
func (q *cpuQuotas) group(name string) (string, error) {
	dir := filepath.Join(q.parent, q.prefix+name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", fmt.Errorf("cgroup: %w", err)
	}
	q.made = append(q.made, dir)
	write := func(file, v string) error {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(v), 0o644); err != nil { //nolint:gosec // a cgroup file
			return fmt.Errorf("cgroup %s: %w", file, err)
		}
		return nil
	}
	if q.v2 {
		return dir, write("cpu.max", fmt.Sprintf("%d %d", q.quotaUS(), cfsPeriod))
	}
	if err := write("cpu.cfs_period_us", strconv.Itoa(cfsPeriod)); err != nil {
		return dir, err
	}
	return dir, write("cpu.cfs_quota_us", strconv.Itoa(q.quotaUS()))
}

// command is bin with args run inside cgroup dir from its first
// instruction: a shell moves itself into the cgroup, then execs bin (the
// pid stays the same).
func (q *cpuQuotas) command(dir, bin string, args ...string) *exec.Cmd {
	c := exec.Command("/bin/sh", append([]string{"-c", `echo $$ > "$CCBENCH_CGROUP/cgroup.procs" && exec "$0" "$@"`, bin}, args...)...)
	c.Env = append(os.Environ(), "CCBENCH_CGROUP="+dir)
	return c
}

// throttling is a cgroup's CFS bandwidth statistics.
type throttling struct {
	periods, throttled int64         // periods with runnable tasks, and of those the ones that hit the quota
	usage              time.Duration // CPU time (v2 only; v1 keeps it in cpuacct)
}

func (t throttling) sub(u throttling) throttling {
	return throttling{periods: t.periods - u.periods, throttled: t.throttled - u.throttled, usage: t.usage - u.usage}
}

// stat reads dir's cpu.stat.
func (q *cpuQuotas) stat(dir string) throttling {
	f, err := os.Open(filepath.Join(dir, "cpu.stat"))
	if err != nil {
		return throttling{}
	}
	defer func() { _ = f.Close() }()
	var t throttling
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		n, _ := strconv.ParseInt(v, 10, 64)
		switch k {
		case "nr_periods":
			t.periods = n
		case "nr_throttled":
			t.throttled = n
		case "usage_usec":
			t.usage = time.Duration(n) * time.Microsecond
		}
	}
	return t
}

// removeAll removes every cgroup made, waiting up to five seconds for the
// processes in them to be gone (a cgroup with tasks cannot be removed).
func (q *cpuQuotas) removeAll() error {
	var errs []error
	for _, dir := range slices.Backward(q.made) {
		var err error
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if err = os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) || time.Now().After(deadline) {
				break
			}
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove cgroup: %w", err))
		}
	}
	q.made = nil
	return errors.Join(errs...)
}

package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/claimcheck/claimcheck/pkg/clock"
	"github.com/claimcheck/claimcheck/pkg/identity"
	"github.com/claimcheck/claimcheck/pkg/natstest"
)

// The torture test runs claimcheck as a deployment does (a nats-server
// with JetStream and fsync before every acknowledgement, the four
// services as processes of their own, each with its own credentials) under
// a seeded random workload — several agents' sessions through the real
// claimcheck-hook, claims, gated Stops and PreToolUses, rotator passes with
// short windows, key rotations — while a seeded random schedule of faults
// hits it: storage errors injected into nats-server and into each service
// (EIO or ENOSPC on fsync, write, pwrite or rename at a random nth call,
// through strace's syscall fault injection), a full disk (a small tmpfs
// holding the NATS store and the archive), SIGKILL and SIGSTOP/SIGCONT of
// random components at random times, the NATS server restarted under
// load, and a service's clock moved forward or back by up to ten minutes
// (clock.SkewFileEnv). When the faults stop and everything has recovered,
// an oracle checks what must hold (torture_oracle_test.go). On a violation it prints the
// seed, the fault schedule and the events around the violation; the same
// seed gives the same schedule and workload choices.
//
// CLAIMCHECK_TORTURE_DURATION (default 45s) is how long faults are
// injected; CLAIMCHECK_TORTURE_SEED (default: from the clock) picks the
// schedule; CLAIMCHECK_TORTURE_LOG, when set, is a file the report is
// appended to (make torture).
const (
	tortureInNSEnv  = "CLAIMCHECK_E2E_TORTURE_MOUNTNS"
	tortureDuration = "CLAIMCHECK_TORTURE_DURATION"
	tortureSeedEnv  = "CLAIMCHECK_TORTURE_SEED"
	tortureLogEnv   = "CLAIMCHECK_TORTURE_LOG"
	tortureHost     = "torture-host"
)

// tortureStreams is the stream configuration of every process of a run:
// INTAKE reserves its size in the store, which must fit the small disk.
var tortureStreams = []string{"CLAIMCHECK_STREAMS_INTAKE_MAX_BYTES=8388608"}

func TestTorture(t *testing.T) {
	if os.Getenv(tortureInNSEnv) == "" && mountNSAvailable() {
		reexecInMountNS(t)
		return
	}
	cfg := tortureConfigFromEnv(t)
	tt := newTorture(t, cfg)
	tt.run(t)
}

type tortureConfig struct {
	seed     uint64
	duration time.Duration
	logFile  string
}

func tortureConfigFromEnv(t *testing.T) tortureConfig {
	t.Helper()
	c := tortureConfig{seed: uint64(time.Now().UnixNano()) % 1_000_000_000, duration: 45 * time.Second, logFile: os.Getenv(tortureLogEnv)}
	if v := os.Getenv(tortureSeedEnv); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", tortureSeedEnv, v, err)
		}
		c.seed = s
	}
	if v := os.Getenv(tortureDuration); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("%s=%q: want a positive Go duration: %v", tortureDuration, v, err)
		}
		c.duration = d
	}
	return c
}

// mountNSAvailable says whether the test can run in a mount namespace of
// its own (root, unshare): then the tmpfs it mounts for the full disk is
// gone with the namespace, whatever happens to the test.
func mountNSAvailable() bool {
	if os.Geteuid() != 0 || os.Getenv("CLAIMCHECK_E2E_NO_NETNS") != "" {
		return false
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		return false
	}
	return exec.Command("unshare", "--mount", "true").Run() == nil
}

func reexecInMountNS(t *testing.T) {
	cfg := tortureConfigFromEnv(t)
	timeout := cfg.duration + 8*time.Minute
	ctx, cancel := context.WithTimeout(t.Context(), timeout+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "--mount", "--propagation", "private", "--", os.Args[0],
		"-test.run", "^TestTorture$", "-test.v", "-test.count=1", "-test.timeout", timeout.String())
	cmd.Env = append(os.Environ(), tortureInNSEnv+"=1", "CLAIMCHECK_BIN="+binDir, tortureSeedEnv+"="+strconv.FormatUint(cfg.seed, 10))
	out, err := cmd.CombinedOutput()
	for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		t.Log(l)
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: TestTorture") {
		t.Fatalf("the torture test in its mount namespace (seed %d): %v", cfg.seed, err)
	}
}

// torture is one run: its directories, credentials, components, workload
// and the record of what happened.
type torture struct {
	cfg      tortureConfig
	dir      string
	disk     string // the NATS store and the archive; a tmpfs when mounted
	tmpfs    bool
	authDir  string
	url      string
	monitor  string
	keys     string // the key set the hook trusts
	creds    map[string]string
	comps    map[string]*component
	order    []string // start order
	strace   string   // strace's path, "" when it cannot inject here
	noStrace string   // why not
	rec      *recorder
	hookEnv  []string
	start    time.Time
	logDir   string
}

func newTorture(t *testing.T, cfg tortureConfig) *torture {
	dir := t.TempDir()
	tt := &torture{cfg: cfg, dir: dir, disk: filepath.Join(dir, "disk"), authDir: filepath.Join(dir, "authority"),
		creds: map[string]string{}, comps: map[string]*component{}, logDir: filepath.Join(dir, "logs"), start: time.Now()}
	tt.rec = newRecorder(tt.start)
	for _, d := range []string{tt.disk, tt.logDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	tt.strace, tt.noStrace = straceUsable()
	if os.Getenv(tortureInNSEnv) != "" {
		// 48 MiB, and 8 MiB more per minute of faults (the archive grows).
		size := min(48<<20+int64(cfg.duration/time.Minute)*8<<20, 512<<20)
		out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d,mode=0700", size), "tortured",
			tt.disk).CombinedOutput()
		if err != nil {
			t.Logf("no full-disk faults: mounting a tmpfs failed: %v %s", err, out)
		} else {
			tt.tmpfs = true
			t.Cleanup(func() { _ = exec.Command("umount", "-l", tt.disk).Run() })
		}
	} else {
		t.Logf("no full-disk faults: they need root and a mount namespace of the test's own (unshare)")
	}
	if tt.strace == "" {
		t.Logf("no storage-error faults: %s", tt.noStrace)
	}
	port, mon := natstest.FreePort(t), natstest.FreePort(t)
	tt.url, tt.monitor = fmt.Sprintf("nats://127.0.0.1:%d", port), fmt.Sprintf("127.0.0.1:%d", mon)
	tt.mustRun(t, nil, "claimcheck", "creds", "init", "--data-dir", tt.authDir)
	tt.mustRun(t, nil, "claimcheck", "creds", "server-config", "--data-dir", tt.authDir,
		"--resolver-dir", filepath.Join(dir, "resolver"), "--out", filepath.Join(dir, "auth.conf"))
	writeFileT(t, filepath.Join(dir, "nats.conf"), fmt.Sprintf(`server_name: tortured
listen: "127.0.0.1:%d"
http: %q
max_payload: 1MB
jetstream {
  store_dir: %q
  sync_interval: always
}
include "auth.conf"
`, port, tt.monitor, filepath.Join(tt.disk, "js")))
	keyDir := filepath.Join(dir, "keys")
	tt.keys = filepath.Join(dir, "gate-keys.json")
	tt.comps["nats"] = &component{name: "nats", tt: tt, bin: bin("nats-server"), args: []string{"-c", filepath.Join(dir, "nats.conf")}}
	// Rotator passes every second with a hot window of seconds. The
	// protect window stays above the faults' horizon: an ingest started
	// afresh dedupes an event redelivered to it only against its chain's
	// hot entries (docs/archive.md, "Known limits"). The key overlap stays
	// above how long a verifier or gatekeeper may take to hear of a
	// rotation (keyring.FollowConfig.Every).
	svcEnv := []string{"CLAIMCHECK_VERIFIER_KEY_DIR=" + keyDir, "CLAIMCHECK_GATEKEEPER_KEY_DIR=" + keyDir,
		"CLAIMCHECK_ROTATOR_KEY_DIR=" + keyDir, "CLAIMCHECK_ROTATOR_ARCHIVE_URL=file://" + filepath.Join(tt.disk, "archive"),
		"CLAIMCHECK_ROTATOR_INTERVAL=1s", "CLAIMCHECK_ROTATOR_HOT_WINDOW=4s", "CLAIMCHECK_ROTATOR_PROTECT_WINDOW=30s",
		"CLAIMCHECK_ROTATOR_ARCHIVE_RETENTION=24h", "CLAIMCHECK_ROTATOR_KEY_ROTATION_PERIOD=40s", "CLAIMCHECK_ROTATOR_KEY_OVERLAP=30s",
		"CLAIMCHECK_ROTATOR_SEGMENT_MESSAGES=200", tortureStreams[0]}
	tt.order = []string{"nats", identity.RoleIngest, identity.RoleRotator, identity.RoleVerifier, identity.RoleGatekeeper}
	for _, svc := range tt.order[1:] {
		env := append(slices.Clip(svcEnv), clock.SkewFileEnv+"="+tt.skewFile(svc))
		tt.comps[svc] = &component{name: svc, tt: tt, bin: bin(svc), env: env, running: svc + " running"}
	}
	return tt
}

func (tt *torture) mustRun(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	r := tt.runCmd(env, nil, 60*time.Second, name, args...)
	if r.code != 0 {
		t.Fatalf("%s %s: %+v", name, strings.Join(args, " "), r)
	}
	return r.stdout
}

// runCmd runs a binary to completion (never failing the test, so that
// the workload's goroutines may call it) and scans its stderr for panics.
func (tt *torture) runCmd(env []string, stdin []byte, timeout time.Duration, name string, args ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin(name), args...)
	cmd.Env = append(append(os.Environ(), tortureStreams...), env...)
	if stdin != nil {
		cmd.Stdin = strings.NewReader(string(stdin))
	}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		code = -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
	}
	r := result{code, out.String(), errb.String()}
	tt.rec.scan(name+" "+strings.Join(args, " "), r.stderr)
	return r
}

// as is the environment of a command with a role's credentials.
func (tt *torture) as(who string) []string {
	return []string{"CLAIMCHECK_NATS_URL=" + tt.url, "CLAIMCHECK_NATS_CREDS=" + tt.creds[who]}
}

func (tt *torture) issue(t *testing.T, role, host string) {
	t.Helper()
	who, path := issueCreds(t, tt.mustRun, tt.authDir, tt.dir, role, host)
	tt.creds[who] = path
}

// natsHealthy says whether nats-server answers /healthz with JetStream up.
func (tt *torture) natsHealthy() error {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + tt.monitor + "/healthz")
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthz %s", resp.Status)
	}
	return nil
}

// refreshKeys rewrites the key set the hook trusts (as `claimcheck up`
// does after every registry change).
func (tt *torture) refreshKeys() error {
	r := tt.runCmd(tt.as(identity.RoleOperator), nil, 5*time.Second, "claimcheck", "keys", "export")
	if r.code != 0 || !strings.HasPrefix(strings.TrimSpace(r.stdout), "[") {
		return fmt.Errorf("keys export: exit %d %s", r.code, strings.TrimSpace(r.stderr))
	}
	tmp := tt.keys + ".tmp"
	if err := os.WriteFile(tmp, []byte(r.stdout), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, tt.keys)
}

// setUp starts the server and the services and waits until they run.
func (tt *torture) setUp(t *testing.T) {
	t.Helper()
	tt.comps["nats"].supervise()
	natstest.Eventually(t, 60*time.Second, tt.natsHealthy)
	for _, r := range []string{identity.RoleAdmin, identity.RoleOperator, identity.RoleAuditor, identity.RoleIngest, identity.RoleVerifier,
		identity.RoleGatekeeper, identity.RoleRotator} {
		tt.issue(t, r, "")
	}
	tt.issue(t, identity.RoleHook, tortureHost)
	tt.mustRun(t, tt.as(identity.RoleAdmin), "claimcheck", "streams", "ensure")
	for _, name := range tt.order[1:] {
		c := tt.comps[name]
		c.args = []string{"--nats-url", tt.url, "--nats-creds", tt.creds[name], "--http-listen", ""}
		c.supervise()
		natstest.Eventually(t, 90*time.Second, c.isRunning)
	}
	natstest.Eventually(t, 30*time.Second, tt.refreshKeys)
	tt.hookEnv = append(tt.as(tortureHost), "CLAIMCHECK_HOOK_STATE_DIR="+filepath.Join(tt.dir, "hook"), "CLAIMCHECK_HOOK_GATE_KEYS="+tt.keys,
		"CLAIMCHECK_HOOK_GATE_DEADLINE=3s", "CLAIMCHECK_HOOK_HOST="+tortureHost)
}

func (tt *torture) run(t *testing.T) {
	t.Logf("torture seed %d, faults for %s (reproduce: %s=%d %s=%s)", tt.cfg.seed, tt.cfg.duration, tortureSeedEnv, tt.cfg.seed,
		tortureDuration, tt.cfg.duration)
	defer tt.keepLogs(t)
	tt.setUp(t)
	defer tt.stopAll()
	sched := newSchedule(tt.cfg.seed, tt.cfg.duration, tt.capabilities())
	t.Logf("fault schedule (%d faults):\n%s", len(sched), sched)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	work := newWorkload(tt, tt.cfg.seed)
	for i := range workloadAgents {
		wg.Go(func() { work.agent(i, stop) })
	}
	wg.Go(func() { work.keys(stop) })
	tt.inject(sched)
	close(stop)
	wg.Wait()
	tt.recover(t)
	work.final(t)
	tt.restartCleanly(t)
	rep := tt.check(t, work)
	summary := fmt.Sprintf("torture seed %d: %s of faults, %s in all; %s; %s", tt.cfg.seed, tt.cfg.duration,
		time.Since(tt.start).Round(time.Second), tt.rec.faultSummary(), work.summary())
	t.Log(summary)
	t.Log(rep)
	work.dump(filepath.Join(tt.logDir, "hook-runs.log"))
	t.Logf("faults as injected:\n%s", tt.rec.faultLog())
	tt.appendLog(summary, rep, sched)
	if len(rep.violations) > 0 {
		t.Fatalf("torture seed %d: %d violations\n%s\nfault schedule:\n%s\nfaults as injected:\n%s", tt.cfg.seed, len(rep.violations),
			strings.Join(rep.violations, "\n\n"), sched, tt.rec.faultLog())
	}
}

// keepLogs copies the processes' logs (and strace's) out of the test's
// directory when the test failed, and says where.
func (tt *torture) keepLogs(t *testing.T) {
	if !t.Failed() && os.Getenv("CLAIMCHECK_TORTURE_KEEP") == "" {
		return
	}
	dst := filepath.Join(os.TempDir(), fmt.Sprintf("claimcheck-torture-%d-%d", tt.cfg.seed, time.Now().Unix()))
	if out, err := exec.Command("cp", "-r", tt.logDir, dst).CombinedOutput(); err != nil {
		t.Logf("keeping the logs: %v %s", err, out)
		return
	}
	t.Logf("the processes' logs are kept in %s", dst)
}

// capabilities says which fault kinds this machine can inject.
func (tt *torture) capabilities() map[faultKind]bool {
	return map[faultKind]bool{faultKill: true, faultPause: true, faultNATSRestart: true, faultStorage: tt.strace != "", faultDiskFull: tt.tmpfs,
		faultClockJump: true}
}

func (tt *torture) appendLog(summary string, rep *oracleReport, sched schedule) {
	if tt.cfg.logFile == "" {
		return
	}
	f, err := os.OpenFile(tt.cfg.logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	status := "PASS"
	if len(rep.violations) > 0 {
		status = fmt.Sprintf("FAIL (%d violations)", len(rep.violations))
	}
	fmt.Fprintf(f, "%s %s %s\n  %s\n", time.Now().UTC().Format(time.RFC3339), status, summary, strings.ReplaceAll(rep.String(), "\n", "\n  "))
	if len(rep.violations) > 0 {
		fmt.Fprintf(f, "  violations:\n    %s\n  schedule:\n%s\n", strings.Join(rep.violations, "\n    "), sched)
	}
}

// recover stops injecting: every component resumes, runs without strace,
// the disk is freed, and everything runs again.
func (tt *torture) recover(t *testing.T) {
	t.Helper()
	tt.freeDisk()
	for _, name := range tt.order[1:] {
		tt.setSkew(name, 0)
	}
	for _, name := range tt.order {
		c := tt.comps[name]
		c.mu.Lock()
		wrapped := c.wrap != nil
		c.wrap, c.wrapSys = nil, ""
		c.mu.Unlock()
		c.signal(syscall.SIGCONT, false)
		if wrapped {
			c.signal(syscall.SIGTERM, true)
		}
	}
	// A disk that was full, or a store that failed a write, may have left
	// JetStream disabled until the server restarts (as an operator would).
	if err := tt.natsHealthy(); err != nil {
		tt.comps["nats"].signal(syscall.SIGTERM, true)
	}
	natstest.Eventually(t, 90*time.Second, tt.natsHealthy)
	for _, name := range tt.order[1:] {
		natstest.Eventually(t, 120*time.Second, tt.comps[name].isRunning)
	}
	natstest.Eventually(t, 30*time.Second, tt.refreshKeys)
	t.Logf("everything runs again at t+%s", time.Since(tt.start).Round(time.Second))
}

// restartCleanly stops every service with SIGTERM (each must exit 0) and
// starts them again on the same data, then checks the ledger once more.
func (tt *torture) restartCleanly(t *testing.T) {
	t.Helper()
	for i := len(tt.order) - 1; i >= 1; i-- {
		c := tt.comps[tt.order[i]]
		if err := c.stopClean(); err != nil {
			tt.rec.violation("%s did not stop cleanly after the faults: %v", c.name, err)
		}
	}
	for _, name := range tt.order[1:] {
		c := tt.comps[name]
		c.mu.Lock()
		c.held = false
		c.mu.Unlock()
		c.supervise()
		natstest.Eventually(t, 120*time.Second, c.isRunning)
	}
	r := tt.verifyLedger()
	if r.code != 0 {
		tt.rec.violation("ledger verify after restarting every service on the same data: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// Command ccbench prints claimcheck's performance table (`make bench`). Every
// figure is measured in the same run as its baseline and reported as a ratio,
// because the machines it runs on are shared and noisy.
//
//   - hook: wall time from exec of claimcheck-hook to its exit after
//     JetStream's durable acknowledgement (sync_interval always), interleaved
//     with the predecessor's approach (a Python hook appending the same
//     payload to a JSONL file with flush and fsync) and with /bin/true.
//   - ingest: events/s draining a pre-filled INTAKE into the ledger, beside
//     the raw JetStream durable publish rate of the same server, on one
//     server (R1) and on a three-server cluster (R3) in this process; R1
//     also with a seeded mix of realistic tool outputs (see payloads.go).
//   - signing, fleet: see verifier.go.
//   - gate: gatekeeper latency in the service, over NATS and end to end
//     from the hook's exec; see gate.go.
//   - archive: entries/s and compression of a rotator archive pass beside a
//     plain copy of the same ledger messages; see archive.go.
//   - scale: verifier and gatekeeper processes each under a CPU quota
//     (cgroups) at 1, 2 and 4 processes; see scale.go.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/mod/sumdb/note"

	"github.com/claimcheck/claimcheck/pkg/clock"
	"github.com/claimcheck/claimcheck/pkg/embedded"
	"github.com/claimcheck/claimcheck/pkg/envelope"
	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/identity"
	"github.com/claimcheck/claimcheck/pkg/service"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/pkg/transparency"
	"github.com/claimcheck/claimcheck/services/ingest"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "ccbench:", err)
		os.Exit(1)
	}
}

type options struct {
	bin      string
	quick    bool
	hookRuns int
	events   int
	python   string
	// baselineHook, when set, is a claimcheck-hook of an earlier revision,
	// timed on a NATS as that revision ran it (no credentials, INTAKE's
	// subjects without a publisher, no encryption).
	baselineHook string
	skipR3       bool
	sections     string
	// gate
	gateRequests int
	gateRuns     int
	// archive
	archiveEntries int
	// forensics
	forensicsEntries int
	// scale
	scaleCPU      float64
	scaleInFlight int
	scaleStore    string
	// profiling
	cpuProfile string
	// ingest
	ingestWorkloads   string
	drainProfiles     string
	forensicsProfiles string
	forensicsECS      bool
}

func run() error {
	if len(os.Args) == 3 && os.Args[1] == serveNATSArg {
		return serveNATS(os.Args[2])
	}
	var o options
	flag.StringVar(&o.bin, "bin", "../bin", "directory with the built binaries")
	flag.BoolVar(&o.quick, "quick", false, "short run (fewer samples)")
	flag.IntVar(&o.hookRuns, "hook-runs", 400, "hook executions per contender")
	flag.IntVar(&o.events, "events", 40000, "events per ingest scenario")
	flag.StringVar(&o.python, "python", "", "Python interpreter for the baseline (default: /usr/bin/python3, else python3 on $PATH)")
	flag.StringVar(&o.baselineHook, "baseline-hook", "",
		"a claimcheck-hook of an earlier revision to time beside this one, on a NATS as it ran (no credentials, its INTAKE subjects)")
	flag.BoolVar(&o.skipR3, "skip-r3", false, "skip the three-server cluster")
	flag.StringVar(&o.sections, "sections", "hook,ingest,signing,fleet,gate,archive,forensics,scale", "which tables to print")
	flag.IntVar(&o.gateRequests, "gate-requests", 5000, "gate requests per latency row (at 1000/s)")
	flag.IntVar(&o.gateRuns, "gate-runs", 200, "hook executions per contender in the gate end-to-end table")
	flag.IntVar(&o.archiveEntries, "archive-entries", 80000, "ledger entries in the archive table")
	flag.IntVar(&o.forensicsEntries, "forensics-entries", 200000, "ledger entries in the forensics table (replay, export, verify)")
	flag.Float64Var(&o.scaleCPU, "scale-cpu", 0.25,
		"scale: the CPU quota of each verifier and gatekeeper process (cgroup cpu controller; needs root)")
	flag.IntVar(&o.scaleInFlight, "scale-in-flight", 128, "scale: gate requests in flight (closed loop) in the gatekeeper rows")
	flag.StringVar(&o.scaleStore, "scale-store", defaultScaleStore(),
		"scale: where the NATS server keeps its store in the scale rows (default /dev/shm, a tmpfs, where there is one: "+
			"the rows measure the services, not the disk's fsync rate)")
	flag.StringVar(&o.ingestWorkloads, "ingest-workloads", "",
		"ingest: run only the workloads whose name contains one of these comma-separated words (default: all)")
	flag.StringVar(&o.drainProfiles, "drain-profiles", "",
		"ingest: write a CPU profile of each timed drain (not the pre-fill) into this directory")
	flag.BoolVar(&o.forensicsECS, "forensics-ecs", true, "forensics: include the ECS export row (the slowest)")
	flag.StringVar(&o.forensicsProfiles, "forensics-profiles", "",
		"forensics: write a CPU and a heap profile of each timed row run (not the fill) into this directory")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "",
		"write a CPU profile of this process (the in-process NATS servers, ingest and load generators) to this file")
	flag.Parse()
	if o.cpuProfile != "" && (o.drainProfiles != "" || o.forensicsProfiles != "") {
		return errors.New("-cpuprofile cannot be used with -drain-profiles or -forensics-profiles")
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("-cpuprofile: %w", err)
		}
		defer func() {
			pprof.StopCPUProfile()
			_ = f.Close()
		}()
	}
	if o.quick {
		o.hookRuns, o.events = 100, 12000
	}
	tmp, err := os.MkdirTemp("", "ccbench")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()

	fmt.Printf("claimcheck benchmark — %s, %d CPUs; every ratio compares figures from this run\n\n",
		time.Now().UTC().Format(time.RFC3339), numCPU())
	sections := []struct {
		name string
		run  func(options, string) error
	}{{"hook", hookBench}, {"ingest", ingestBench}, {"signing", signingBench}, {"fleet", fleetBench}, {"gate", gateBench}, {
		"archive", archiveBench}, {"forensics", forensicsBench}, {"scale", scaleBench}}
	want := strings.Split(o.sections, ",")
	for _, w := range want {
		if !slices.ContainsFunc(sections, func(s struct {
			name string
			run  func(options, string) error
		}) bool {
			return s.name == w
		}) {
			return fmt.Errorf("-sections: unknown section %q", w)
		}
	}
	first := true
	for _, s := range sections {
		if !slices.Contains(want, s.name) {
			continue
		}
		if !first {
			fmt.Println()
		}
		first = false
		if err := s.run(o, tmp); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	return nil
}

// ---- hook ----------------------------------------------------------------

const pyHook = `import json, os, sys, time
raw = sys.stdin.buffer.read()
event = json.loads(raw)
entry = {"received_at": time.time(), "session_id": event.get("session_id"), "payload": event}
with open(os.environ["LEDGER"], "a") as f:
    f.write(json.dumps(entry) + "\n")
    f.flush()
    os.fsync(f.fileno())
`

const hookPayload = `{"session_id":"00893aaf-19fa-41d2-8238-13269b9b3ca0","transcript_path":"/home/user/.claude/projects/p/00893aaf-19fa-41d2-8238-13269b9b3ca0.jsonl","cwd":"/home/user/my-project","permission_mode":"default","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"go test ./...","description":"Run tests"},"tool_response":{"stdout":"ok  \tgithub.com/acme/app/internal/store\t0.412s\nok  \tgithub.com/acme/app/cmd\t0.020s\n","stderr":"","interrupted":false,"isImage":false},"tool_use_id":"toolu_01ABC123","duration_ms":1840}`

// hookBench times claimcheck-hook from exec to exit (on a plain server,
// with credentials as `claimcheck up` runs it, and its TLS build)
// interleaved with the Python baseline, the exec floors and, with
// -baseline-hook, an earlier revision; checks that every run's event
// reached INTAKE; times the durable acknowledgement alone; and prints the
// hook table.
func hookBench(o options, tmp string) error {
	py, err := findPython(o.python)
	if err != nil {
		return err
	}
	pyScript := filepath.Join(tmp, "hook.py")
	if err := os.WriteFile(pyScript, []byte(pyHook), 0o600); err != nil {
		return err
	}
	l, err := startLocalJS(context.Background(), filepath.Join(tmp, "hook-nats"))
	if err != nil {
		return err
	}
	defer l.close()
	srv, js := l.srv, l.js
	hookEnv := append(os.Environ(), "CLAIMCHECK_NATS_URL="+srv.ClientURL(), "CLAIMCHECK_HOOK_STATE_DIR="+filepath.Join(tmp, "hook-state"))
	// The same hook as claimcheck up runs it: an authenticated identity on
	// a server in operator mode whose store is encrypted.
	sec, credsFile, err := startSecuredJS(context.Background(), filepath.Join(tmp, "hook-secured"))
	if err != nil {
		return err
	}
	defer sec.close()
	securedEnv := append(os.Environ(), "CLAIMCHECK_NATS_URL="+sec.srv.ClientURL(), "CLAIMCHECK_NATS_CREDS="+credsFile,
		"CLAIMCHECK_HOOK_STATE_DIR="+filepath.Join(tmp, "hook-state-secured"))
	contenders, err := hookContenders(o.bin, tmp, py, pyScript, hookEnv, securedEnv)
	if err != nil {
		return err
	}
	if o.baselineHook != "" {
		legacy, err := startLegacyJS(context.Background(), filepath.Join(tmp, "hook-legacy"))
		if err != nil {
			return err
		}
		defer legacy.close()
		legacyEnv := append(os.Environ(), "CLAIMCHECK_NATS_URL="+legacy.srv.ClientURL(),
			"CLAIMCHECK_HOOK_STATE_DIR="+filepath.Join(tmp, "hook-state-legacy"))
		contenders = append(contenders, execContender{"baseline: " + o.baselineHook + " on its NATS", func() *exec.Cmd {
			c := exec.Command(o.baselineHook)
			c.Env = legacyEnv
			return c
		}})
	}
	samples, err := timeContenders(contenders, o.hookRuns)
	if err != nil {
		return err
	}
	if err := checkDelivered(js, sec.js, o.hookRuns); err != nil {
		return err
	}
	acks, err := ackFloor(js, o.hookRuns)
	if err != nil {
		return err
	}
	printHookTable(o, py, contenders, samples, acks)
	return nil
}

// findPython is the interpreter for the Python baseline: -python, else
// /usr/bin/python3, else python3 on $PATH.
func findPython(py string) (string, error) {
	if py == "" {
		py = "/usr/bin/python3"
		if _, err := os.Stat(py); err != nil {
			if py, err = exec.LookPath("python3"); err != nil {
				return "", errors.New("no python3 for the baseline; pass -python")
			}
		}
	}
	return py, nil
}

// execContender is a row of the hook table: a command timed from exec to
// exit, made afresh for every run.
type execContender struct {
	name string
	cmd  func() *exec.Cmd
}

// hookContenders are the hook table's rows, in its order: claimcheck-hook
// (on hookEnv's server, then with securedEnv's credentials), its TLS build,
// the Python hook (pyScript run by py), and the floors (start-up only, a
// static Go binary built in tmp, /bin/true).
func hookContenders(bin, tmp, py, pyScript string, hookEnv, securedEnv []string) ([]execContender, error) {
	pyEnv := append(os.Environ(), "LEDGER="+filepath.Join(tmp, "ledger.jsonl"))
	floor, err := buildGoFloor(tmp)
	if err != nil {
		return nil, err
	}
	return []execContender{
		{"claimcheck-hook (exec → durable ack)", func() *exec.Cmd {
			c := exec.Command(filepath.Join(bin, "claimcheck-hook"))
			c.Env = hookEnv
			return c
		}},
		{"claimcheck-hook with credentials (authenticated, encrypted store)", func() *exec.Cmd {
			c := exec.Command(filepath.Join(bin, "claimcheck-hook"))
			c.Env = securedEnv
			return c
		}},
		{"claimcheck-hook-tls (the build with TLS, same run)", func() *exec.Cmd {
			c := exec.Command(filepath.Join(bin, "claimcheck-hook-tls"))
			c.Env = hookEnv
			return c
		}},
		{"python hook (JSONL + flush + fsync)", func() *exec.Cmd {
			c := exec.Command(py, pyScript)
			c.Env = pyEnv
			return c
		}},
		{"claimcheck-hook --version (start-up only)", func() *exec.Cmd {
			return exec.Command(filepath.Join(bin, "claimcheck-hook"), "--version")
		}},
		{goFloorName, func() *exec.Cmd { return exec.Command(floor) }},
		{"/bin/true (exec floor)", func() *exec.Cmd { return exec.Command("/bin/true") }},
	}, nil
}

// timeContenders runs each contender five times to warm the page cache,
// then runs times each, interleaved, and returns their wall times by
// contender.
func timeContenders(contenders []execContender, runs int) ([][]time.Duration, error) {
	samples := make([][]time.Duration, len(contenders))
	// Warm the page cache, then interleave the contenders so that noise hits
	// them alike.
	for i := range contenders {
		for range 5 {
			if _, err := timeRun(contenders[i].cmd()); err != nil {
				return nil, fmt.Errorf("%s: %w", contenders[i].name, err)
			}
		}
	}
	for range runs {
		for i := range contenders {
			d, err := timeRun(contenders[i].cmd())
			if err != nil {
				return nil, fmt.Errorf("%s: %w", contenders[i].name, err)
			}
			samples[i] = append(samples[i], d)
		}
	}
	return samples, nil
}

// checkDelivered checks that INTAKE holds the event of every run, warm-ups
// included: two contenders publish to js (claimcheck-hook and its TLS
// build), one to secured.
func checkDelivered(js, secured jetstream.JetStream, runs int) error {
	for _, j := range []jetstream.JetStream{js, secured} {
		st, _ := j.Stream(context.Background(), stream.Intake)
		info, _ := st.Info(context.Background())
		want := uint64(2 * (runs + 5))
		if j == secured {
			want /= 2
		}
		if info.State.Msgs < want {
			return fmt.Errorf("INTAKE holds %d events, want %d: the hook did not deliver", info.State.Msgs, want)
		}
	}
	return nil
}

// ackFloor times the durable acknowledgement alone, runs times: what no
// exec'd hook can beat.
func ackFloor(js jetstream.JetStream, runs int) ([]time.Duration, error) {
	// The durable acknowledgement alone: the same payload published on a
	// connection already open, as no exec'd hook can (it must connect too).
	acks := make([]time.Duration, 0, runs)
	for i := range runs {
		m := nats.NewMsg(subject.Intake(subject.OriginHook, "bench", "00893aaf-19fa-41d2-8238-13269b9b3ca0", "PostToolUse"))
		m.Header.Set(jetstream.MsgIDHeader, fmt.Sprintf("ack-floor-%d-%d", time.Now().UnixNano(), i))
		m.Data = []byte(hookPayload)
		start := time.Now()
		if _, err := js.PublishMsg(context.Background(), m); err != nil {
			return nil, fmt.Errorf("durable publish on an open connection: %w", err)
		}
		acks = append(acks, time.Since(start))
	}
	return acks, nil
}

// printHookTable prints the hook table: each contender's p50 and p99, the
// ratios between them, the durable ack alone and the floors, and the
// targets. samples are by contender, acks from ackFloor.
func printHookTable(o options, py string, contenders []execContender, samples [][]time.Duration, acks []time.Duration) {
	fmt.Printf("Hook latency (%d runs each, interleaved; python: %s)\n", o.hookRuns, py)
	fmt.Printf("  %-54s %9s %9s\n", "", "p50", "p99")
	for i, c := range contenders {
		p50, p99 := pct(samples[i], 50), pct(samples[i], 99)
		fmt.Printf("  %-54s %9s %9s\n", c.name, ms(p50), ms(p99))
	}
	h50, h99 := pct(samples[0], 50), pct(samples[0], 99)
	c50, c99 := pct(samples[1], 50), pct(samples[1], 99)
	p50, p99 := pct(samples[3], 50), pct(samples[3], 99)
	f50 := pct(samples[5], 50)
	t50, t99 := pct(samples[2], 50), pct(samples[2], 99)
	cr50, cr99 := pairedRatio(samples[1], samples[0], 50), pairedRatio(samples[1], samples[0], 99)
	fmt.Printf("  %-54s %8.2f× %8.2f×\n", "claimcheck-hook / claimcheck-hook-tls", float64(h50)/float64(t50), float64(h99)/float64(t99))
	fmt.Printf("  %-54s %8.2f× %8.2f×   (pair by pair: %.2f× %.2f×)\n", "with credentials / without", float64(c50)/float64(h50),
		float64(c99)/float64(h99), cr50, cr99)
	if o.baselineHook != "" {
		b := samples[len(samples)-1]
		fmt.Printf("  %-54s %8.2f× %8.2f×   (pair by pair: %.2f× %.2f×)\n", "with credentials / baseline",
			float64(c50)/float64(pct(b, 50)), float64(c99)/float64(pct(b, 99)),
			pairedRatio(samples[1], b, 50), pairedRatio(samples[1], b, 99))
	}
	fmt.Printf("  %-54s %8.1f× %8.1f×\n", "python / claimcheck-hook", float64(p50)/float64(h50), float64(p99)/float64(h99))
	a50, a99 := pct(acks, 50), pct(acks, 99)
	fmt.Printf("  %-54s %9s %9s\n", "durable publish → ack on an open connection (no exec)", ms(a50), ms(a99))
	fmt.Printf("  %-54s %9s\n", "Go start-up floor + that ack (no Go hook does less)", ms(f50+a50))
	fmt.Printf("  %-54s %8.1f×\n", "python / Go start-up floor", float64(p50)/float64(f50))
	fmt.Printf("  %-54s %8.1f×\n", "python / (floor + ack): the most any Go hook gets", float64(p50)/float64(f50+a50))
	fmt.Printf("  targets: hook p50 ≤ 3 ms (%s), ≥ 10× faster than python (%s), credentials within 10%% (p50 %s)\n",
		verdict(h50 <= 3*time.Millisecond), verdict(float64(p50)/float64(h50) >= 10), verdict(float64(c50)/float64(h50) <= 1.10))
}

// pairedRatio is the p-th percentile of a[i]/b[i]: runs i of the two
// contenders were taken one right after the other, so machine noise hits
// both alike.
func pairedRatio(a, b []time.Duration, p int) float64 {
	r := make([]float64, min(len(a), len(b)))
	for i := range r {
		r[i] = float64(a[i]) / float64(b[i])
	}
	slices.Sort(r)
	if len(r) == 0 {
		return 0
	}
	return r[min(len(r)-1, len(r)*p/100)]
}

// startLegacyJS is startLocalJS with INTAKE as claimcheck made it before
// subjects named their publisher (cc.intake.<chain>.<event>), for a hook of
// that time.
func startLegacyJS(ctx context.Context, dir string) (*localJS, error) {
	l, err := startLocalJS(ctx, dir)
	if err != nil {
		return nil, err
	}
	cfg := stream.IntakeConfig(stream.DefaultOptions())
	cfg.Subjects = []string{subject.IntakePrefix + ".*.*"}
	cfg.SubjectTransform = &jetstream.SubjectTransformConfig{Source: subject.IntakePrefix + ".*.*",
		Destination: fmt.Sprintf("%s.{{partition(%d,1)}}.{{wildcard(1)}}.{{wildcard(2)}}", subject.IntakePrefix,
			stream.DefaultOptions().Partitions)}
	if _, err := l.js.UpdateStream(ctx, cfg); err != nil {
		l.close()
		return nil, fmt.Errorf("legacy INTAKE: %w", err)
	}
	return l, nil
}

// startSecuredJS is startLocalJS as claimcheck up runs its server: NATS
// credentials required, the store encrypted; it returns a hook identity's
// credentials file for host "bench".
func startSecuredJS(ctx context.Context, dir string) (*localJS, string, error) {
	a, _, err := identity.Open(filepath.Join(dir, "auth"))
	if err != nil {
		return nil, "", err
	}
	auth, err := a.Server(filepath.Join(dir, "accounts"))
	if err != nil {
		return nil, "", err
	}
	srv, err := embedded.Start(ctx,
		embedded.Config{StoreDir: filepath.Join(dir, "nats"), Listen: "127.0.0.1:0", Auth: auth,
			EncryptionKey: "ccbench-store-key-0123456789abcdef"}, nil)
	if err != nil {
		return nil, "", err
	}
	admin, err := a.Issue(identity.Request{Role: identity.RoleAdmin})
	if err != nil {
		srv.Shutdown()
		return nil, "", err
	}
	nc, err := nats.Connect(srv.ClientURL(), admin.Option())
	if err != nil {
		srv.Shutdown()
		return nil, "", err
	}
	js, _ := jetstream.New(nc)
	l := &localJS{srv: srv, nc: nc, js: js}
	if err := stream.Ensure(ctx, js, stream.DefaultOptions()); err != nil {
		l.close()
		return nil, "", err
	}
	hook, err := a.Issue(identity.Request{Role: identity.RoleHook, Host: "bench"})
	if err == nil {
		err = identity.WriteCreds(filepath.Join(dir, "hook.creds"), hook)
	}
	if err != nil {
		l.close()
		return nil, "", err
	}
	return l, filepath.Join(dir, "hook.creds"), nil
}

func timeRun(c *exec.Cmd) (time.Duration, error) {
	c.Stdin = strings.NewReader(hookPayload)
	var errb bytes.Buffer
	c.Stdout, c.Stderr = io.Discard, &errb
	start := time.Now()
	err := c.Run()
	d := time.Since(start)
	if err != nil {
		return d, fmt.Errorf("%w: %s", err, errb.String())
	}
	return d, nil
}

// ---- ingest --------------------------------------------------------------

type scenario struct {
	name     string
	sessions int
	payloads func(n, sessions int) [][]byte // event i's payload, for session benchSession(i, sessions)
	r1Only   bool
	// withLog runs the ledger's Merkle tree log (the rotator's, package
	// transparency) beside ingest, as claimcheck up does.
	withLog bool
}

func ingestBench(o options, tmp string) error {
	scenarios := []scenario{
		{name: "busy sessions (200)", sessions: 200, payloads: fixedPayloads},
		{name: "many sessions (5000)", sessions: 5000, payloads: fixedPayloads},
		{name: "busy sessions (200), realistic outputs", sessions: 200, payloads: realisticPayloads, r1Only: true},
		{name: "busy sessions (200), Merkle tree log beside", sessions: 200, payloads: fixedPayloads, r1Only: true, withLog: true},
	}
	width := 0
	for _, sc := range scenarios {
		width = max(width, len(sc.name))
	}
	fmt.Printf("Ingest: drain a pre-filled INTAKE of %d events into the ledger (sync_interval always; payloads below)\n", o.events)
	fmt.Printf("  %-8s %-*s %12s %16s %8s\n", "cluster", width, "workload", "ingest ev/s", "raw publish ev/s", "ratio")
	clusters := []int{1}
	if !o.skipR3 {
		clusters = append(clusters, 3)
	}
	var mixes []string
	rates := map[string]float64{}
	for _, replicas := range clusters {
		servers, err := startCluster(filepath.Join(tmp, fmt.Sprintf("r%d", replicas)), replicas)
		if err != nil {
			return err
		}
		for _, sc := range scenarios {
			if sc.r1Only && replicas != 1 || !o.wantsWorkload(sc.name) {
				continue
			}
			payloads := sc.payloads(o.events, sc.sessions)
			profile := ""
			if o.drainProfiles != "" {
				profile = filepath.Join(o.drainProfiles,
					fmt.Sprintf("r%d-%s.prof", replicas, strings.Fields(sc.name)[0]+"-"+strings.Fields(sc.name)[1]))
				if strings.Contains(sc.name, "realistic") {
					profile = strings.TrimSuffix(profile, ".prof") + "-realistic.prof"
				}
			}
			raw, ing, err := ingestScenario(servers, replicas, sc, payloads, profile)
			if err != nil {
				shutdown(servers)
				return fmt.Errorf("cluster R%d, %s: %w", replicas, sc.name, err)
			}
			fmt.Printf("  %-8s %-*s %12.0f %16.0f %7.1f×\n", fmt.Sprintf("R%d", replicas), width, sc.name, ing, raw, ing/raw)
			if replicas == 1 {
				rates[sc.name] = ing
			}
			if replicas == 1 {
				m := mixOf(payloads)
				mixes = append(mixes, fmt.Sprintf("    %-*s mean %5.0f bytes, %3.0f%% over 1 KB, %3.0f%% with a generic-api-key keyword",
					width, sc.name, m.meanBytes, 100*m.large, 100*m.withKeyword))
			}
		}
		shutdown(servers)
	}
	if with, without := rates["busy sessions (200), Merkle tree log beside"], rates["busy sessions (200)"]; with > 0 && without > 0 {
		fmt.Printf("  with the Merkle tree log beside / without (R1, busy sessions): %.2f× (target ≥ 0.90×: %s)\n", with/without,
			verdict(with/without >= 0.9))
	}
	fmt.Println(
		"  raw publish = one event per JetStream message, asynchronous publishes, same server and payload, measured just before the drain.")
	fmt.Println(
		"  ingest packs each session's events of a batch into one ledger message, commits many sessions' messages in one atomic batch")
	fmt.Println("  (one fsync; ingest.atomic_batch) and removes consumed intake messages in bulk.")
	fmt.Println(
		"  payloads (every event checked chained as a valid event, no redaction; the raw publish sends the first of the same bytes):")
	for _, m := range mixes {
		fmt.Println(m)
	}
	fmt.Printf(
		"    fixed: the %d-byte hookPayload with the session's id; realistic outputs (seeded): 1 in 2 events a Bash output of 1–4 KB\n", len(hookPayload))
	fmt.Println(
		"    (go test -v, git log, grep -rn, curl -v), half of those mentioning a keyword in ordinary lines (`auth: ok`, `token refreshed`,")
	fmt.Println(
		"    `export API_URL=https://api.example.com`), no secrets; the rest the fixed payload. Keywords make scrub scan windows with generic-api-key.")
	fmt.Println("  target: ingest ≥ 20,000 ev/s sustained (see Targets in docs/performance.md for which workloads meet it)")
	return nil
}

func ingestScenario(servers []*embedded.Server, replicas int, sc scenario, payloads [][]byte, profile string) (rawRate,
	ingestRate float64, err error) {
	events := len(payloads)
	ctx := context.Background()
	nc, err := nats.Connect(servers[0].ClientURL())
	if err != nil {
		return 0, 0, err
	}
	defer nc.Close()
	js, _ := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(2000))
	opts := stream.DefaultOptions()
	opts.Replicas = replicas
	// Fresh streams per scenario.
	for _, n := range []string{stream.Intake, stream.Ledger, "RAW"} {
		_ = js.DeleteStream(ctx, n)
	}
	if err := stream.Ensure(ctx, js, opts); err != nil {
		return 0, 0, err
	}
	if _, err := js.CreateStream(ctx,
		jetstream.StreamConfig{Name: "RAW", Subjects: []string{"raw.>"}, Replicas: replicas, Storage: jetstream.FileStorage}); err != nil {
		return 0, 0, err
	}
	gen := id.NewGenerator(clock.Real{}, nil)
	src := envelope.Source{Host: "bench", AgentType: "claude-code", AgentID: "bench@host"}
	envs := make([][]byte, events)
	subjects := make([]string, events)
	ids := make([]string, events)
	for i := range events {
		sess := benchSession(i, sc.sessions)
		ids[i], _ = gen.New()
		envs[i], err = envelope.Event(ids[i], sess, "PostToolUse", uint64(i/sc.sessions+1), time.Now(), src, payloads[i])
		if err != nil {
			return 0, 0, err
		}
		subjects[i] = subject.Intake(subject.OriginHook, "bench", sess, "PostToolUse")
	}
	// Raw durable publish rate: the same bytes into a plain stream.
	rawN := min(events, 10000)
	start := time.Now()
	if err := publishAll(js, rawN, func(i int) *nats.Msg {
		m := nats.NewMsg(fmt.Sprintf("raw.%d", i%sc.sessions))
		m.Data = envs[i]
		return m
	}); err != nil {
		return 0, 0, err
	}
	rawRate = float64(rawN) / time.Since(start).Seconds()
	// Pre-fill INTAKE (not timed).
	if err := publishAll(js, events, func(i int) *nats.Msg {
		m := nats.NewMsg(subjects[i])
		m.Data = envs[i]
		m.Header.Set(jetstream.MsgIDHeader, ids[i])
		return m
	}); err != nil {
		return 0, 0, err
	}
	cfg := ingest.DefaultConfig()
	cfg.Streams = opts
	inc, err := nats.Connect(servers[0].ClientURL())
	if err != nil {
		return 0, 0, err
	}
	defer inc.Close()
	reg := prometheus.NewRegistry()
	svc, err := ingest.New(cfg, service.Settings{Conn: inc, Logger: slog.New(slog.DiscardHandler), Metrics: reg})
	if err != nil {
		return 0, 0, err
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	stopProfile := func() {}
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			cancel()
			return 0, 0, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			cancel()
			return 0, 0, err
		}
		stopProfile = func() { pprof.StopCPUProfile(); _ = f.Close() }
	}
	if sc.withLog {
		if err := startTreeLog(rctx, js); err != nil {
			cancel()
			return 0, 0, err
		}
	}
	start = time.Now()
	go func() { done <- svc.Run(rctx) }()
	err = waitChained(reg, events, done)
	stopProfile()
	if err != nil {
		cancel()
		return 0, 0, err
	}
	ingestRate = float64(events) / time.Since(start).Seconds()
	cancel()
	if err := <-done; err != nil {
		return 0, 0, err
	}
	// The figures hold only if every event was chained as a valid event
	// with nothing redacted: the payloads carry no secrets.
	records, redactions, err := ingestCounts(reg)
	if err != nil {
		return 0, 0, err
	}
	if records["event"] != float64(events) || redactions != 0 {
		return 0, 0, fmt.Errorf("ingest records by outcome %v and %.0f redactions, want %d events and none", records, redactions, events)
	}
	return rawRate, ingestRate, nil
}

// startTreeLog runs the ledger's Merkle tree log until ctx ends, with the
// rotator's defaults and a note key of its own.
func startTreeLog(ctx context.Context, js jetstream.JetStream) error {
	kv, err := transparency.OpenBucket(ctx, js)
	if err != nil {
		return err
	}
	origin, err := transparency.Origin(ctx, kv)
	if err != nil {
		return err
	}
	skey, _, err := note.GenerateKey(rand.Reader, origin)
	if err != nil {
		return err
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		return err
	}
	l := &transparency.Log{JS: js, KV: kv, Every: 1000, Interval: 10 * time.Second, Logger: slog.New(slog.DiscardHandler),
		Signers: func(context.Context, string) ([]note.Signer, error) { return []note.Signer{signer}, nil }}
	go func() { _ = l.Run(ctx) }()
	return nil
}

func publishAll(js jetstream.JetStream, n int, msg func(int) *nats.Msg) error {
	futs := make([]jetstream.PubAckFuture, 0, 1000)
	flush := func() error {
		for _, f := range futs {
			select {
			case <-f.Ok():
			case err := <-f.Err():
				return err
			}
		}
		futs = futs[:0]
		return nil
	}
	for i := range n {
		f, err := js.PublishMsgAsync(msg(i))
		if err != nil {
			return err
		}
		futs = append(futs, f)
		if len(futs) == cap(futs) {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// waitChained waits until ingest reports n events chained (its records
// counter, read from the registry it was given).
func waitChained(reg *prometheus.Registry, n int, done <-chan error) error {
	deadline := time.Now().Add(10 * time.Minute)
	for {
		select {
		case err := <-done:
			return fmt.Errorf("ingest stopped: %w", err)
		default:
		}
		records, _, err := ingestCounts(reg)
		if err != nil {
			return err
		}
		total := 0.0
		for _, v := range records {
			total += v
		}
		if total >= float64(n) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("ingest chained %.0f of %d events in 10 minutes", total, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ingestCounts reads ingest's records counter, by outcome, and its
// redactions counter from the registry it was given.
func ingestCounts(reg *prometheus.Registry) (records map[string]float64, redactions float64, err error) {
	mfs, err := reg.Gather()
	if err != nil {
		return nil, 0, err
	}
	records = map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			switch mf.GetName() {
			case "claimcheck_ingest_records_total":
				for _, l := range m.GetLabel() {
					if l.GetName() == "outcome" {
						records[l.GetValue()] += m.GetCounter().GetValue()
					}
				}
			case "claimcheck_ingest_redactions_total":
				redactions += m.GetCounter().GetValue()
			}
		}
	}
	return records, redactions, nil
}

func startCluster(dir string, n int) ([]*embedded.Server, error) {
	if n == 1 {
		s, err := embedded.Start(context.Background(), embedded.Config{StoreDir: filepath.Join(dir, "s0"), Listen: "127.0.0.1:0"}, nil)
		if err != nil {
			return nil, err
		}
		return []*embedded.Server{s}, nil
	}
	routes := make([]string, n)
	listens := make([]string, n)
	for i := range n {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		listens[i] = fmt.Sprintf("127.0.0.1:%d", port)
		routes[i] = "nats-route://" + listens[i]
	}
	servers := make([]*embedded.Server, n)
	errs := make(chan error, n)
	for i := range n {
		go func() {
			s, err := embedded.Start(context.Background(), embedded.Config{
				StoreDir: filepath.Join(dir, fmt.Sprintf("s%d", i)), Listen: "127.0.0.1:0", Name: fmt.Sprintf("bench-%d", i),
				Cluster: &embedded.ClusterConfig{Name: "bench", Listen: listens[i], Routes: routes}, ReadyTimeout: 2 * time.Minute,
			}, nil)
			servers[i] = s
			errs <- err
		}()
	}
	var first error
	for range n {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		shutdown(servers)
		return nil, first
	}
	return servers, nil
}

func shutdown(servers []*embedded.Server) {
	for _, s := range servers {
		if s != nil {
			s.Shutdown()
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ---- helpers --------------------------------------------------------------

func pct(d []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := (len(s)*p + 99) / 100
	if i > 0 {
		i--
	}
	return s[min(i, len(s)-1)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

func numCPU() int {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return 0
	}
	return strings.Count(string(b), "processor\t:")
}

// localJS is one embedded JetStream server (sync_interval always, a random
// loopback port) with a client and the streams ensured.
// localJS is a JetStream server on loopback and a client of it: in this
// process (srv) or in a child process (proc; see startProcJS).
type localJS struct {
	srv *embedded.Server
	nc  *nats.Conn
	js  jetstream.JetStream
	// a server in a child process
	proc      *exec.Cmd
	stdin     io.Closer // closing it stops the child
	clientURL string
}

func (l *localJS) url() string {
	if l.srv != nil {
		return l.srv.ClientURL()
	}
	return l.clientURL
}

func startLocalJS(ctx context.Context, storeDir string, jsOpts ...jetstream.JetStreamOpt) (*localJS, error) {
	srv, err := embedded.Start(ctx, embedded.Config{StoreDir: storeDir, Listen: "127.0.0.1:0"}, nil)
	if err != nil {
		return nil, err
	}
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		srv.Shutdown()
		return nil, err
	}
	js, _ := jetstream.New(nc, jsOpts...)
	if err := stream.Ensure(ctx, js, stream.DefaultOptions()); err != nil {
		nc.Close()
		srv.Shutdown()
		return nil, err
	}
	return &localJS{srv: srv, nc: nc, js: js}, nil
}

func (l *localJS) close() {
	l.nc.Close()
	if l.srv != nil {
		l.srv.Shutdown()
	}
	if l.proc != nil {
		_ = l.stdin.Close()
		done := make(chan struct{})
		go func() { _ = l.proc.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = l.proc.Process.Kill()
			<-done
		}
	}
}

// wantsWorkload reports whether -ingest-workloads selects the named workload.
func (o options) wantsWorkload(name string) bool {
	if o.ingestWorkloads == "" {
		return true
	}
	for w := range strings.SplitSeq(o.ingestWorkloads, ",") {
		if w = strings.TrimSpace(w); w != "" && strings.Contains(name, w) {
			return true
		}
	}
	return false
}

package main

// The scale section: verifier and gatekeeper processes (the built
// binaries) each in its own cgroup with a CPU quota, as pods with a CPU
// limit, at 1, 2 and 4 processes. The NATS server and ingest run in their
// own processes without a quota, the load generator (this process) too,
// so that what limits a row is the services' quota while the machine has
// CPU left; their CPU is printed beside each row to show whether it had.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/clock"
	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/stream"
)

// scaleProcs are the rows of both tables.
var scaleProcs = []int{1, 2, 4}

// scaleTargets are the targets by process count: the ratio to one
// process.
var scaleTargets = map[int]float64{2: 1.8, 4: 3.2}

// defaultScaleStore is /dev/shm when it is a tmpfs: with the NATS store in
// memory the durable commits (fsync before every acknowledgement, which the
// fleet section measures on the disk) stop being the one limit every
// process shares, and the processes' quotas are what the rows measure.
func defaultScaleStore() string {
	var st syscall.Statfs_t
	const tmpfsMagic = 0x01021994
	if err := syscall.Statfs("/dev/shm", &st); err == nil && st.Type == tmpfsMagic {
		return "/dev/shm"
	}
	return ""
}

func scaleBench(o options, tmp string) error {
	if o.scaleStore != "" {
		d, err := os.MkdirTemp(o.scaleStore, "ccbench-scale")
		if err != nil {
			return fmt.Errorf("-scale-store: %w", err)
		}
		defer func() { _ = os.RemoveAll(d) }()
		tmp = d
	}
	q, why := detectCPUQuotas(o.scaleCPU)
	fmt.Printf("Scale under CPU quotas: verifier and gatekeeper processes (bin/), each in its own cgroup at %.2f CPU\n", o.scaleCPU)
	if q == nil {
		fmt.Printf("  skipped: %s\n", why)
		return nil
	}
	defer func() {
		if err := q.removeAll(); err != nil {
			fmt.Fprintln(os.Stderr, "ccbench: scale:", err)
		}
	}()
	fmt.Printf("  quota: %s; NATS server, ingest and this load generator in their own processes without a quota\n", q)
	store := "on disk (" + tmp + "): the disk's fsync rate may be the limit every row shares"
	if o.scaleStore != "" {
		store = "in " + o.scaleStore + " (-scale-store): the disk's fsync rate is out of the picture (the fleet section measures it)"
	}
	fmt.Printf("  NATS store %s\n", store)
	if err := scaleVerifiers(o, tmp, q); err != nil {
		return fmt.Errorf("verifiers: %w", err)
	}
	if err := scaleGatekeepers(o, tmp, q); err != nil {
		return fmt.Errorf("gatekeepers: %w", err)
	}
	fmt.Println("  CPU columns are cores (CPU seconds per second) over the timed window: the services' sum (its limit: processes × quota),")
	fmt.Println(
		"  the share of their CFS periods that hit the quota, the NATS server, ingest and this process (load generator, verification).")
	return nil
}

// scaleRow is one row of a scale table.
type scaleRow struct {
	procs int
	rate  float64
	used  cpuSample
	wall  time.Duration
}

func (r scaleRow) cores(d time.Duration) float64 { return float64(d) / float64(r.wall) }

func printScaleHeader(what string) {
	fmt.Printf("    %-10s %12s %7s %15s %18s %10s %6s %7s %6s %8s\n", "processes", what, "vs 1", "target", "services CPU",
		"throttled", "NATS", "ingest", "bench", "busy")
}

// printScaleRow prints r against base (the 1-process row) and returns the
// target's verdict, if the row has a target.
func printScaleRow(r, base scaleRow, q *cpuQuotas, ingest, targets bool) string {
	ratio := r.rate / base.rate
	target, res := "", ""
	if t, ok := scaleTargets[r.procs]; ok && targets {
		res = fmt.Sprintf("%d: %.2f× (%s)", r.procs, ratio, strings.TrimSuffix(strings.ToUpper(verdict(ratio >= t)), " MET"))
		target = fmt.Sprintf("≥ %.1f× %s", t, map[bool]string{true: "PASS", false: "MISS"}[ratio >= t])
	}
	throttled := "-"
	if p := r.used.throttled.periods; p > 0 {
		throttled = fmt.Sprintf("%.0f%%", 100*float64(r.used.throttled.throttled)/float64(p))
	}
	ing := "-"
	if ingest {
		ing = fmt.Sprintf("%.2f", r.cores(r.used.ingest))
	}
	fmt.Printf("    %-10d %12.0f %6.2f× %15s %9.2f of %4.2f %10s %6.2f %7s %6.2f %5.2f/%d\n", r.procs, r.rate, ratio, target,
		r.cores(r.used.services), float64(r.procs)*q.cpus, throttled, r.cores(r.used.server), ing, r.cores(r.used.bench),
		r.cores(r.used.all()), numCPU())
	return res
}

// scaleVerifiers prints the verifier table: pre-queued test_pass claims,
// one per session, at 1, 2 and 4 verifier processes.
func scaleVerifiers(o options, tmp string, q *cpuQuotas) error {
	claims, reps := 6000, 3
	if o.quick {
		claims, reps = 3000, 1
	}
	fmt.Printf("  verifiers: %d test_pass claims, one per session, queued once every verifier is ready; "+
		"attestations/s over the middle 80%%\n"+
		"  of them (the first and last 10%% are the fleet starting and the last pulls draining); the median of %d runs per row, interleaved\n",
		claims, reps)
	fmt.Println("  (ingest is not running: the benchmark chains the sessions and claims as ingest would, before the timed window)")
	runs := map[int][]scaleRow{}
	for rep := range reps {
		for _, procs := range scaleProcs {
			m := fleetMode{sessions: claims, quotas: q}
			r, err := fleetRun(o, filepath.Join(tmp, fmt.Sprintf("scale-verifier-%d-%d", procs, rep)), procs, claims, m)
			if err != nil {
				return fmt.Errorf("%d verifiers: %w", procs, err)
			}
			runs[procs] = append(runs[procs], scaleRow{procs: procs, rate: r.rate, used: r.used, wall: r.wall})
		}
	}
	printScaleHeader("attest./s")
	var base scaleRow
	var res []string
	for _, procs := range scaleProcs {
		rs := runs[procs]
		slices.SortFunc(rs, func(a, b scaleRow) int { return cmp.Compare(a.rate, b.rate) })
		row := rs[len(rs)/2]
		if procs == 1 {
			base = row
		}
		if v := printScaleRow(row, base, q, false, true); v != "" {
			res = append(res, v)
		}
	}
	fmt.Printf("    targets (issue #16): %s\n", strings.Join(res, ", "))
	return nil
}

// scaleGatekeepers prints the gatekeeper table: gate requests (the gate
// section's mix over its sessions) from a closed loop with a fixed number
// in flight, at 1, 2 and 4 gatekeeper processes.
func scaleGatekeepers(o options, tmp string, q *cpuQuotas) error {
	window := 6 * time.Second
	if o.quick {
		window = 3 * time.Second
	}
	fmt.Printf("  gatekeepers: the gate mix over %d chained sessions, %d requests in flight (closed loop), for %s after a warm-up;\n",
		gateSessions, o.scaleInFlight, window)
	fmt.Println("  ingest (running, no quota) chains every decision the gatekeepers record; 1 reply in 10 verified as the hook would")
	printScaleHeader("requests/s")
	var base scaleRow
	for _, procs := range scaleProcs {
		row, err := gateScaleRun(o, filepath.Join(tmp, fmt.Sprintf("scale-gate-%d", procs)), procs, q, window)
		if err != nil {
			return fmt.Errorf("%d gatekeepers: %w", procs, err)
		}
		if procs == 1 {
			base = row
		}
		printScaleRow(row, base, q, true, false)
	}
	// Every gatekeeper replays the whole ledger, so each one also applies
	// every decision the others record: their work does not split.
	fmt.Println("    (the targets are the verifiers'; every gatekeeper follows the whole ledger, its peers' decisions too)")
	return nil
}

// gateScaleRun runs one row of the gatekeeper table: a NATS server and
// ingest in their own processes, the gate sessions chained, procs
// gatekeepers under quota, a warm-up and a timed window.
func gateScaleRun(o options, dir string, procs int, q *cpuQuotas, window time.Duration) (scaleRow, error) {
	ctx := context.Background()
	l, err := startProcJS(ctx, filepath.Join(dir, "nats"), jetstream.WithPublishAsyncMaxPending(2000))
	if err != nil {
		return scaleRow{}, err
	}
	defer l.close()
	ge := &gateEnv{url: l.url(), nc: l.nc, js: l.js, opts: stream.DefaultOptions(), gen: id.NewGenerator(clock.Real{}, nil)}
	defer func() { _ = ge.close() }()
	keyDir, err := ge.ensureKeys(ctx, dir)
	if err != nil {
		return scaleRow{}, err
	}
	if _, err := ge.fillSessions(); err != nil {
		return scaleRow{}, err
	}
	ing, ingDone, err := startIngestProcess(o.bin, l.url())
	if err != nil {
		return scaleRow{}, err
	}
	defer ing.stop()
	ingestCPU := func() time.Duration { return procCPU(ing.cmds[0].Process.Pid) }
	if _, err := ge.waitChained(ingDone, ingestCPU); err != nil {
		return scaleRow{}, err
	}
	fl, err := startServices(filepath.Join(o.bin, "gatekeeper"), l.url(), procs, q, func(i int) []string {
		return []string{"CLAIMCHECK_GATEKEEPER_KEY_DIR=" + keyDir, fmt.Sprintf("CLAIMCHECK_GATEKEEPER_ID=bench-%d", i)}
	})
	defer fl.stop()
	if err != nil {
		return scaleRow{}, err
	}
	if err := fl.ready(2 * time.Minute); err != nil {
		return scaleRow{}, err
	}
	cpu := func() cpuSample {
		s := fl.cpu(l)()
		s.ingest = ingestCPU()
		return s
	}
	ld, err := ge.newGateLoad(o.scaleInFlight)
	if err != nil {
		return scaleRow{}, err
	}
	if _, err := ld.run(min(window, 2*time.Second)); err != nil { // warm-up
		return scaleRow{}, fmt.Errorf("warm-up: %w", err)
	}
	from := cpu()
	n, err := ld.run(window)
	if err != nil {
		return scaleRow{}, err
	}
	used := cpu().sub(from)
	wall := used.at.Sub(from.at)
	// Every decision recorded must be chained: ingest kept up, or catches up now.
	if _, err := ge.waitChained(ingDone, ingestCPU); err != nil {
		return scaleRow{}, err
	}
	return scaleRow{procs: procs, rate: float64(n) / wall.Seconds(), used: used, wall: wall}, nil
}

// startIngestProcess starts the built ingest (no quota) on the server at
// url; the channel receives its exit.
func startIngestProcess(bin, url string) (*fleet, chan error, error) {
	fl, err := startServices(filepath.Join(bin, "ingest"), url, 1, nil, func(int) []string { return nil })
	if err != nil {
		fl.stop()
		return nil, nil, err
	}
	if err := fl.ready(time.Minute); err != nil {
		fl.stop()
		return nil, nil, err
	}
	done := make(chan error, 1)
	go func() {
		<-fl.exited[0]
		done <- errors.New("ingest exited")
	}()
	return fl, done, nil
}

// gateLoad is a closed loop of gate requests: inFlight workers, each
// sending the next request as soon as the previous one is answered.
type gateLoad struct {
	ge       *gateEnv
	inFlight int
	batch    atomic.Int64 // the next batch of requests (its salt for mix)
}

func (ge *gateEnv) newGateLoad(inFlight int) (*gateLoad, error) {
	if inFlight < 1 {
		return nil, fmt.Errorf("-scale-in-flight %d: must be positive", inFlight)
	}
	return &gateLoad{ge: ge, inFlight: inFlight}, nil
}

// run sends requests for d and returns how many were answered in that
// time. Every request must get a reply; every tenth is verified.
func (ld *gateLoad) run(d time.Duration) (int, error) {
	end := time.Now().Add(d)
	var answered atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, ld.inFlight)
	for w := range ld.inFlight {
		wg.Go(func() {
			for time.Now().Before(end) {
				for i, r := range ld.ge.mix(gateChunk, int(ld.batch.Add(1))) {
					m, err := ld.ge.nc.Request(r.subj, r.data, 30*time.Second)
					if err != nil {
						errs[w] = err
						return
					}
					if i%10 == 0 {
						if _, err := ld.ge.check(r, m.Data, time.Now()); err != nil {
							errs[w] = err
							return
						}
					}
					if time.Now().After(end) {
						return
					}
					answered.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return int(answered.Load()), errors.Join(errs...)
}

package main

// The verifier benchmarks.
//
//   - signing: CPU cost of one attestation in this process, single
//     goroutine: claimcheck's sign (in-toto statement → RFC 8785 → DSSE
//     envelope signed through sigstore) and verify, beside a raw sigstore
//     SignMessage over a payload of the same size; then the verifier's
//     whole CPU per attestation without ledger I/O (judging the claim,
//     statement, signature), from services/verifier's
//     BenchmarkAttestationCPU run with go test. No ledger I/O.
//   - fleet: attestations/s of 1, 2 and 3 verifier processes (the built
//     binary) draining pre-queued claims, each decided from the ledger,
//     recorded in it, signed and stored in ATTEST. Measured between the
//     first and the last attestation's server timestamps, so process start
//     is not counted.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/claimcheck/claimcheck/pkg/attest"
	"github.com/claimcheck/claimcheck/pkg/clock"
	"github.com/claimcheck/claimcheck/pkg/contract"
	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/keyring/keyringtest"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/payload"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"

	"github.com/go-json-experiment/json"
)

// ---- signing -------------------------------------------------------------

func signingBench(o options, tmp string) error {
	n := 4000
	if o.quick {
		n = 1000
	}
	ctx := context.Background()
	fmt.Printf("Attestation signing, CPU only (%d operations each, one goroutine = one core)\n", n)
	fmt.Printf("  %-60s %10s %14s %8s\n", "", "µs/op", "per core/s", "vs raw")
	fmt.Println("  (\"vs raw\" compares with the raw sigstore operation of the same algorithm measured just before)")
	for _, alg := range []string{keyring.ECDSA, keyring.Ed25519} {
		k, err := keyringtest.Make(filepath.Join(tmp, "sign-"+alg), alg, time.Now())
		if err != nil {
			return err
		}
		signer, set, raw := k.Signer, k.Set, k.Raw
		st := benchStatement()
		payload, err := attest.Encode(st)
		if err != nil {
			return err
		}
		rawSign := timeOps(n, func() error {
			_, err := raw.SignMessage(bytes.NewReader(payload))
			return err
		})
		rawSig, err := raw.SignMessage(bytes.NewReader(payload))
		if err != nil {
			return err
		}
		rawV, ok := raw.(signature.Verifier)
		if !ok {
			return fmt.Errorf("%T cannot verify", raw)
		}
		rawVerify := timeOps(n, func() error {
			return rawV.VerifySignature(bytes.NewReader(rawSig), bytes.NewReader(payload))
		})
		var env []byte
		sign := timeOps(n, func() error {
			var err error
			env, _, err = attest.Sign(ctx, signer, st)
			return err
		})
		at, _ := time.Parse(time.RFC3339Nano, st.Predicate.SignedAt)
		verify := timeOps(n, func() error {
			_, err := attest.Verify(set, env, at)
			return err
		})
		if rawSign.err != nil || rawVerify.err != nil || sign.err != nil || verify.err != nil {
			return errors.Join(rawSign.err, rawVerify.err, sign.err, verify.err)
		}
		row := func(name string, d, base time.Duration) {
			fmt.Printf("  %-60s %10.1f %14.0f %7.2f×\n", name, us(d), 1/d.Seconds(), float64(d)/float64(base))
		}
		row(alg+": raw sigstore SignMessage ("+fmt.Sprint(len(payload))+" B)", rawSign.per, rawSign.per)
		row(alg+": attestation sign (JCS + DSSE + sigstore)", sign.per, rawSign.per)
		row(alg+": raw sigstore VerifySignature", rawVerify.per, rawVerify.per)
		row(alg+": attestation verify (pinned type, window)", verify.per, rawVerify.per)
		row(alg+": raw sign + verify", rawSign.per+rawVerify.per, rawSign.per+rawVerify.per)
		row(alg+": attestation sign + verify", sign.per+verify.per, rawSign.per+rawVerify.per)
		if alg != keyring.ECDSA {
			continue
		}
		vb, err := verifierCPU(n)
		if err != nil {
			return fmt.Errorf("verifier CPU per attestation: %w", err)
		}
		fmt.Println(
			"  ecdsa-p256-sha256, the verifier's CPU per attestation without ledger I/O (services/verifier BenchmarkAttestationCPU, run by go test")
		fmt.Println(
			"  now; \"vs raw\": its own raw sigstore sign or verify): a test_pass claim on a 15-entry session (prompt, reads, edits, a failed")
		fmt.Println("  and a passing go test run)")
		row("judge the claim (the cited run new to the view)", vb["decide"], vb["raw-sigstore-sign"])
		row("judge the claim (every entry already in the view)", vb["decide-cached"], vb["raw-sigstore-sign"])
		row("judge + statement + sign: one attestation", vb["decide+sign"], vb["raw-sigstore-sign"])
		row("verify it (the gatekeeper's part)", vb["verify"], vb["raw-sigstore-verify"])
		row("judge + sign + verify", vb["decide+sign"]+vb["verify"], vb["raw-sigstore-sign"]+vb["raw-sigstore-verify"])
		per := vb["decide+sign"]
		fmt.Printf(
			"  target: ≥ 10,000 ECDSA attestations/s per core excluding ledger I/O: %s (%.0f/s judged and signed; signing alone %.0f/s);\n",
			verdict(1/per.Seconds() >= 10000), 1/per.Seconds(), 1/sign.per.Seconds())
		fmt.Printf(
			"    a core that also verified each one (the verifier does not) would make %.0f/s (raw sigstore sign + verify alone: %.0f/s)\n",
			1/(per+vb["verify"]).Seconds(), 1/(vb["raw-sigstore-sign"]+vb["raw-sigstore-verify"]).Seconds())
	}
	return nil
}

// verifierCPU runs services/verifier's BenchmarkAttestationCPU (n
// iterations of each part) and returns each part's time per operation.
func verifierCPU(n int) (map[string]time.Duration, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	c := exec.Command("go", "test", "-run", "^$", "-bench", "^BenchmarkAttestationCPU$", "-benchtime",
		fmt.Sprintf("%dx", n), "./internal/validate/")
	c.Dir = filepath.Join(root, "services", "verifier")
	out, err := c.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, out)
	}
	res := map[string]time.Duration{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		name, ok := strings.CutPrefix(first(f), "BenchmarkAttestationCPU/")
		if !ok || len(f) < 4 || f[3] != "ns/op" {
			continue
		}
		ns, err := strconv.ParseFloat(f[2], 64)
		if err != nil {
			return nil, fmt.Errorf("benchmark line %q: %w", line, err)
		}
		name = name[:strings.LastIndexByte(name, '-')] // the GOMAXPROCS suffix
		res[name] = time.Duration(ns)
	}
	for _, k := range []string{"raw-sigstore-sign", "decide", "decide-cached", "decide+sign", "verify", "raw-sigstore-verify"} {
		if res[k] == 0 {
			return nil, fmt.Errorf("no %s result in:\n%s", k, out)
		}
	}
	return res, nil
}

func first(f []string) string {
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// repoRoot is the directory holding go.work, from the working directory up.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.work above the working directory: run ccbench inside the repository (make bench)")
		}
		dir = parent
	}
}

type opTime struct {
	per time.Duration
	err error
}

// timeOps runs f n times after a short warm-up and returns the mean.
func timeOps(n int, f func() error) opTime {
	for range min(n/10, 100) {
		if err := f(); err != nil {
			return opTime{err: err}
		}
	}
	start := time.Now()
	for range n {
		if err := f(); err != nil {
			return opTime{err: err}
		}
	}
	return opTime{per: time.Since(start) / time.Duration(n)}
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }

// benchStatement is a statement of realistic size: a test_pass verdict
// with its contract and one matched entry.
func benchStatement() schemas.Statement {
	h := "sha256:" + strings.Repeat("ab", 32)
	reqID := "01JDB3H5KX0000000000000001"
	attID, _ := attest.ID(reqID)
	v := schemas.Verdict{
		V: 1, RequestID: reqID, SessionID: "00893aaf-19fa-41d2-8238-13269b9b3ca0", Claim: "done", Validator: "test_pass",
		Args: []byte(`{"command_substring":"go test ./...","min_runs":1}`), Verdict: schemas.Pass, Reasons: []string{},
		Matched:  []schemas.Position{{N: 41, Hash: h, EventID: "01JDB3H5KX0000000000000041"}},
		Range:    schemas.Range{From: 1, To: 57, HeadHash: h},
		Contract: &schemas.Position{N: 2, Hash: h, EventID: "01JDB3H5KX0000000000000002"},
		Policy:   schemas.PolicyRef{Version: "2026-11-22.1", Digest: h}, Verifier: "bench-1", AttestationID: attID,
	}
	return attest.Statement(v, &schemas.Position{N: 59, Hash: h, EventID: "01JDB3H5KX0000000000000059"}, time.Now())
}

// ---- fleet ---------------------------------------------------------------

// fleetWorkers is verifier.workers in the fleet runs (the default).
const fleetWorkers = 128

// fleetMode is one fleet table: how claims arrive and what each verifier
// process may use.
type fleetMode struct {
	title    string
	sessions int  // claims spread over this many sessions
	oneByOne bool // each session's claims made one at a time
	oneCPU   bool // GOMAXPROCS=1 in every verifier process
	// quotas, when set, puts each verifier process in its own cgroup with
	// a CPU quota, runs the NATS server in its own process and queues the
	// claims once every verifier is ready (the scale section).
	quotas *cpuQuotas
}

func fleetBench(o options, tmp string) error {
	claims := 3000
	if o.quick {
		claims = 900
	}
	modes := []fleetMode{
		{title: fmt.Sprintf("%d claims pre-queued over %d sessions (10 per session: verifiers contend for session heads)", claims,
			claims/10), sessions: claims / 10},
		{title: fmt.Sprintf(
			"%d claims pre-queued, one per session, each verifier process on one CPU (GOMAXPROCS=1, as a fleet of 1-CPU pods)", claims), sessions: claims, oneCPU: true},
		{title: fmt.Sprintf(
			"claims arriving one at a time per session, as an agent makes them (%d sessions at once; each claim chained, queued, answered, then the next)", claims/10), sessions: claims / 10, oneByOne: true},
	}
	fmt.Println(
		"Verifier fleet: test_pass claims, each decided from the ledger, its verdict chained (sync_interval always), signed (ECDSA) and stored in ATTEST")
	var ratios []string
	for _, m := range modes {
		fmt.Printf("  %s\n", m.title)
		fmt.Printf("  %-20s %15s %8s %26s %22s %18s %11s\n", "verifier processes", "attestations/s", "vs 1", "verifier CPU/attestation",
			"server CPU/attestation", "CAS retries/att.", "CPUs busy")
		var base, busy1 float64
		for _, procs := range []int{1, 2, 3} {
			r, err := fleetRun(o,
				filepath.Join(tmp, fmt.Sprintf("fleet-%d-%d-%v-%v", procs, m.sessions, m.oneByOne, m.oneCPU)), procs, claims, m)
			if err != nil {
				return fmt.Errorf("%d verifiers: %w", procs, err)
			}
			rate := r.rate
			if procs == 1 {
				base, busy1 = rate, r.busy
			}
			fmt.Printf("  %-20d %15.0f %7.2f× %23.0f µs %19.0f µs %18s %7.2f of %d\n", procs, rate, rate/base, us(r.verifier),
				us(r.server), fmtRetries(r.conflicts), r.busy, numCPU())
			if procs == 2 && !m.oneByOne {
				ratios = append(ratios, fmt.Sprintf("%s %.2f×", verdict(rate/base >= 1.7), rate/base))
			}
		}
		fmt.Printf("  one process kept %.2f of %d CPUs busy: "+
			"more processes can add at most %.2f× unless each attestation costs less CPU\n",
			busy1, numCPU(), float64(numCPU())/busy1)
	}
	fmt.Printf("  each process runs %d workers whose verdicts and attestations are committed together (atomic batches of at least %d);\n",
		fleetWorkers, stream.MinAtomicBatch)
	fmt.Printf("  the NATS server (in this benchmark's process), the verifiers and the benchmark share %d CPUs:\n", numCPU())
	fmt.Println("  when verifier + server CPU per attestation × rate ≈ the CPU count, more processes cannot help on this machine.")
	fmt.Println(
		"  verifier CPU includes process start-up; server CPU includes the benchmark's polling (and, one at a time, its chaining of the claims).")
	fmt.Println(
		"  CPUs busy: CPU time of all processes (verifiers, server, benchmark) from the first attestation to the last, over that wall time.")
	fmt.Printf("  target: ≥ 1.7× from 1 to 2 processes: %s (pre-queued, 10 per session / one per session on one CPU each)\n",
		strings.Join(ratios, " / "))
	return nil
}

func fleetRun(o options, dir string, procs, claims int, m fleetMode) (fleetResult, error) {
	ctx := context.Background()
	start := startLocalJS
	if m.quotas != nil {
		start = startProcJS // the server's CPU apart from the benchmark's
	}
	l, err := start(ctx, filepath.Join(dir, "nats"), jetstream.WithPublishAsyncMaxPending(2000))
	if err != nil {
		return fleetResult{}, err
	}
	defer l.close()
	js := l.js
	reg, err := keyring.OpenRegistry(ctx, js)
	if err != nil {
		return fleetResult{}, err
	}
	keyDir := filepath.Join(dir, "keys")
	if _, _, err := keyring.EnsureFirst(ctx, reg, keyring.Dir{Path: keyDir}, keyring.ECDSA, time.Now()); err != nil {
		return fleetResult{}, err
	}
	// With quotas, the claims are queued once every verifier is ready, so
	// that the slowest start-up does not count as scaling.
	drive, err := queueClaims(ctx, l.nc, js, claimLoad{claims: claims, sessions: m.sessions, oneByOne: m.oneByOne,
		deferQueue: m.quotas != nil})
	if err != nil {
		return fleetResult{}, err
	}
	selfStart := procCPU(os.Getpid())
	fl, err := startFleet(o, l.url(), keyDir, procs, m)
	defer fl.stop()
	if err != nil {
		return fleetResult{}, err
	}
	if m.quotas != nil {
		if err := fl.ready(time.Minute); err != nil {
			return fleetResult{}, err
		}
		selfStart = procCPU(os.Getpid())
	}
	driven := make(chan error, 1)
	go func() { driven <- drive() }()
	// Under quotas (the scale rows) the rate is the steady state's: each
	// verifier holds up to 2×workers claims it has pulled, so a finite
	// queue ends with one process still working through its last pull
	// while the others are idle, a tail that says nothing about scaling.
	steady := m.quotas != nil
	r, err := waitAttestations(ctx, js, claims, driven, fl.cpu(l), steady)
	if err != nil {

		return fleetResult{}, err
	}
	r.verifier = fl.cpu(l)().services / time.Duration(claims)
	r.server = (procCPU(os.Getpid()) - selfStart) / time.Duration(claims)
	var conflicts float64
	for _, u := range fl.metrics {
		v, err := scrapeCounter(u, "claimcheck_verifier_append_conflicts_total")
		if err != nil {
			return fleetResult{}, err
		}
		conflicts += v // NaN (not reported) stays NaN
	}
	r.conflicts = conflicts / float64(claims)
	return r, nil
}

// fleet is the service processes of one run: verifiers or gatekeepers.
type fleet struct {
	cmds    []*exec.Cmd
	groups  []string // their cgroups (with quotas)
	metrics []string // their /metrics URLs
	exited  []chan struct{}
	quotas  *cpuQuotas
	wg      sync.WaitGroup
}

// startFleet starts procs verifier processes on the server at url, each in
// its own cgroup when m has quotas.
func startFleet(o options, url, keyDir string, procs int, m fleetMode) (*fleet, error) {
	env := []string{"CLAIMCHECK_VERIFIER_KEY_DIR=" + keyDir, fmt.Sprintf("CLAIMCHECK_VERIFIER_WORKERS=%d", fleetWorkers)}
	if m.oneCPU {
		env = append(env, "GOMAXPROCS=1")
	}
	return startServices(filepath.Join(o.bin, "verifier"), url, procs, m.quotas, func(i int) []string {
		return append(slices.Clip(env), fmt.Sprintf("CLAIMCHECK_VERIFIER_ID=bench-%d", i))
	})
}

// startServices starts procs processes of the service binary bin on the
// server at url, with the environment env(i) beside this process's, each
// in its own cgroup when quotas is set. The fleet is stopped (stop) even
// on error.
func startServices(bin, url string, procs int, quotas *cpuQuotas, env func(i int) []string) (*fleet, error) {
	fl := &fleet{quotas: quotas}
	for i := range procs {
		port, err := freePort()
		if err != nil {
			return fl, err
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		fl.metrics = append(fl.metrics, "http://"+addr+"/metrics")
		args := []string{"--nats-url", url, "--http-listen", addr, "--log-level", "warn"}
		cmd := exec.Command(bin, args...)
		cmd.Env = os.Environ()
		if quotas != nil {
			dir, err := quotas.group(fmt.Sprintf("%s-%d", filepath.Base(bin), i))
			if err != nil {
				return fl, err
			}
			fl.groups = append(fl.groups, dir)
			cmd = quotas.command(dir, bin, args...)
		}
		cmd.Env = append(cmd.Env, env(i)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			return fl, err
		}
		fl.cmds = append(fl.cmds, cmd)
		exited := make(chan struct{})
		fl.exited = append(fl.exited, exited)
		fl.wg.Go(func() {
			defer close(exited)
			if err := cmd.Wait(); err != nil && stderr.Len() > 0 {
				fmt.Fprintf(os.Stderr, "%s %d: %v\n%s", filepath.Base(bin), i, err, stderr.String())
			}
		})
	}
	return fl, nil
}

// ready waits until every process answers /readyz.
func (fl *fleet) ready(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for _, u := range fl.metrics {
		u = strings.TrimSuffix(u, "/metrics") + "/readyz"
		for {
			resp, err := http.Get(u) //nolint:gosec,noctx // the benchmark's own child process on loopback
			if err == nil {
				_ = resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s not ready after %s", u, timeout)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return nil
}

// stop kills the processes, waits for them and removes their cgroups.
func (fl *fleet) stop() {
	for _, c := range fl.cmds {
		_ = c.Process.Kill()
	}
	fl.wg.Wait()
	if fl.quotas != nil {
		if err := fl.quotas.removeAll(); err != nil {
			fmt.Fprintln(os.Stderr, "ccbench:", err)
		}
	}
}

// cpuSample is the CPU time used so far by the processes of a run.
type cpuSample struct {
	at        time.Time
	services  time.Duration // the fleet
	server    time.Duration // the NATS server when in its own process, else 0
	bench     time.Duration // this process (with the NATS server when in-process)
	ingest    time.Duration // an ingest process, if any
	throttled throttling    // the fleet's cgroups, summed
}

func (s cpuSample) sub(t cpuSample) cpuSample {
	return cpuSample{at: s.at, services: s.services - t.services, server: s.server - t.server, bench: s.bench - t.bench,
		ingest: s.ingest - t.ingest, throttled: s.throttled.sub(t.throttled)}
}

// all is the CPU time of every process.
func (s cpuSample) all() time.Duration { return s.services + s.server + s.bench + s.ingest }

// cpu returns a function sampling the CPU of the fleet, the server of l
// and this process.
func (fl *fleet) cpu(l *localJS) func() cpuSample {
	return func() cpuSample {
		s := cpuSample{at: time.Now(), bench: procCPU(os.Getpid())}
		if l.proc != nil {
			s.server = procCPU(l.proc.Process.Pid)
		}
		for _, c := range fl.cmds {
			s.services += procCPU(c.Process.Pid)
		}
		for _, g := range fl.groups {
			t := fl.quotas.stat(g)
			s.throttled.periods += t.periods
			s.throttled.throttled += t.throttled
		}
		return s
	}
}

// waitAttestations polls ATTEST until it holds claims attestations (ten
// minutes at most; an error of driven ends it) and returns the rate from
// the first to the last, and the CPU used over that time.
func waitAttestations(ctx context.Context, js jetstream.JetStream, claims int, driven <-chan error, cpu func() cpuSample, steady bool) (
	fleetResult, error) {
	att, err := js.Stream(ctx, stream.Attest)
	if err != nil {
		return fleetResult{}, err
	}
	deadline := time.Now().Add(10 * time.Minute)
	var from cpuSample
	for {
		select {
		case err := <-driven:
			if err != nil {
				return fleetResult{}, err
			}
		default:
		}
		info, err := att.Info(ctx)
		if err != nil {
			return fleetResult{}, err
		}
		// CPU of every process from the first attestation on: how busy the
		// machine is while it works.
		if from.at.IsZero() && info.State.Msgs > 0 {
			from = cpu()
		}
		if int(info.State.Msgs) >= claims {
			used := cpu().sub(from)
			lo, hi := info.State.FirstSeq, info.State.LastSeq
			if steady { // the middle 80% of the attestations
				n := hi - lo
				lo, hi = lo+n/10, hi-n/10
			}
			first, err := att.GetMsg(ctx, lo)
			if err != nil {
				return fleetResult{}, err
			}
			last, err := att.GetMsg(ctx, hi)
			if err != nil {
				return fleetResult{}, err
			}
			return fleetResult{
				rate: float64(hi-lo) / last.Time.Sub(first.Time).Seconds(),
				busy: float64(used.all()) / float64(used.at.Sub(from.at)),
				used: used,
				wall: used.at.Sub(from.at),
			}, nil
		}
		if time.Now().After(deadline) {
			return fleetResult{}, fmt.Errorf("%d of %d attestations in 10 minutes", info.State.Msgs, claims)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// queueClaims writes sessions (prompt, contract, a passing go test run)
// and then claims into the ledger as ingest would, and queues them on
// CLAIMS. Pre-queued, it does all of it before returning (drive does
// nothing); one by one, it writes the sessions, and drive then makes each
// session's claims in turn, waiting for each answer before the next.
func queueClaims(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, load claimLoad) (drive func() error, err error) {
	claims, sessions, oneByOne := load.claims, load.sessions, load.oneByOne
	app := ledger.NewAppender(js, ledger.AppenderConfig{})
	gen := id.NewGenerator(clock.Real{}, nil)
	now := time.Now().UTC().Format(time.RFC3339Nano)
	entry := func(session, kind, hookEvent, tool, payload string) *schemas.Entry {
		eid, _ := gen.New()
		e := &schemas.Entry{V: 1, Kind: kind, Chain: session, SessionID: session, EventID: eid, HookEvent: hookEvent, ToolName: tool,
			IngestedAt: now, Bundle: "ccbench"}
		if payload != "" {
			e.Payload = &payload
		}
		return e
	}
	const prompt = "Fix the flaky store tests and run `go test ./...` until they pass"
	none := func() error { return nil }
	perSession := make([][]*schemas.Entry, sessions)
	for s := range sessions {
		name := fmt.Sprintf("bench-%04d", s)
		p := entry(name, schemas.EntryEvent, "UserPromptSubmit", "", fmt.Sprintf(
			`{"session_id":%q,"hook_event_name":"UserPromptSubmit","prompt":%q}`, name, prompt))
		c, ok := contract.Derive(contract.Prompt{SessionID: name, EventID: p.EventID, Text: prompt})
		if !ok {
			return nil, errors.New("bench prompt is not actionable")
		}
		ce := entry(name, schemas.EntryContract, "UserPromptSubmit", "", "")
		ce.Contract = &c
		// The run as the agent's tool loop records it: a PreToolUse and its
		// result, paired by tool_use_id and the same input (as ingest
		// records them; the verifier trusts no result without its call).
		useID := fmt.Sprintf("toolu_bench_%04d", s)
		pre := entry(name, schemas.EntryEvent, "PreToolUse", "Bash", fmt.Sprintf(
			`{"session_id":%q,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"go test ./..."},"tool_use_id":%q}`,
			name, useID))
		run := entry(name, schemas.EntryEvent, "PostToolUse", "Bash", fmt.Sprintf(
			`{"session_id":%q,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"go test ./..."},"tool_response":{"stdout":"ok  \tgithub.com/acme/app/store\t0.412s\n","stderr":"","interrupted":false},"tool_use_id":%q}`, name, useID))
		for _, e := range []*schemas.Entry{pre, run} {
			e.ToolUseID, e.ToolInput = useID, payload.ToolInputDigest([]byte(*e.Payload))
		}
		perSession[s] = []*schemas.Entry{p, ce, pre, run}
	}
	claim := func(s int, replyTo string) (*schemas.Entry, schemas.ClaimWork) {
		name := fmt.Sprintf("bench-%04d", s)
		reqID, _ := gen.New()
		e := entry(name, schemas.EntryClaim, schemas.ClaimRequestEvent, "", "")
		if replyTo == "" {
			replyTo = "_INBOX.hook.bench." + reqID
		}
		e.Claim = &schemas.Claim{RequestID: reqID, Claim: "done", Validator: "test_pass",
			Args: []byte(`{"command_substring":"go test ./..."}`), ReplyTo: replyTo}
		return e, schemas.ClaimWork{V: 1, SessionID: name, ClaimEventID: e.EventID, RequestID: reqID}
	}
	workMsg := func(w schemas.ClaimWork) *nats.Msg {
		b, _ := json.Marshal(w)
		m := nats.NewMsg(subject.Claims(w.SessionID))
		m.Data = b
		m.Header.Set(jetstream.MsgIDHeader, w.ClaimEventID)
		return m
	}
	var works []schemas.ClaimWork
	if !oneByOne {
		for i := range claims {
			e, w := claim(i%sessions, "")
			perSession[i%sessions] = append(perSession[i%sessions], e)
			works = append(works, w)
		}
	}
	for s, entries := range perSession {
		if _, err := app.Append(ctx, fmt.Sprintf("bench-%04d", s), entries); err != nil {
			return nil, err
		}
	}
	if !oneByOne {
		queue := func() error { return publishAll(js, len(works), func(i int) *nats.Msg { return workMsg(works[i]) }) }
		if load.deferQueue {
			return queue, nil
		}
		return none, queue()
	}
	return func() error {
		var wg sync.WaitGroup
		errs := make(chan error, sessions)
		for s := range sessions {
			wg.Go(func() {
				inbox := fmt.Sprintf("_INBOX.hook.bench.s%d", s) // claim.v1's reply_to: the host's inbox and one token
				sub, err := nc.SubscribeSync(inbox)
				if err != nil {
					errs <- err
					return
				}
				defer func() { _ = sub.Unsubscribe() }()
				for k := range claims / sessions {
					e, w := claim(s, inbox)
					if _, err := app.Append(ctx, w.SessionID, []*schemas.Entry{e}); err != nil {
						errs <- err
						return
					}
					if _, err := js.PublishMsg(ctx, workMsg(w)); err != nil {
						errs <- err
						return
					}
					if _, err := sub.NextMsg(time.Minute); err != nil {
						errs <- fmt.Errorf("session %d claim %d: %w", s, k, err)
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		return <-errs
	}, nil
}

// claimLoad is what queueClaims queues: claims over sessions, pre-queued
// (queued before it returns, or by drive with deferQueue) or one by one.
type claimLoad struct {
	claims, sessions     int
	oneByOne, deferQueue bool
}

type fleetResult struct {
	used             cpuSample     // CPU from the first attestation to the last
	wall             time.Duration // that time
	rate             float64
	verifier, server time.Duration // CPU per attestation
	conflicts        float64       // failed compare-and-sets of verdict appends per attestation
	busy             float64       // CPUs busy (all processes) from the first attestation to the last
}

func fmtRetries(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.2f", v)
}

// scrapeCounter reads one unlabelled counter (NaN when the page lacks it) from a Prometheus text page.
func scrapeCounter(url, name string) (float64, error) {
	resp, err := http.Get(url) //nolint:gosec,noctx // the benchmark's own child process on loopback
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return math.NaN(), nil // a verifier too old to report it
}

// procCPU returns a process's user+system CPU time from /proc.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name (which may contain spaces) in parens.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	var utime, stime int64
	_, _ = fmt.Sscan(f[11], &utime)
	_, _ = fmt.Sscan(f[12], &stime)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}

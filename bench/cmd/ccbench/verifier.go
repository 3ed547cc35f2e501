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
	l, err := startLocalJS(ctx, filepath.Join(dir, "nats"), jetstream.WithPublishAsyncMaxPending(2000))
	if err != nil {
		return fleetResult{}, err
	}
	defer l.close()
	srv, js := l.srv, l.js
	reg, err := keyring.OpenRegistry(ctx, js)
	if err != nil {
		return fleetResult{}, err
	}
	keyDir := filepath.Join(dir, "keys")
	if _, _, err := keyring.EnsureFirst(ctx, reg, keyring.Dir{Path: keyDir}, keyring.ECDSA, time.Now()); err != nil {
		return fleetResult{}, err
	}
	drive, err := queueClaims(ctx, l.nc, js, claims, m.sessions, m.oneByOne)
	if err != nil {
		return fleetResult{}, err
	}
	selfStart := procCPU(os.Getpid())
	var wg sync.WaitGroup
	var cmds []*exec.Cmd
	var metricsURLs []string
	for i := range procs {
		port, err := freePort()
		if err != nil {
			return fleetResult{}, err
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		metricsURLs = append(metricsURLs, "http://"+addr+"/metrics")
		cmd := exec.Command(filepath.Join(o.bin, "verifier"), "--nats-url", srv.ClientURL(), "--http-listen", addr, "--log-level", "warn")
		cmd.Env = append(os.Environ(), "CLAIMCHECK_VERIFIER_KEY_DIR="+keyDir, fmt.Sprintf("CLAIMCHECK_VERIFIER_ID=bench-%d", i))
		cmd.Env = append(cmd.Env, fmt.Sprintf("CLAIMCHECK_VERIFIER_WORKERS=%d", fleetWorkers))
		if m.oneCPU {
			cmd.Env = append(cmd.Env, "GOMAXPROCS=1")
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			return fleetResult{}, err
		}
		cmds = append(cmds, cmd)
		wg.Go(func() {
			if err := cmd.Wait(); err != nil && stderr.Len() > 0 {
				fmt.Fprintf(os.Stderr, "verifier %d: %v\n%s", i, err, stderr.String())
			}
		})
	}
	defer func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
		}
		wg.Wait()
	}()
	att, err := js.Stream(ctx, stream.Attest)
	if err != nil {
		return fleetResult{}, err
	}
	driven := make(chan error, 1)
	go func() { driven <- drive() }()
	deadline := time.Now().Add(10 * time.Minute)
	// CPU of every process (verifiers, and this one with the server) from
	// the first attestation on: how busy the machine is while it works.
	allCPU := func() time.Duration {
		d := procCPU(os.Getpid())
		for _, c := range cmds {
			d += procCPU(c.Process.Pid)
		}
		return d
	}
	var busyFrom time.Time
	var cpuFrom time.Duration
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
		if busyFrom.IsZero() && info.State.Msgs > 0 {
			busyFrom, cpuFrom = time.Now(), allCPU()
		}
		if int(info.State.Msgs) >= claims {
			busy := float64(allCPU()-cpuFrom) / float64(time.Since(busyFrom))
			first, err := att.GetMsg(ctx, info.State.FirstSeq)
			if err != nil {
				return fleetResult{}, err
			}
			last, err := att.GetMsg(ctx, info.State.LastSeq)
			if err != nil {
				return fleetResult{}, err
			}
			var vcpu time.Duration
			for _, c := range cmds {
				vcpu += procCPU(c.Process.Pid)
			}
			var conflicts float64
			for _, u := range metricsURLs {
				v, err := scrapeCounter(u, "claimcheck_verifier_append_conflicts_total")
				if err != nil {
					return fleetResult{}, err
				}
				conflicts += v // NaN (not reported) stays NaN
			}
			res := fleetResult{
				rate:      float64(claims-1) / last.Time.Sub(first.Time).Seconds(),
				verifier:  vcpu / time.Duration(claims),
				server:    (procCPU(os.Getpid()) - selfStart) / time.Duration(claims),
				conflicts: conflicts / float64(claims),
				busy:      busy,
			}
			return res, nil
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
func queueClaims(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, claims, sessions int, oneByOne bool) (
	drive func() error, err error) {
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
		run := entry(name, schemas.EntryEvent, "PostToolUse", "Bash", fmt.Sprintf(
			`{"session_id":%q,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"go test ./..."},"tool_response":{"stdout":"ok  \tgithub.com/acme/app/store\t0.412s\n","stderr":"","interrupted":false}}`, name))
		perSession[s] = []*schemas.Entry{p, ce, run}
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
		return none, publishAll(js, len(works), func(i int) *nats.Msg { return workMsg(works[i]) })
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

type fleetResult struct {
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

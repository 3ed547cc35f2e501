package main

// The gate benchmark: one JetStream server, ingest and a gatekeeper in this
// process (as `claimcheck up` runs them), 1000 sessions chained by ingest.
//
//   - latency at 1000 requests/s, open loop, three rows interleaved chunk by
//     chunk: a bare NATS request/reply (an inline responder on the same
//     server answering with a reply of the gatekeeper's mean size), the
//     gatekeeper over NATS (cc.gate.*), and the gatekeeper in-service: time
//     inside gatekeeper.Service.Handle (decode, decide from the projection,
//     sign, hand the decision record to JetStream), called directly. Once
//     with ingest running, which chains every decision the gatekeeper
//     records, and once with ingest paused (the records wait in INTAKE), to
//     tell the gatekeeper's own latency from the cost of recording.
//   - end to end: wall time from exec of claimcheck-hook with a PreToolUse
//     (and a Stop) payload to its exit with a verified decision, beside the
//     same binary recording only (gate off) and /bin/true.
//
// Every reply of the gatekeeper is verified with pkg/decision against the
// key set the hook trusts, so the figures are for real signed decisions.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/claimcheck/claimcheck/pkg/clock"
	"github.com/claimcheck/claimcheck/pkg/decision"
	"github.com/claimcheck/claimcheck/pkg/embedded"
	"github.com/claimcheck/claimcheck/pkg/envelope"
	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/service"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/services/gatekeeper"
	"github.com/claimcheck/claimcheck/services/ingest"
)

const (
	gateSessions = 1000
	gateRate     = 1000 // requests/s, open loop
	gateChunk    = 50   // consecutive requests of one row
	benchEcho    = "ccbench.echo"
	gateCwd      = "/home/user/my-project"
)

// The PreToolUse commands of the mix; two of ten are destructive.
var gateCommands = []string{
	"ls -la", "go test ./...", "cat README.md", "git status --short", "go build ./...",
	"rm -rf /", "grep -rn TODO internal", "git diff --stat", "rm -rf ~/", "sed -n 1,80p internal/store/store.go",
}

// Even sessions get a task and stop claiming success without evidence
// (blocked); odd ones ask a question and stop with an answer (allowed).
var (
	gatePrompts = []string{
		"Fix the flaky store tests and run `go test ./...` until they pass",
		"How does the store package handle its temp dirs?",
	}
	gateStopMessages = []string{
		"I fixed the flaky store test (it shared a temp dir). All tests pass now.",
		"It creates one temp dir per test with os.MkdirTemp and removes it in a deferred os.RemoveAll.",
	}
)

type gateSession struct {
	name   string
	stopID string // the chained Stop event
	stop   []byte // its payload
}

type gateReq struct {
	subj, session, hook, nonce string
	data                       []byte
}

type gateSample struct {
	d     time.Duration
	at    time.Time // when the reply was in hand
	reply []byte
}

type gateEnv struct {
	srv      *embedded.Server // nil when the server is another process's
	url      string
	nc       *nats.Conn // bench client
	js       jetstream.JetStream
	opts     stream.Options
	svc      *gatekeeper.Service
	keys     *decision.Keys
	keysPath string
	sessions []gateSession
	gen      *id.Generator
	conns    []*nats.Conn
	ingest   *ingestRun
	gkStop   func() error
}

type ingestRun struct {
	cancel context.CancelFunc
	done   chan error
}

// drain is a timed wait for ingest to chain a backlog.
type drain struct {
	n   uint64
	d   time.Duration
	cpu time.Duration // this process (ingest, server, gatekeeper following the ledger)
}

// perMsg is the CPU per message in milliseconds.
func (d drain) perMsg() float64 { return float64(d.cpu.Microseconds()) / 1000 / float64(d.n) }

func (d drain) String() string {
	return fmt.Sprintf("%d at %.0f/s, %.2f ms each", d.n, float64(d.n)/d.d.Seconds(), d.perMsg())
}

// gateBench runs the gate benchmark (see the top of this file) and prints
// its two tables: latency, then end to end.
func gateBench(o options, tmp string) error {
	n, runs := o.gateRequests, o.gateRuns
	if o.quick {
		n, runs = min(n, 1500), min(runs, 50)
	}
	n = max(gateChunk, n/gateChunk*gateChunk)
	ge, chained, err := gateSetup(filepath.Join(tmp, "gate"))
	if err != nil {
		return err
	}
	defer func() {
		if err := ge.close(); err != nil {
			fmt.Fprintln(os.Stderr, "ccbench: gate: stopping the services:", err)
		}
	}()
	echo, err := ge.startEcho()
	if err != nil {
		return err
	}
	l, err := ge.latency(n, len(echo))
	if err != nil {
		return err
	}
	tally, verified, err := ge.verifyReplies(l)
	if err != nil {
		return err
	}
	l.print(n, chained, tally, verified)
	fmt.Println()
	// 2n/5 requests: 2,000 by default, 1,000 of each kind at 100/s (20 s), so
	// that the p99 is the 10th slowest of its kind, not the 5th.
	if err := ge.postToolRows(max(gateChunk*4, 2*n/5/gateChunk*gateChunk)); err != nil {
		return err
	}

	// End to end: the built hook against the same gatekeeper, nothing else running.
	e2e, err := ge.hookRuns(o.bin, filepath.Join(tmp, "gate"), runs)
	if err != nil {
		return err
	}
	fmt.Println()
	printGateEndToEnd(runs, e2e, l)
	return nil
}

// startEcho warms the gatekeeper up, starts the bare row's responder, which
// answers every request with a reply of the gatekeeper's mean size, and
// waits for ingest to chain what the warm-up recorded. It returns that
// reply.
func (ge *gateEnv) startEcho() ([]byte, error) {
	echo, err := ge.warmUp()
	if err != nil {
		return nil, err
	}
	rnc, err := ge.conn("ccbench-echo")
	if err != nil {
		return nil, err
	}
	if _, err := rnc.Subscribe(benchEcho, func(m *nats.Msg) { _ = m.Respond(echo) }); err != nil {
		return nil, err
	}
	if err := rnc.Flush(); err != nil {
		return nil, err
	}
	if _, err := ge.waitDrained(); err != nil {
		return nil, err
	}
	return echo, nil
}

// gateLatency is the latency measurement: the three rows with ingest
// running and with ingest paused, and the drain of the decision records
// that queued in INTAKE while it was paused.
type gateLatency struct {
	running, paused *gateRows
	queued          drain
}

// latency measures the rows with ingest running, then with ingest paused,
// and times ingest chaining what queued meanwhile.
func (ge *gateEnv) latency(n, replySize int) (gateLatency, error) {
	var l gateLatency
	var err error
	if l.running, err = ge.rows(n, 1, replySize); err != nil {
		return l, err
	}
	if _, err := ge.waitDrained(); err != nil {
		return l, err
	}
	if err := ge.stopIngest(); err != nil {
		return l, err
	}
	if l.paused, err = ge.rows(n, 4, replySize); err != nil {
		return l, err
	}
	time.Sleep(200 * time.Millisecond) // the last records' asynchronous publishes
	if err := ge.startIngest(); err != nil {
		return l, err
	}
	if l.queued, err = ge.waitDrained(); err != nil {
		return l, err
	}
	return l, nil
}

// verifyReplies verifies every gatekeeper reply of the measurement (both
// gatekeeper rows) as the hook would, and counts them by hook event,
// decision and rule.
func (ge *gateEnv) verifyReplies(l gateLatency) (tally map[string]int, verified int, err error) {
	tally = map[string]int{}
	for _, r := range []*gateRows{l.running, l.paused} {
		for row := 1; row < 3; row++ {
			for i, s := range r.samples[row] {
				d, err := ge.check(r.reqs[row][i], s.reply, s.at)
				if err != nil {
					return nil, 0, fmt.Errorf("row %d, request %d: %w", row+1, i, err)
				}
				tally[d.HookEvent+" "+d.Decision+" ("+d.Rule+")"]++
				verified++
			}
		}
	}
	return tally, verified, nil
}

// print prints the latency table of n requests per row: the rows with
// ingest running and paused, the replies verified, and what chaining costs
// (chained is the drain of the pre-filled hook events).
func (l gateLatency) print(n int, chained drain, tally map[string]int, verified int) {
	running, paused, queued := l.running, l.paused, l.queued
	fmt.Printf(
		"Gate latency: %d sessions (%d hook events chained by ingest), open loop at %d requests/s, %d requests per row, interleaved in chunks of %d\n",
		gateSessions, 3*gateSessions, gateRate, n, gateChunk)
	fmt.Println(
		"  mix: 80% PreToolUse (Bash, 2 of 10 commands destructive), 20% Stop citing the session's chained Stop event (half claim success without evidence)")
	fmt.Printf("  %-66s %9s %9s %9s %9s\n", "", "p50", "p99", "/bare p50", "/bare p99")
	running.print(fmt.Sprintf(
		"with ingest running (it chains every decision the gatekeeper records); process CPU %.2f of %d cores, offered %.0f req/s", running.cores, numCPU(), running.offered))
	paused.print(
		fmt.Sprintf("ingest paused (the decision records wait in INTAKE); process CPU %.2f of %d cores, offered %.0f req/s", paused.cores,
			numCPU(), paused.offered))
	fmt.Printf("  %d gatekeeper replies verified with pkg/decision (ECDSA signature, session, event, nonce, expiry): %s\n", verified,
		tallyList(tally))
	fmt.Printf(
		"  chained by ingest, with the CPU of this whole process per message: hook events (pre-filled) %s; decision records (queued while paused) %s\n",
		chained, queued)
	rate := float64(2*n) / float64(3*n) * running.offered // requests/s that reached the gatekeeper
	fmt.Printf(
		"  with ingest running, the gatekeeper recorded %.0f decisions/s: chaining them takes %.0f × %.2f ms = %.2f cores, so the process is short of CPU\n",
		rate, rate, queued.perMsg(), rate*queued.perMsg()/1000)
	fmt.Println(
		"  (a round trip crosses several goroutines of client, server and responder, each waiting for a CPU; Service.Handle is timed inside one)")
}

// tallyList lists the counts as "key n, key n", by key.
func tallyList(tally map[string]int) string {
	keys := make([]string, 0, len(tally))
	for k := range tally {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, tally[k]))
	}
	return strings.Join(parts, ", ")
}

// printGateEndToEnd prints the end-to-end table of runs runs per contender,
// each compared with the hook recording only, and the targets, in-service
// from the latency measurement l.
func printGateEndToEnd(runs int, e2e []*hookContender, l gateLatency) {
	fmt.Printf(
		"Gate end to end: exec of claimcheck-hook → verified decision → exit (%d runs each, interleaved, no other load, sessions of the table above)\n", runs)
	fmt.Printf("  %-66s %9s %9s %9s %9s\n", "", "p50", "p99", "/rec p50", "/rec p99")
	r50, r99 := pct(e2e[2].samples, 50), pct(e2e[2].samples, 99)
	for _, c := range e2e {
		p50, p99 := pct(c.samples, 50), pct(c.samples, 99)
		fmt.Printf("  %-66s %9s %9s %8.1f× %8.1f×\n", c.name, ms(p50), ms(p99), float64(p50)/float64(r50), float64(p99)/float64(r99))
	}
	fmt.Println("  /rec = compared with the same hook recording the PreToolUse without asking (CLAIMCHECK_HOOK_GATE=false).")
	fmt.Println(
		"  gated runs publish the event and ask in one round trip, wait for the event's durable ack, verify the signed decision and publish its record (durable ack);")
	fmt.Println("  a Stop is answered once ingest has chained its event and the gatekeeper's projection has read it back.")
	in99, inP99 := pct(l.running.durations(2, ""), 99), pct(l.paused.durations(2, ""), 99)
	pre99, stop99 := pct(e2e[0].samples, 99), pct(e2e[1].samples, 99)
	fmt.Printf(
		"  targets: in-service p99 ≤ 1 ms: ingest running %s (%s), ingest paused %s (%s); end-to-end p99 ≤ 10 ms: PreToolUse %s (%s), Stop %s (%s)\n",
		verdict(in99 <= time.Millisecond), ms(in99), verdict(inP99 <= time.Millisecond), ms(inP99),
		verdict(pre99 <= 10*time.Millisecond), ms(pre99), verdict(stop99 <= 10*time.Millisecond), ms(stop99))
	f50, f99 := pct(e2e[4].samples, 50), pct(e2e[4].samples, 99)
	fmt.Printf("  the Go start-up floor alone is %s p50, %s p99 on this machine: what is left for the gate within 10 ms at p99 is %s\n",
		ms(f50), ms(f99), ms(max(0, 10*time.Millisecond-f99)))
}

// gateSetup starts a JetStream server, creates the first signing key and
// the hook's trusted key set the way `claimcheck up` does, starts a
// gatekeeper, pre-fills INTAKE with gateSessions sessions and chains them
// with ingest (timed).
func gateSetup(dir string) (*gateEnv, drain, error) {
	ctx := context.Background()
	ge := &gateEnv{gen: id.NewGenerator(clock.Real{}, nil), opts: stream.DefaultOptions()}
	fail := func(err error) (*gateEnv, drain, error) {
		_ = ge.close()
		return nil, drain{}, err
	}
	srv, err := embedded.Start(ctx, embedded.Config{StoreDir: filepath.Join(dir, "nats"), Listen: "127.0.0.1:0"}, nil)
	if err != nil {
		return nil, drain{}, err
	}
	ge.srv, ge.url = srv, srv.ClientURL()
	if ge.nc, err = ge.conn("ccbench"); err != nil {
		return fail(err)
	}
	ge.js, _ = jetstream.New(ge.nc, jetstream.WithPublishAsyncMaxPending(2000))
	if err := stream.Ensure(ctx, ge.js, ge.opts); err != nil {
		return fail(err)
	}
	keyDir, err := ge.ensureKeys(ctx, dir)
	if err != nil {
		return fail(err)
	}

	gnc, err := ge.conn("ccbench-gatekeeper")
	if err != nil {
		return fail(err)
	}
	gcfg := gatekeeper.DefaultConfig()
	gcfg.KeyDir, gcfg.ID, gcfg.Streams = keyDir, "ccbench", ge.opts
	// The rows time decisions at NORMAL: the mix denies 2 of 10 commands,
	// which would raise each session to CONTAIN after three and change what
	// its stops answer. Every request still reads the levels bucket.
	gcfg.Levels.Denials = 1 << 30
	if ge.svc, err = gatekeeper.New(gcfg,
		service.Settings{Conn: gnc, Logger: slog.New(slog.DiscardHandler), Metrics: prometheus.NewRegistry()}); err != nil {
		return fail(err)
	}
	gctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- ge.svc.Run(gctx) }()
	ge.gkStop = func() error {
		cancel()
		if err := <-done; err != nil {
			return fmt.Errorf("gatekeeper: %w", err)
		}
		return nil
	}
	for deadline := time.Now().Add(time.Minute); ge.svc.Ready() != nil; time.Sleep(5 * time.Millisecond) {
		select {
		case err := <-done:
			done <- err
			return fail(fmt.Errorf("gatekeeper stopped: %w", err))
		default:
		}
		if time.Now().After(deadline) {
			return fail(fmt.Errorf("gatekeeper not ready after a minute: %w", ge.svc.Ready()))
		}
	}
	events, err := ge.fillSessions()
	if err != nil {
		return fail(err)
	}
	cpu0, start := procCPU(os.Getpid()), time.Now()
	if err := ge.startIngest(); err != nil {
		return fail(err)
	}
	if _, err := ge.waitDrained(); err != nil {
		return fail(err)
	}
	chained := drain{n: uint64(events), d: time.Since(start), cpu: procCPU(os.Getpid()) - cpu0}

	return ge, chained, nil
}

// ensureKeys creates the first signing key in dir/keys and the hook's
// trusted key set the way `claimcheck up` does, and loads that key set to
// verify replies. It returns the key directory.
func (ge *gateEnv) ensureKeys(ctx context.Context, dir string) (string, error) {
	reg, err := keyring.OpenRegistry(ctx, ge.js)
	if err != nil {
		return "", err
	}
	keyDir := filepath.Join(dir, "keys")
	if _, _, err := keyring.EnsureFirst(ctx, reg, keyring.Dir{Path: keyDir}, keyring.ECDSA, time.Now()); err != nil {
		return "", err
	}
	ge.keysPath = filepath.Join(dir, "hook", "gate-keys.json")
	if err := writeGateKeys(ctx, reg, ge.keysPath); err != nil {
		return "", err
	}
	if ge.keys, err = decision.LoadKeys(ge.keysPath); err != nil {
		return "", err
	}
	return keyDir, nil
}

// fillSessions makes gateSessions sessions (a prompt, a passing
// `go test ./...` and a Stop each, as claimcheck-hook publishes them) and
// publishes their events to INTAKE for ingest to chain. It returns how many
// it published.
func (ge *gateEnv) fillSessions() (int, error) {
	src := envelope.Source{Host: "bench", AgentType: "claude-code", AgentID: "bench@host"}
	type event struct {
		subj, id string
		data     []byte
	}
	var events []event
	for s := range gateSessions {
		name := fmt.Sprintf("gate-%04d", s)
		head := fmt.Sprintf(
			`{"session_id":%q,"transcript_path":"/home/user/.claude/projects/-home-user-my-project/%s.jsonl","cwd":%q,"permission_mode":"default",`, name, name, gateCwd)
		stop := head + fmt.Sprintf(`"hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":%q}`, gateStopMessages[s%2])
		payloads := []struct{ hook, raw string }{
			{"UserPromptSubmit", head + fmt.Sprintf(`"hook_event_name":"UserPromptSubmit","prompt":%q}`, gatePrompts[s%2])},
			{"PostToolUse", head + gatePostTool},
			{"Stop", stop},
		}
		gs := gateSession{name: name, stop: []byte(stop)}
		for seq, p := range payloads {
			eid, err := ge.gen.New()
			if err != nil {
				return 0, err
			}
			data, err := envelope.Event(eid, name, p.hook, uint64(seq+1), time.Now(), src, []byte(p.raw))
			if err != nil {
				return 0, err
			}
			events = append(events, event{subject.Intake(subject.OriginHook, "bench", name, id.EventToken(p.hook)), eid, data})
			if p.hook == "Stop" {
				gs.stopID = eid
			}
		}
		ge.sessions = append(ge.sessions, gs)
	}
	if err := publishAll(ge.js, len(events), func(i int) *nats.Msg {
		m := nats.NewMsg(events[i].subj)
		m.Data = events[i].data
		m.Header.Set(jetstream.MsgIDHeader, events[i].id)
		return m
	}); err != nil {
		return 0, err
	}
	return len(events), nil
}

// conn opens a client connection that close will close.
func (ge *gateEnv) conn(name string) (*nats.Conn, error) {
	c, err := nats.Connect(ge.url, nats.Name(name))
	if err != nil {
		return nil, err
	}
	ge.conns = append(ge.conns, c)
	return c, nil
}

func (ge *gateEnv) close() error {
	var errs []error
	if ge.gkStop != nil {
		errs = append(errs, ge.gkStop())
	}
	errs = append(errs, ge.stopIngest())
	for _, c := range slices.Backward(ge.conns) {
		c.Close()
	}
	if ge.srv != nil {
		ge.srv.Shutdown()
	}
	return errors.Join(errs...)
}

// startIngest runs an ingest service on its own connection.
func (ge *gateEnv) startIngest() error {
	c, err := ge.conn("ccbench-ingest")
	if err != nil {
		return err
	}
	cfg := ingest.DefaultConfig()
	cfg.Streams = ge.opts
	svc, err := ingest.New(cfg, service.Settings{Conn: c, Logger: slog.New(slog.DiscardHandler), Metrics: prometheus.NewRegistry()})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	ge.ingest = &ingestRun{cancel: cancel, done: make(chan error, 1)}
	go func(done chan<- error) { done <- svc.Run(ctx) }(ge.ingest.done)
	for deadline := time.Now().Add(time.Minute); svc.Ready() != nil; time.Sleep(5 * time.Millisecond) {
		select {
		case err := <-ge.ingest.done:
			ge.ingest = nil
			cancel()
			return fmt.Errorf("ingest stopped: %w", err)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("ingest not ready after a minute: %w", svc.Ready())
		}
	}
	return nil
}

func (ge *gateEnv) stopIngest() error {
	if ge.ingest == nil {
		return nil
	}
	ge.ingest.cancel()
	err := <-ge.ingest.done
	ge.ingest = nil
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	return nil
}

// intakePending counts the INTAKE messages ingest has not yet chained and
// acknowledged.
func (ge *gateEnv) intakePending(ctx context.Context) (uint64, error) {
	var total uint64
	for p := range ge.opts.Partitions {
		c, err := ge.js.Consumer(ctx, stream.Intake, ingest.ConsumerName(p))
		if err != nil {
			return 0, err
		}
		info, err := c.Info(ctx)
		if err != nil {
			return 0, err
		}
		total += info.NumPending + uint64(info.NumAckPending)
	}
	return total, nil
}

// waitDrained waits until ingest has chained everything in INTAKE and
// reports how much that was, how long it took and the CPU it cost.
func (ge *gateEnv) waitDrained() (drain, error) {
	if ge.ingest == nil {
		return drain{}, errors.New("ingest is not running")
	}
	return ge.waitChained(ge.ingest.done, func() time.Duration { return procCPU(os.Getpid()) })
}

// waitChained waits until ingest, which sends on done if it stops, has
// chained everything in INTAKE and reports how much that was, how long it
// took and the CPU (cpu) it cost.
func (ge *gateEnv) waitChained(done chan error, cpu func() time.Duration) (drain, error) {
	ctx := context.Background()
	cpu0, start := cpu(), time.Now()
	n, err := ge.intakePending(ctx)
	if err != nil {
		return drain{}, err
	}
	for pending := n; pending > 0; {
		if time.Since(start) > 10*time.Minute {
			return drain{}, fmt.Errorf("ingest: %d of %d INTAKE messages still pending after 10 minutes", pending, n)
		}
		select {
		case err := <-done:
			done <- err
			return drain{}, fmt.Errorf("ingest stopped: %w", err)
		case <-time.After(10 * time.Millisecond):
		}
		if pending, err = ge.intakePending(ctx); err != nil {
			return drain{}, err
		}
	}
	return drain{n: max(n, 1), d: time.Since(start), cpu: cpu() - cpu0}, nil
}

// writeGateKeys writes the registry's exported key set as
// `claimcheck up` writes it for claimcheck-hook: deterministic JSON and a
// newline, 0600 in a 0700 directory.
func writeGateKeys(ctx context.Context, reg *keyring.Registry, path string) error {
	keys, err := reg.List(ctx)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(keyring.Export(keys, time.Now()), json.Deterministic(true))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, append(raw, '\n'), 0o600)
}

// warmUp asks one Stop per session (which also proves that the gatekeeper's
// projection holds every session's chained Stop) and a mixed batch, and
// returns a reply of the mixed batch's mean size for the bare responder.
func (ge *gateEnv) warmUp() ([]byte, error) {
	var size, sized int
	for _, s := range ge.sessions {
		r := ge.stopReq(s)
		m, err := ge.nc.Request(r.subj, r.data, 5*time.Second)
		if err != nil {
			return nil, fmt.Errorf("warm-up Stop of %s: %w", s.name, err)
		}
		if _, err := ge.check(r, m.Data, time.Now()); err != nil {
			return nil, fmt.Errorf("warm-up Stop of %s: %w", s.name, err)
		}
	}
	for _, r := range ge.mix(500, 0) {
		m, err := ge.nc.Request(r.subj, r.data, 5*time.Second)
		if err != nil {
			return nil, fmt.Errorf("warm-up: %w", err)
		}
		if _, err := ge.check(r, m.Data, time.Now()); err != nil {
			return nil, fmt.Errorf("warm-up: %w", err)
		}
		size += len(m.Data)
		sized++
	}
	return bytes.Repeat([]byte{'x'}, size/sized), nil
}

func newNonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (ge *gateEnv) request(subj, session, hook, eventID string, payload []byte) gateReq {
	nonce := newNonce()
	data, err := json.Marshal(schemas.GateRequest{V: 1, Nonce: nonce, EventID: eventID, SessionID: session, HookEvent: hook,
		Host: "bench", AgentType: "claude-code", AgentID: "bench@host", Payload: jsontext.Value(payload)})
	if err != nil {
		panic(err) // fixed shapes: cannot fail
	}
	return gateReq{subj: subj, session: session, hook: hook, nonce: nonce, data: data}
}

func (ge *gateEnv) stopReq(s gateSession) gateReq {
	return ge.request(subject.Gate("bench", subject.GateStop), s.name, "Stop", s.stopID, s.stop)
}

func preToolPayload(session, command string, n int) []byte {
	return fmt.Appendf(nil,
		`{"session_id":%q,"transcript_path":"/home/user/.claude/projects/-home-user-my-project/%s.jsonl","cwd":%q,"permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":%q,"description":"bench"},"tool_use_id":"toolu_%08d"}`,
		session, session, gateCwd, command, n)
}

// mix returns n requests: every fifth a Stop citing its session's chained
// Stop event, the others PreToolUse; consecutive requests go to different
// sessions. salt varies the sessions and commands.
func (ge *gateEnv) mix(n, salt int) []gateReq {
	out := make([]gateReq, n)
	for i := range n {
		s := ge.sessions[(i*7+salt*131)%len(ge.sessions)]
		if i%5 == 4 {
			out[i] = ge.stopReq(s)
			continue
		}
		eid, _ := ge.gen.New()
		cmd := gateCommands[(i/5*4+i%5+salt)%len(gateCommands)]
		out[i] = ge.request(subject.Gate("bench", subject.GatePreTool), s.name, "PreToolUse", eid, preToolPayload(s.name, cmd, i))
	}
	return out
}

// check verifies a reply as claimcheck-hook does and refuses decisions that
// did not come from a working gate (a Stop whose event the gatekeeper did
// not find, a request it could not read).
func (ge *gateEnv) check(r gateReq, reply []byte, at time.Time) (schemas.GateDecision, error) {
	d, err := ge.keys.Verify(reply,
		decision.Expect{SessionID: r.session, HookEvent: r.hook, Nonce: r.nonce, Now: at, Skew: 5 * time.Second})
	switch {
	case err != nil:
		return d, err
	case d.Source != schemas.SourceGatekeeper:
		return d, fmt.Errorf("decision source %q", d.Source)
	case d.Rule == "stop.evidence_not_recorded" || d.Rule == "request.invalid" || d.Rule == "stop.ledger_broken":
		return d, fmt.Errorf("%s: %s", d.Rule, d.Reason)
	}
	return d, nil
}

// gateRows holds the three latency rows of one configuration: 0 bare NATS,
// 1 gatekeeper over NATS, 2 gatekeeper in-service.
type gateRows struct {
	reqs      [3][]gateReq
	samples   [3][]gateSample
	offered   float64 // requests/s actually started
	cores     float64 // process CPU during the rows
	replySize int
}

// rows measures the three rows, each on its own requests.
func (ge *gateEnv) rows(n, salt, replySize int) (*gateRows, error) {
	ctx := context.Background()
	r := &gateRows{replySize: replySize}
	var errs [3][]error
	for row := range 3 {
		r.reqs[row] = ge.mix(n, salt+row)
		r.samples[row] = make([]gateSample, n)
		errs[row] = make([]error, n)
	}
	do := [3]func(q gateReq) ([]byte, error){
		func(q gateReq) ([]byte, error) {
			m, err := ge.nc.Request(benchEcho, q.data, 5*time.Second)
			if err != nil {
				return nil, err
			}
			return m.Data, nil
		},
		func(q gateReq) ([]byte, error) {
			m, err := ge.nc.Request(q.subj, q.data, 5*time.Second)
			if err != nil {
				return nil, err
			}
			return m.Data, nil
		},
		func(q gateReq) ([]byte, error) { return ge.svc.Handle(ctx, q.subj, q.data) },
	}
	// One open-loop stream at gateRate; consecutive chunks of it go to the
	// three rows in turn, the order rotating from turn to turn, so that
	// whatever else the machine does hits the rows alike.
	type slot struct{ row, i int }
	sched := make([]slot, 0, 3*n)
	for c := 0; c < n; c += gateChunk {
		for j := range 3 {
			row := (c/gateChunk + j) % 3
			for i := range gateChunk {
				sched = append(sched, slot{row, c + i})
			}
		}
	}
	cpu0, start := procCPU(os.Getpid()), time.Now()
	paceTime := paced(len(sched), gateRate, func(k int) {
		row, i := sched[k].row, sched[k].i
		q := r.reqs[row][i]
		t := time.Now()
		reply, err := do[row](q)
		d := time.Since(t)
		r.samples[row][i] = gateSample{d: d, at: time.Now(), reply: reply}
		errs[row][i] = err
	})
	r.cores = float64(procCPU(os.Getpid())-cpu0) / float64(time.Since(start))
	r.offered = float64(3*n) / paceTime.Seconds()
	for row := range 3 {
		if err := errors.Join(errs[row]...); err != nil {
			return nil, fmt.Errorf("row %d: %w", row+1, err)
		}
	}
	return r, nil
}

func (r *gateRows) durations(row int, hook string) []time.Duration {
	var out []time.Duration
	for i, s := range r.samples[row] {
		if hook == "" || r.reqs[row][i].hook == hook {
			out = append(out, s.d)
		}
	}
	return out
}

func (r *gateRows) print(title string) {
	fmt.Printf("  %s\n", title)
	bare := r.durations(0, "")
	b50, b99 := pct(bare, 50), pct(bare, 99)
	line := func(name string, d []time.Duration) {
		p50, p99 := pct(d, 50), pct(d, 99)
		fmt.Printf("    %-64s %9s %9s %8.1f× %8.1f×\n", name, ms(p50), ms(p99), float64(p50)/float64(b50), float64(p99)/float64(b99))
	}
	line(fmt.Sprintf("bare NATS request/reply (%d B reply, inline responder)", r.replySize), bare)
	line("gatekeeper request/reply (cc.gate.*, signed reply)", r.durations(1, ""))
	line("  PreToolUse", r.durations(1, "PreToolUse"))
	line("  Stop", r.durations(1, "Stop"))
	line("gatekeeper in-service (Service.Handle, no NATS hop)", r.durations(2, ""))
	line("  PreToolUse", r.durations(2, "PreToolUse"))
	line("  Stop", r.durations(2, "Stop"))
}

// paced calls f(0..n-1), each in its own goroutine, starting them at rate
// per second whatever the previous ones are doing (open loop), and waits
// for all. It returns the time spent starting them.
func paced(n int, rate float64, f func(int)) time.Duration {
	interval := time.Duration(float64(time.Second) / rate)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			time.Sleep(d)
		}
		wg.Go(func() { f(i) })
	}
	elapsed := time.Since(start) + interval
	wg.Wait()
	return elapsed
}

type hookContender struct {
	name    string
	samples []time.Duration
	run     func(i int) (time.Duration, error)
}

// hookRuns execs claimcheck-hook gated (PreToolUse, Stop), recording only,
// and /bin/true, interleaved.
func (ge *gateEnv) hookRuns(bin, dir string, runs int) ([]*hookContender, error) {
	hook := filepath.Join(bin, "claimcheck-hook")
	floor, err := buildGoFloor(dir)
	if err != nil {
		return nil, err
	}
	// The sessions are host bench's: a hook of another host may not ask
	// about them (the gatekeeper refuses it), so the hook runs as bench.
	env := append(os.Environ(), "CLAIMCHECK_NATS_URL="+ge.srv.ClientURL(), "CLAIMCHECK_HOOK_STATE_DIR="+filepath.Join(dir, "hook-state"),
		"CLAIMCHECK_HOOK_GATE_KEYS="+ge.keysPath, "CLAIMCHECK_HOOK_GATE=true", "CLAIMCHECK_HOOK_HOST=bench")
	recEnv := append(slices.Clip(env), "CLAIMCHECK_HOOK_GATE=false")
	session := func(i int) gateSession { return ge.sessions[(i*13)%len(ge.sessions)] }
	// gated checks that the hook acted on a signed decision: exit 0, nothing
	// on stderr (the hook explains every fallback there), and the answer
	// the session should get.
	gated := func(blocked bool) func(stdout, stderr string) error {
		return func(stdout, stderr string) error {
			// A blocked session's eighth consecutive block is let through
			// with a message (stop_block_cap).
			blocks := strings.Contains(stdout, `"decision":"block"`) || strings.Contains(stdout, "consecutive stops were blocked")
			if stderr != "" || strings.Contains(stdout, "fail closed") || blocked != blocks {
				return fmt.Errorf("not the expected signed decision: stdout %q, stderr %q", stdout, stderr)
			}
			return nil
		}
	}
	run := func(c *exec.Cmd, stdin []byte, check func(stdout, stderr string) error) (time.Duration, error) {
		c.Stdin = bytes.NewReader(stdin)
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		start := time.Now()
		err := c.Run()
		d := time.Since(start)
		if err != nil {
			return d, fmt.Errorf("%w: %s", err, errb.String())
		}
		if check != nil {
			return d, check(out.String(), errb.String())
		}
		return d, nil
	}
	cmd := func(e []string, args ...string) *exec.Cmd {
		c := exec.Command(hook, args...)
		c.Env = e
		return c
	}
	contenders := []*hookContender{
		{name: "claimcheck-hook PreToolUse, gated (`go test ./...`: allowed)", run: func(i int) (time.Duration, error) {
			return run(cmd(env), preToolPayload(session(i).name, "go test ./...", 900000+i), gated(false))
		}},
		{name: "claimcheck-hook Stop, gated (half blocked, half allowed)", run: func(i int) (time.Duration, error) {
			s := session(i)
			return run(cmd(env), s.stop, gated(strings.Contains(string(s.stop), gateStopMessages[0])))
		}},
		{name: "claimcheck-hook PreToolUse, CLAIMCHECK_HOOK_GATE=false (record)", run: func(i int) (time.Duration, error) {
			return run(cmd(recEnv), preToolPayload(session(i).name, "go test ./...", 900000+i), nil)
		}},
		{name: "claimcheck-hook --version (start-up only)", run: func(int) (time.Duration, error) {
			return run(cmd(env, "--version"), nil, nil)
		}},
		{name: goFloorName, run: func(int) (time.Duration, error) { return run(exec.Command(floor), nil, nil) }},
		{name: "/bin/true (exec floor)", run: func(int) (time.Duration, error) { return run(exec.Command("/bin/true"), nil, nil) }},
	}
	// Warm the page cache, then interleave so that noise hits all alike.
	for _, c := range contenders {
		for i := range 5 {
			if _, err := c.run(runs + i); err != nil {
				return nil, fmt.Errorf("%s: %w", c.name, err)
			}
		}
	}
	for i := range runs {
		for _, c := range contenders {
			d, err := c.run(i)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.name, err)
			}
			c.samples = append(c.samples, d)
		}
	}
	return contenders, nil
}

// gatePostTool is the rest of the gate sessions' PostToolUse payload.
const gatePostTool = `"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"go test ./...","description":"Run tests"},"tool_response":{"stdout":"ok  \tgithub.com/acme/app/internal/store\t0.412s\nok  \tgithub.com/acme/app/cmd\t0.020s\n","stderr":"","interrupted":false,"isImage":false},"tool_use_id":"toolu_01ABC123","duration_ms":1840}`

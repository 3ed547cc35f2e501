package e2e

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/identity"
	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/proctest"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/schemas"
)

// The multi-host test runs a three-node nats-server cluster (the binary
// and configuration a deployment runs, trusting claimcheck's authority
// through `claimcheck creds server-config`), the four services as separate
// processes with credentials of their own, and two agent hosts with hook
// identities of their own. As root it re-runs itself in a network
// namespace of its own where every NATS node and every service gets a
// namespace and an address of its own on a bridge, so that a node can be
// cut off with `ip link set down`; otherwise everything listens on
// loopback ports and a node is cut off by freezing it (SIGSTOP).
const inNetnsEnv = "CLAIMCHECK_E2E_CLUSTER_NETNS"

func TestMultiHostCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test in -short mode")
	}
	if os.Getenv(inNetnsEnv) == "" && netnsAvailable() {
		reexecInNetns(t)
		return
	}
	c := newCluster(t, os.Getenv(inNetnsEnv) != "")
	c.run(t)
}

func netnsAvailable() bool {
	if os.Geteuid() != 0 || os.Getenv("CLAIMCHECK_E2E_NO_NETNS") != "" {
		return false
	}
	for _, b := range []string{"unshare", "ip", "mount"} {
		if _, err := exec.LookPath(b); err != nil {
			return false
		}
	}
	return exec.Command("unshare", "--mount", "--net", "true").Run() == nil
}

// reexecInNetns runs this test again in a private network and mount
// namespace (nothing it creates is seen by the machine) and reports its
// output.
func reexecInNetns(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 12*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "--mount", "--net", "--", os.Args[0],
		"-test.run", "^TestMultiHostCluster$", "-test.v", "-test.count=1", "-test.timeout", "11m")
	cmd.Env = append(os.Environ(), inNetnsEnv+"=1", "CLAIMCHECK_BIN="+binDir)
	out, err := cmd.CombinedOutput()
	for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		t.Log(l)
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: TestMultiHostCluster") {
		t.Fatalf("the cluster test in its network namespace: %v", err)
	}
}

type clusterNode struct {
	name, ns         string
	client, route    string // host:port
	monitor, confDir string
	p                *proctest.Proc
}

type cluster struct {
	netns   bool
	dir     string
	data    string // the authority's --data-dir
	nodes   []*clusterNode
	urls    string
	creds   map[string]string // role or host → .creds
	svcs    map[string]*proctest.Proc
	keys    string // the hook's trusted key set
	sent    map[string]int
	sentMu  sync.Mutex
	gateDue time.Duration
	top     *testing.T // processes live as long as the whole test, whichever step starts them
}

func newCluster(t *testing.T, netns bool) *cluster {
	c := &cluster{netns: netns, dir: t.TempDir(), creds: map[string]string{}, svcs: map[string]*proctest.Proc{}, sent: map[string]int{},
		gateDue: 2 * time.Second, top: t}
	c.data = filepath.Join(c.dir, "authority")
	if netns {
		c.bridge(t)
	}
	var urls, routes []string
	for i := range 3 {
		n := &clusterNode{name: fmt.Sprintf("n%d", i+1), confDir: filepath.Join(c.dir, fmt.Sprintf("n%d", i+1))}
		host := "127.0.0.1"
		cp, rp, mp := natstest.FreePort(t), natstest.FreePort(t), natstest.FreePort(t)
		if netns {
			n.ns, host = "cc-"+n.name, fmt.Sprintf("10.77.0.%d", 11+i)
			c.namespace(t, n.ns, host)
			cp, rp, mp = 4222, 6222, 8222
		}
		n.client, n.route, n.monitor = fmt.Sprintf("%s:%d", host, cp), fmt.Sprintf("%s:%d", host, rp), fmt.Sprintf("%s:%d", host, mp)
		urls = append(urls, "nats://"+n.client)
		routes = append(routes, "nats-route://"+n.route)
		c.nodes = append(c.nodes, n)
	}
	c.urls = strings.Join(urls, ",")
	c.mustRun(t, nil, "claimcheck", "creds", "init", "--data-dir", c.data)
	for _, n := range c.nodes {
		c.writeNodeConfig(t, n, routes)
	}
	return c
}

// bridge makes the namespaces' switch; this namespace reaches them
// through it at 10.77.0.1.
func (c *cluster) bridge(t *testing.T) {
	t.Helper()
	for _, args := range [][]string{
		{"mkdir", "-p", "/run/netns"}, {"mount", "-t", "tmpfs", "netns", "/run/netns"},
		{"ip", "link", "set", "lo", "up"}, {"ip", "link", "add", "ccbr", "type", "bridge"},
		{"ip", "addr", "add", "10.77.0.1/24", "dev", "ccbr"}, {"ip", "link", "set", "ccbr", "up"},
	} {
		sh(t, args...)
	}
}

// namespace makes a network namespace with one interface on the bridge.
func (c *cluster) namespace(t *testing.T, ns, addr string) {
	t.Helper()
	veth := "v-" + strings.TrimPrefix(ns, "cc-")
	for _, args := range [][]string{
		{"ip", "netns", "add", ns}, {"ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns},
		{"ip", "link", "set", veth, "master", "ccbr", "up"}, {"ip", "netns", "exec", ns, "ip", "addr", "add", addr + "/24", "dev", "eth0"},
		{"ip", "netns", "exec", ns, "ip", "link", "set", "eth0", "up"}, {"ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up"},
	} {
		sh(t, args...)
	}
}

func sh(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// writeNodeConfig writes a node's nats-server configuration: what
// deploy/k8s runs (fsync before every acknowledgement, lame duck on
// termination), including the authority's trust from creds server-config.
func (c *cluster) writeNodeConfig(t *testing.T, n *clusterNode, routes []string) {
	t.Helper()
	if err := os.MkdirAll(n.confDir, 0o700); err != nil {
		t.Fatal(err)
	}
	c.mustRun(t, nil, "claimcheck", "creds", "server-config", "--data-dir", c.data,
		"--resolver-dir", filepath.Join(n.confDir, "resolver"), "--out", filepath.Join(n.confDir, "auth.conf"))
	conf := fmt.Sprintf(`server_name: %s
listen: %q
http: %q
max_payload: 1MB
lame_duck_duration: "30s"
lame_duck_grace_period: "2s"
jetstream {
  store_dir: %q
  sync_interval: always
}
cluster {
  name: claimcheck
  listen: %q
  routes: [%s]
}
include "auth.conf"
`, n.name, n.client, n.monitor, filepath.Join(n.confDir, "js"), n.route, strings.Join(routes, ", "))
	writeFileT(t, filepath.Join(n.confDir, "nats.conf"), conf)
}

// command runs a binary in ns (when set).
func command(ns, name string, args ...string) *exec.Cmd {
	if ns == "" {
		return exec.Command(bin(name), args...)
	}
	return exec.Command("ip", append([]string{"netns", "exec", ns, bin(name)}, args...)...)
}

func (c *cluster) startNode(n *clusterNode) {
	n.p = proctest.Start(c.top, command(n.ns, "nats-server", "-c", filepath.Join(n.confDir, "nats.conf")))
}

// healthy waits until every running node says its JetStream is current.
func (c *cluster) healthy(t *testing.T, timeout time.Duration) {
	t.Helper()
	natstest.Eventually(t, timeout, func() error {
		for _, n := range c.nodes {
			if exit, done := n.p.Wait(0); done {
				t.Fatalf("%s exited: %v\n%s", n.name, exit, n.p.Output())
			}
			resp, err := http.Get("http://" + n.monitor + "/healthz")
			if err != nil {
				return fmt.Errorf("%s: %w", n.name, err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("%s: healthz %s", n.name, resp.Status)
			}
		}
		return nil
	})
}

// settled waits until the nodes are healthy and every claimcheck stream
// has a leader and current replicas (claimcheck streams status): a node's
// /healthz counts a raft group without a leader as current, and a fault
// started while groups are still electing or catching up tests NATS's
// recovery from a double failure rather than claimcheck.
func (c *cluster) settled(t *testing.T, timeout time.Duration) {
	t.Helper()
	start := time.Now()
	c.servicesAlive(t)
	c.healthy(t, timeout)
	var last result
	natstest.Eventually(t, max(timeout-time.Since(start), time.Second), func() error {
		last = runBin(t, c.as(identity.RoleOperator), nil, "claimcheck", "streams", "status", "--timeout", "2s")
		if last.code != 0 {
			time.Sleep(500 * time.Millisecond)
			return fmt.Errorf("streams status: exit %d\n%s%s\nraft groups:\n%s", last.code, last.stdout, last.stderr, c.raftReport())
		}
		return nil
	})
}

// servicesAlive fails the test when a service has exited: one that died
// in a fault (ingest, once, on a refusal it took for good) otherwise shows
// only later, as a gate that stops answering.
func (c *cluster) servicesAlive(t *testing.T) {
	t.Helper()
	for name, p := range c.svcs {
		if exit, done := p.Wait(0); done {
			t.Fatalf("%s exited: %v\n%s", name, exit, p.Output())
		}
	}
}

func (c *cluster) mustRun(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	r := runBin(t, env, nil, name, args...)
	if r.code != 0 {
		t.Fatalf("%s %s: %+v", name, strings.Join(args, " "), r)
	}
	return r.stdout
}

// as is the environment of a command run with role's (or a host's)
// credentials against the cluster.
func (c *cluster) as(who string) []string {
	return []string{"CLAIMCHECK_NATS_URL=" + c.urls, "CLAIMCHECK_NATS_CREDS=" + c.creds[who], "CLAIMCHECK_STREAMS_REPLICAS=3"}
}

func (c *cluster) issue(t *testing.T, role, host string) {
	t.Helper()
	who, path := issueCreds(t, c.mustRun, c.data, c.dir, role, host)
	c.creds[who] = path
}

func (c *cluster) startService(t *testing.T, svc string, i int) {
	t.Helper()
	ns := ""
	if c.netns {
		ns = "cc-" + svc
		c.namespace(t, ns, fmt.Sprintf("10.77.0.%d", 21+i))
	}
	keys := filepath.Join(c.dir, "keys")
	cmd := command(ns, svc, "--nats-url", c.urls, "--nats-creds", c.creds[svc], "--http-listen", "")
	cmd.Env = append(os.Environ(), "CLAIMCHECK_STREAMS_REPLICAS=3", "CLAIMCHECK_VERIFIER_KEY_DIR="+keys, "CLAIMCHECK_GATEKEEPER_KEY_DIR="+keys,
		"CLAIMCHECK_ROTATOR_KEY_DIR="+keys, "CLAIMCHECK_ROTATOR_ARCHIVE_URL=file://"+filepath.Join(c.dir, "archive"))
	p := proctest.Start(t, cmd)
	p.WaitStderr(t, 90*time.Second, svc+" running")
	c.svcs[svc] = p
}

// host is an agent host: its hook identity, its own state directory
// (spool, trusted keys) and its sessions.
type host struct {
	c    *cluster
	name string
	tok  string // the host's token: its name as sessions and subjects spell it
	env  []string
}

func (c *cluster) host(name string) *host {
	return &host{c: c, name: name, tok: strings.ReplaceAll(name, ".", "_"), env: append(c.as(name), "CLAIMCHECK_HOOK_STATE_DIR="+filepath.Join(c.dir, "state-"+name),
		"CLAIMCHECK_HOOK_GATE_KEYS="+c.keys, fmt.Sprintf("CLAIMCHECK_HOOK_GATE_DEADLINE=%s", c.gateDue))}
}

func (h *host) agent(t *testing.T, session string, gate bool) *agent {
	env := h.env
	if !gate {
		env = append(env[:len(env):len(env)], "CLAIMCHECK_HOOK_GATE=false")
	}
	return newAgent(t, env, session)
}

// session sends one session's events through the hook without the gate
// and counts those the hook took (acknowledged or spooled: exit 0).
func (h *host) session(t *testing.T, session string, calls int) error {
	a := h.agent(t, session, false)
	send := func(event, fields string) error {
		r := runBin(t, a.env, a.payload(event, fields), "claimcheck-hook")
		if r.code != 0 {
			return fmt.Errorf("hook %s for %s: exit %d: %s", event, session, r.code, r.stderr)
		}
		h.c.sentMu.Lock()
		h.c.sent[session]++
		h.c.sentMu.Unlock()
		return nil
	}
	if err := send(schemas.HookUserPromptSubmit, `"prompt":"What does this repository do?"`); err != nil {
		return err
	}
	for i := range calls {
		useID := fmt.Sprintf("toolu_%s_%d", session, i)
		input := fmt.Sprintf(`{"command":"cat file%d.go","description":"read"}`, i)
		if err := send("PreToolUse", fmt.Sprintf(`"tool_name":"Bash","tool_input":%s,"tool_use_id":%q`, input, useID)); err != nil {
			return err
		}
		if err := send("PostToolUse", fmt.Sprintf(`"tool_name":"Bash","tool_input":%s,"tool_response":{"stdout":"package x\n","stderr":"","interrupted":false,"isImage":false},"tool_use_id":%q`, input, useID)); err != nil {
			return err
		}
	}
	return nil
}

// load runs sessions from both hosts until stop is closed.
func (c *cluster) load(t *testing.T, hosts []*host, phase string, stop <-chan struct{}) func() error {
	var wg sync.WaitGroup
	errs := make(chan error, len(hosts))
	for _, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := h.session(t, fmt.Sprintf("%s-%s-%d", phase, h.tok, i), 4); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	return func() error {
		wg.Wait()
		close(errs)
		return <-errs
	}
}

// leader names the node that leads LEDGER.
func (c *cluster) leader(t *testing.T) *clusterNode {
	t.Helper()
	nc, js := c.connect(t, identity.RoleAuditor)
	defer nc.Close()
	var name string
	natstest.Eventually(t, 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		s, err := js.Stream(ctx, stream.Ledger)
		if err != nil {
			return err
		}
		if s.CachedInfo().Cluster == nil || s.CachedInfo().Cluster.Leader == "" {
			return fmt.Errorf("LEDGER has no leader")
		}
		name = s.CachedInfo().Cluster.Leader
		return nil
	})
	for _, n := range c.nodes {
		if n.name == name {
			return n
		}
	}
	t.Fatalf("LEDGER's leader %q is none of the nodes", name)
	return nil
}

func (c *cluster) connect(t *testing.T, role string) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	i, err := identity.ReadCreds(c.creds[role])
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(c.urls, nats.UserCredentials(c.creds[role]), nats.CustomInboxPrefix(i.Inbox()), nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}

// probeGate asks the gate about a Stop and a PreToolUse of a fresh
// session and says how each was answered and how long it took.
func (c *cluster) probeGate(t *testing.T, h *host, session string) (stop, pre result, took time.Duration) {
	t.Helper()
	a := h.agent(t, session, true)
	start := time.Now()
	a.prompt("Is anything in this repository at risk?")
	pre = a.preTool("Bash", `{"command":"git status","description":"status"}`)
	stop = a.stop("I looked; nothing stands out.")
	return stop, pre, time.Since(start)
}

func (c *cluster) run(t *testing.T) {
	for _, n := range c.nodes {
		c.startNode(n)
	}
	c.healthy(t, 60*time.Second)
	for _, r := range []string{identity.RoleAdmin, identity.RoleOperator, identity.RoleAuditor, identity.RoleIngest, identity.RoleVerifier,
		identity.RoleGatekeeper, identity.RoleRotator} {
		c.issue(t, r, "")
	}
	for _, h := range []string{"host-a.example", "host-b.example"} {
		c.issue(t, identity.RoleHook, h)
	}
	out := c.mustRun(t, c.as(identity.RoleAdmin), "claimcheck", "streams", "ensure")
	if !strings.Contains(out, "3 replicas") {
		t.Fatalf("streams ensure: %s", out)
	}
	// The rotator registers the first signing key, which the verifier
	// and the gatekeeper need to start.
	for i, svc := range []string{identity.RoleIngest, identity.RoleRotator, identity.RoleVerifier, identity.RoleGatekeeper} {
		c.startService(t, svc, i)
	}
	c.keys = filepath.Join(c.dir, "gate-keys.json")
	natstest.Eventually(t, 30*time.Second, func() error {
		r := runBin(t, c.as(identity.RoleOperator), nil, "claimcheck", "keys", "export")
		if r.code != 0 || !strings.HasPrefix(strings.TrimSpace(r.stdout), "[") {
			return fmt.Errorf("keys export: %+v", r)
		}
		return os.WriteFile(c.keys, []byte(r.stdout), 0o600)
	})
	hosts := []*host{c.host("host-a.example"), c.host("host-b.example")}
	c.checkReplicas(t)

	// Each step runs only if those before it passed: a fault left
	// behind would only muddle the next step's report.
	ok := true
	step := func(name string, f func(t *testing.T)) {
		if ok {
			ok = t.Run(name, f)
		}
	}
	step("sessions from two hosts, a claim and a gated stop", func(t *testing.T) {
		c.endToEnd(t, hosts[0])
		for _, h := range hosts {
			if err := h.session(t, "steady-"+h.tok, 5); err != nil {
				t.Fatal(err)
			}
		}
	})
	step("kill -9 the LEDGER leader mid-stream", func(t *testing.T) {
		stop := make(chan struct{})
		wait := c.load(t, hosts, "kill", stop)
		time.Sleep(2 * time.Second)
		l := c.leader(t)
		t.Logf("killing %s, LEDGER's leader", l.name)
		l.p.Kill()
		time.Sleep(4 * time.Second)
		c.startNode(l)
		time.Sleep(2 * time.Second)
		close(stop)
		if err := wait(); err != nil {
			t.Fatal(err)
		}
		c.settled(t, 90*time.Second)
		if n := c.leader(t); n == nil {
			t.Fatal("no leader after the restart")
		}
	})
	step("cut one node off and heal it", func(t *testing.T) {
		stop := make(chan struct{})
		wait := c.load(t, hosts, "cut", stop)
		time.Sleep(time.Second)
		n := c.leader(t)
		c.cut(t, n, true)
		time.Sleep(6 * time.Second)
		c.cut(t, n, false)
		time.Sleep(2 * time.Second)
		close(stop)
		if err := wait(); err != nil {
			t.Fatal(err)
		}
		c.settled(t, 90*time.Second)
	})
	step("rolling restart in lame-duck mode", func(t *testing.T) {
		stop := make(chan struct{})
		wait := c.load(t, hosts, "roll", stop)
		for _, n := range c.nodes {
			// SIGUSR2: lame-duck mode (what the StatefulSet's preStop asks).
			start := time.Now()
			if err := n.p.Signal(syscall.SIGUSR2); err != nil {
				t.Fatalf("%s in lame-duck mode: %v", n.name, err)
			}
			left := time.Since(start)
			c.startNode(n)
			c.settled(t, 90*time.Second)
			t.Logf("%s: left in lame-duck mode in %s, back and current %s later", n.name, left.Round(time.Millisecond),
				(time.Since(start) - left).Round(time.Millisecond))
		}
		close(stop)
		if err := wait(); err != nil {
			t.Fatal(err)
		}
	})
	step("no quorum: the gate blocks within its deadline", func(t *testing.T) {
		down := c.nodes[1:]
		for _, n := range down {
			n.p.Kill()
		}
		stopAns, preAns, took := c.probeGate(t, hosts[1], "noquorum-"+hosts[1].tok)
		c.sentMu.Lock()
		c.sent["noquorum-"+hosts[1].tok] += 3
		c.sentMu.Unlock()
		if !strings.Contains(stopAns.stdout, `"decision":"block"`) || !strings.Contains(preAns.stdout, `"permissionDecision":"deny"`) {
			t.Fatalf("without quorum: stop %+v, pre-tool %+v", stopAns, preAns)
		}
		// A prompt, a PreToolUse and a Stop: two gated answers, each due
		// within the deadline, and the prompt's own publish deadline.
		if limit := 3*c.gateDue + 3*time.Second; took > limit {
			t.Fatalf("three hook calls took %s without quorum (limit %s)", took, limit)
		}
		t.Logf("without quorum the hooks answered in %s: stop %q", took, strings.TrimSpace(stopAns.stdout))
		for _, n := range down {
			c.startNode(n)
		}
		c.settled(t, 120*time.Second)
		// Once the cluster has its quorum back, the gate answers again
		// (the hook retries NATS a second after a failure).
		attempt, back, dumped := 0, time.Now(), false
		natstest.Eventually(t, 120*time.Second, func() error {
			c.servicesAlive(t)
			attempt++
			session := fmt.Sprintf("quorum-back-%s-%d", hosts[1].tok, attempt)
			s, p, _ := c.probeGate(t, hosts[1], session)
			c.sentMu.Lock()
			c.sent[session] += 3
			c.sentMu.Unlock()
			if strings.Contains(p.stdout, "deny") || strings.Contains(s.stdout, "fail closed") {
				time.Sleep(time.Second)
				report := "(the streams' and raft groups' state is reported on the last attempts)"
				if time.Since(back) > 90*time.Second {
					report = "streams:\n" + c.streamReport(t) + "ingest's consumers:\n" + c.consumerReport(t) + "raft groups:\n" + c.raftReport()
					if !dumped {
						// Where ingest waits: its goroutines, on its stderr
						// (printed below with its output).
						dumped = true
						_ = c.svcs[identity.RoleIngest].Signal(syscall.SIGQUIT)
					}
				}
				return fmt.Errorf("quorum back: stop %q, pre-tool %q; %d of the session's 3 events chained so far; services' last warnings:\n%s\n%s",
					s.stderr, p.stderr, len(c.events(t, session)), c.lastWarnings(4), report)
			}
			return nil
		})
		t.Logf("the gate answered again at attempt %d, %s after the cluster was healthy", attempt, time.Since(back).Round(time.Millisecond))
	})
	if ok {
		c.checkNothingLost(t, hosts)
	}
}

// streamReport is what the cluster says of claimcheck's streams (leader,
// replicas, counts), for a failure message: a group that reports a leader
// and current replicas while nothing commits looks different from one
// with no leader.
func (c *cluster) streamReport(t *testing.T) string {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	nc, js := c.connect(t, identity.RoleAuditor)
	defer nc.Close()
	var b strings.Builder
	for _, name := range stream.Names(stream.DefaultOptions()) {
		s, err := js.Stream(ctx, name)
		if err != nil {
			fmt.Fprintf(&b, "  %s: %v\n", name, err)
			continue
		}
		info := s.CachedInfo()
		fmt.Fprintf(&b, "  %s: msgs %d, seqs %d-%d; %s\n", name, info.State.Msgs, info.State.FirstSeq, info.State.LastSeq, describeCluster(info.Cluster))
	}
	return b.String()
}

// consumerReport is ingest's INTAKE consumers as the cluster sees them
// (asked with ingest's own credentials): what is pending, waiting and
// unacknowledged, and where their leaders are.
func (c *cluster) consumerReport(t *testing.T) string {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	nc, js := c.connect(t, identity.RoleIngest)
	defer nc.Close()
	var b strings.Builder
	for p := range 4 {
		name := fmt.Sprintf("ingest-p%d", p)
		cons, err := js.Consumer(ctx, stream.Intake, name)
		if err != nil {
			fmt.Fprintf(&b, "  %s: %v\n", name, err)
			continue
		}
		i := cons.CachedInfo()
		fmt.Fprintf(&b, "  %s: pending %d, waiting pulls %d, ack pending %d, delivered %d, ack floor %d; %s\n", name, i.NumPending,
			i.NumWaiting, i.NumAckPending, i.Delivered.Stream, i.AckFloor.Stream, describeCluster(i.Cluster))
	}
	return b.String()
}

// jszAccount is an account of a node's /jsz?accounts=true&streams=true:
// its streams and their raft groups.
type jszAccount struct {
	ID      string `json:"id"`
	Streams []struct {
		Name    string `json:"name"`
		Cluster struct {
			RaftGroup string `json:"raft_group"`
		} `json:"cluster"`
	} `json:"stream_detail"`
}

// raftzGroup is a raft group as a node's /raftz shows it.
type raftzGroup struct {
	State      string `json:"state"`
	Leader     string `json:"leader"`
	Term       uint64 `json:"term"`
	Vote       string `json:"voted_for"`
	PTerm      uint64 `json:"pterm"`
	PIndex     uint64 `json:"pindex"`
	Committed  uint64 `json:"committed"`
	Applied    uint64 `json:"applied"`
	CatchingUp bool   `json:"catching_up"`
	Paused     bool   `json:"paused"`
	Ever       bool   `json:"ever_had_leader"`
}

// raftReport is each node's view of the raft groups of claimcheck's
// streams (from its monitoring port's /jsz and /raftz): state, leader,
// term and vote, last log entry, commit and applied index, catch-up.
func (c *cluster) raftReport() string {
	get := func(url string, v any) error {
		resp, err := http.Get(url)
		if err != nil {
			return err
		}
		defer func() { _ = resp.Body.Close() }()
		return json.UnmarshalRead(resp.Body, v, json.RejectUnknownMembers(false))
	}
	var b strings.Builder
	for _, n := range c.nodes {
		base := "http://" + n.monitor
		var jsz struct {
			Accounts []jszAccount `json:"account_details"`
		}
		if err := get(base+"/jsz?accounts=true&streams=true&raft=true", &jsz); err != nil {
			fmt.Fprintf(&b, "  %s: /jsz: %v\n", n.name, err)
			continue
		}
		// /raftz shows the system account's groups unless asked for an
		// account's (a stream's group runs in its own account when the
		// operator names no system account).
		groups := map[string]raftzGroup{}
		for _, query := range []string{"", "?acc=" + firstID(jsz.Accounts)} {
			var raftz map[string]map[string]raftzGroup
			if err := get(base+"/raftz"+query, &raftz); err != nil {
				fmt.Fprintf(&b, "  %s: /raftz%s: %v\n", n.name, query, err)
			}
			for _, gs := range raftz {
				maps.Copy(groups, gs)
			}
		}
		for _, acc := range jsz.Accounts {
			for _, st := range acc.Streams {
				if g, ok := groups[st.Cluster.RaftGroup]; ok {
					fmt.Fprintf(&b, "  %s %s: %s leader=%q term=%d vote=%q pterm=%d pindex=%d commit=%d applied=%d catchup=%t paused=%t ever=%t\n",
						n.name, st.Name, g.State, g.Leader, g.Term, g.Vote, g.PTerm, g.PIndex, g.Committed, g.Applied, g.CatchingUp, g.Paused, g.Ever)
				} else {
					fmt.Fprintf(&b, "  %s %s: group %q not in /raftz\n", n.name, st.Name, st.Cluster.RaftGroup)
				}
			}
		}
	}
	return b.String()
}

func firstID(accs []jszAccount) string {
	for _, a := range accs {
		if a.ID != "" {
			return a.ID
		}
	}
	return ""
}

func describeCluster(ci *jetstream.ClusterInfo) string {
	if ci == nil {
		return "no cluster info"
	}
	out := "leader " + ci.Leader
	if ci.Leader == "" {
		out = "no leader"
	}
	for _, r := range ci.Replicas {
		out += fmt.Sprintf(", %s current=%t offline=%t lag=%d active=%s", r.Name, r.Current, r.Offline, r.Lag, r.Active.Round(time.Millisecond))
	}
	return out
}

// lastWarnings is each service's last n log lines at level WARN or ERROR,
// for a failure message (CI keeps only the end of the output).
func (c *cluster) lastWarnings(n int) string {
	var b strings.Builder
	for name, p := range c.svcs {
		var lines []string
		for _, l := range strings.Split(p.Output(), "\n") {
			if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") {
				lines = append(lines, l)
			}
		}
		lines = lines[max(0, len(lines)-n):]
		fmt.Fprintf(&b, "  %s: %d\n", name, len(lines))
		for _, l := range lines {
			fmt.Fprintf(&b, "    %.300s\n", l)
		}
	}
	return b.String()
}

// cut takes a node off the network (its link down) or, on loopback,
// freezes it; heal undoes it.
func (c *cluster) cut(t *testing.T, n *clusterNode, off bool) {
	t.Helper()
	switch {
	case c.netns && off:
		sh(t, "ip", "netns", "exec", n.ns, "ip", "link", "set", "eth0", "down")
	case c.netns:
		sh(t, "ip", "netns", "exec", n.ns, "ip", "link", "set", "eth0", "up")
	case off:
		_ = n.p.Cmd.Process.Signal(syscall.SIGSTOP)
	default:
		_ = n.p.Cmd.Process.Signal(syscall.SIGCONT)
	}
	t.Logf("%s cut off: %v", n.name, off)
}

func (c *cluster) checkReplicas(t *testing.T) {
	t.Helper()
	nc, js := c.connect(t, identity.RoleAuditor)
	defer nc.Close()
	for _, name := range []string{stream.Intake, stream.Ledger, stream.Claims, stream.Attest} {
		s, err := js.Stream(t.Context(), name)
		if err != nil {
			t.Fatal(err)
		}
		if r := s.CachedInfo().Config.Replicas; r != 3 {
			t.Fatalf("%s has %d replicas, want 3", name, r)
		}
	}
}

// endToEnd is the gate's story on the cluster: a session edits, runs the
// tests, gets a signed PASS from a verifier and stops citing it.
func (c *cluster) endToEnd(t *testing.T, h *host) {
	t.Helper()
	a := h.agent(t, "story-"+h.tok, true)
	a.prompt("Fix the failing test in `src/app.py` and run `pytest` to check it")
	a.edit("/repo/src/app.py")
	a.bash("pytest", "============================= 3 passed in 0.12s ==============================\n")
	v, r := a.claim("done", "test_pass", `{"command_substring":"pytest"}`)
	if r.code != 0 || v.Verdict != schemas.Pass || v.AttestationID == "" {
		t.Fatalf("claim on the cluster: %+v %+v", v, r)
	}
	msg := "Fixed the off-by-one in src/app.py; all tests pass.\n\n" + finalBlock("done", v.AttestationID)
	if ans := readStop(t, a.stop(msg)); ans.Decision != "" {
		t.Fatalf("a final message citing a fresh attestation was not let through: %+v", ans)
	}
	if ans := readStop(t, a.stop("Done, all tests pass.")); ans.Decision != "block" {
		t.Fatalf("an unbacked claim was let through on the cluster: %+v", ans)
	}
}

// checkNothingLost: every event a hook took (exit 0) is in its session's
// chain exactly once, after the hosts deliver what they spooled, and every
// chain verifies.
func (c *cluster) checkNothingLost(t *testing.T, hosts []*host) {
	t.Helper()
	// Each flush delivers what it can within the hook's deadline.
	for _, h := range hosts {
		natstest.Eventually(t, 120*time.Second, func() error {
			r := runBin(t, h.env, nil, "claimcheck-hook", "flush")
			t.Logf("%s flush: exit %d %s", h.name, r.code, strings.TrimSpace(r.stdout+r.stderr))
			if r.code != 0 {
				return fmt.Errorf("%s: spooled events remain", h.name)
			}
			return nil
		})
	}
	// An event a hook took and later moved to failed/ (refused for good)
	// is lost to the ledger: nothing here is refused for good.
	for _, h := range hosts {
		dir := filepath.Join(c.dir, "state-"+h.name, "failed")
		if names, _ := filepath.Glob(filepath.Join(dir, "*.evt")); len(names) > 0 {
			t.Errorf("%s: %d events refused for good and kept in %s: %v", h.name, len(names), dir, names)
		}
	}
	c.sentMu.Lock()
	sent := make(map[string]int, len(c.sent))
	for s, n := range c.sent {
		sent[s] = n
	}
	c.sentMu.Unlock()
	total := 0
	for s, n := range sent {
		total += n
		var got []schemas.Entry
		natstest.Eventually(t, 60*time.Second, func() error {
			got = c.events(t, s)
			if len(got) < n {
				return fmt.Errorf("session %s: %d events in the ledger, %d taken by the hook", s, len(got), n)
			}
			return nil
		})
		seen := map[string]bool{}
		for _, e := range got {
			if seen[e.EventID] {
				t.Errorf("session %s: event %s chained twice", s, e.EventID)
			}
			seen[e.EventID] = true
		}
		if len(got) != n {
			t.Errorf("session %s: %d events in the ledger, %d taken by the hook", s, len(got), n)
		}
	}
	t.Logf("%d sessions, %d events taken by the hooks, all chained once", len(sent), total)
	// Exit 1 is a broken chain: fail at once. Exit 2 is a command that
	// could not read (a node restarted last may still be taking the
	// account's JetStream back): try again.
	natstest.Eventually(t, 60*time.Second, func() error {
		r := runBin(t, c.as(identity.RoleOperator), nil, "claimcheck", "ledger", "verify")
		switch {
		case r.code == 0 && strings.Contains(r.stdout, "ok:"):
			return nil
		case r.code == 2:
			return fmt.Errorf("ledger verify could not read: %+v", r)
		}
		t.Fatalf("ledger verify: %+v", r)
		return nil
	})
}

// events returns the hook events of a session's chain.
func (c *cluster) events(t *testing.T, session string) []schemas.Entry {
	t.Helper()
	r := runBin(t, c.as(identity.RoleOperator), nil, "claimcheck", "ledger", "show", "--session", session, "--json")
	var out []schemas.Entry
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	sc.Buffer(make([]byte, 1<<20), 4<<20)
	for sc.Scan() {
		var e schemas.Entry
		if err := json.Unmarshal(sc.Bytes(), &e, json.RejectUnknownMembers(false)); err != nil {
			t.Fatalf("ledger show --json: %v\n%s", err, sc.Text())
		}
		// The agent's own events; the hook's records of the decisions it
		// took itself (fail closed) travel beside them.
		agentEvent := slices.ContainsFunc(schemas.HookEvents, func(h schemas.HookEvent) bool { return h.Name == e.HookEvent })
		if e.Kind == schemas.KindEvent && strings.HasPrefix(e.Origin, "hook:") && agentEvent {
			out = append(out, e)
		}
	}
	return out
}

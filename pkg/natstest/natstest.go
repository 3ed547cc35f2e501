// Package natstest starts real, in-process NATS servers with JetStream for
// tests: random ports, temporary store directories, sync_interval always,
// shut down by t.Cleanup. It also has the polling helper tests use instead of
// sleeping.
package natstest

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/claimcheck/claimcheck/pkg/embedded"
	"github.com/claimcheck/claimcheck/pkg/identity"
	"github.com/claimcheck/claimcheck/pkg/stream"
)

// RunServer starts a single JetStream server on 127.0.0.1 and a random port,
// storing under a temporary directory.
func RunServer(tb testing.TB) *embedded.Server {
	tb.Helper()
	return RunServerAt(tb, tb.TempDir(), "127.0.0.1:0")
}

// RunWithOptions starts a nats-server with options of the test's own (TLS,
// nkey users, operator mode) on 127.0.0.1 and a random port, and returns
// it once it accepts connections. JetStream, if enabled, stores under a
// temporary directory.
func RunWithOptions(tb testing.TB, o *server.Options) *server.Server {
	tb.Helper()
	o.Host, o.Port, o.NoSigs = "127.0.0.1", -1, true
	if o.JetStream && o.StoreDir == "" {
		o.StoreDir = tb.TempDir()
	}
	srv, err := server.NewServer(o)
	if err != nil {
		tb.Fatalf("nats server: %v", err)
	}
	go srv.Start()
	tb.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(5 * time.Second) {
		tb.Fatal("nats server not ready within 5s")
	}
	return srv
}

// OperatorMode starts a server in operator (JWT) mode with one account, and
// returns its URL and a credentials file's contents for a user of that
// account (user JWT and seed, as nsc writes them), plus a second user's
// seed for forgeries.
func OperatorMode(tb testing.TB) (url string, creds, otherSeed []byte) {
	tb.Helper()
	must := func(err error) {
		if err != nil {
			tb.Fatalf("operator mode: %v", err)
		}
	}
	op, err := nkeys.CreateOperator()
	must(err)
	opPub, err := op.PublicKey()
	must(err)
	acct, err := nkeys.CreateAccount()
	must(err)
	acctPub, err := acct.PublicKey()
	must(err)
	acctJWT, err := jwt.NewAccountClaims(acctPub).Encode(op)
	must(err)
	user, err := nkeys.CreateUser()
	must(err)
	userPub, err := user.PublicKey()
	must(err)
	uc := jwt.NewUserClaims(userPub)
	uc.IssuerAccount = acctPub
	userJWT, err := uc.Encode(acct)
	must(err)
	seed, err := user.Seed()
	must(err)
	creds, err = jwt.FormatUserConfig(userJWT, seed)
	must(err)
	other, err := nkeys.CreateUser()
	must(err)
	otherSeed, err = other.Seed()
	must(err)
	res := &server.MemAccResolver{}
	must(res.Store(acctPub, acctJWT))
	srv := RunWithOptions(tb, &server.Options{TrustedOperators: []*jwt.OperatorClaims{jwt.NewOperatorClaims(opPub)}, AccountResolver: res})
	return srv.ClientURL(), creds, otherSeed
}

// RunServerAt starts a server on a given store directory and address (to
// restart a server on the same data).
func RunServerAt(tb testing.TB, dir, listen string) *embedded.Server {
	tb.Helper()
	s, err := embedded.Start(context.Background(), embedded.Config{StoreDir: dir, Listen: listen}, nil)
	if err != nil {
		tb.Fatalf("start nats: %v", err)
	}
	tb.Cleanup(s.Shutdown)
	return s
}

// RunCluster starts n clustered JetStream servers in this process.
func RunCluster(tb testing.TB, n int) []*embedded.Server {
	tb.Helper()
	return StartCluster(tb, n).Servers
}

// Cluster is n clustered JetStream servers in this process whose nodes can
// be stopped and started again on their own data and route addresses.
type Cluster struct {
	Servers []*embedded.Server
	configs []embedded.Config
}

// StartCluster starts n clustered JetStream servers and waits until each
// answers JetStream API requests.
func StartCluster(tb testing.TB, n int) *Cluster {
	tb.Helper()
	routes := make([]string, n)
	listens := make([]string, n)
	for i := range n {
		listens[i] = fmt.Sprintf("127.0.0.1:%d", FreePort(tb))
		routes[i] = "nats-route://" + listens[i]
	}
	c := &Cluster{Servers: make([]*embedded.Server, n), configs: make([]embedded.Config, n)}
	for i := range n {
		c.configs[i] = embedded.Config{
			StoreDir:     tb.TempDir(),
			Listen:       "127.0.0.1:0",
			Name:         fmt.Sprintf("cc-%d", i),
			Cluster:      &embedded.ClusterConfig{Name: "cc", Listen: listens[i], Routes: routes},
			ReadyTimeout: time.Minute,
		}
	}
	errs := make(chan error, n)
	for i := range n {
		go func() {
			s, err := embedded.Start(context.Background(), c.configs[i], nil)
			c.Servers[i] = s
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			tb.Fatalf("start cluster: %v", err)
		}
	}
	tb.Cleanup(func() {
		for _, s := range c.Servers {
			s.Shutdown()
		}
	})
	// A JetStream API request sent before the cluster has a meta leader
	// gets no answer at all (the caller waits out its deadline), so wait
	// until every server answers one.
	for _, s := range c.Servers {
		waitJetStream(tb, s.ClientURL(), time.Minute)
	}
	return c
}

// Bootstrap creates claimcheck's streams with a replica on every node and
// returns a JetStream client connected to the first.
func (c *Cluster) Bootstrap(tb testing.TB) jetstream.JetStream {
	tb.Helper()
	_, js := Connect(tb, c.Servers[0].ClientURL())
	o := stream.DefaultOptions()
	o.Replicas = len(c.Servers)
	Bootstrap(tb, js, &o)
	return js
}

// Named is the server called name (a stream's Cluster.Leader) and its
// index, or -1.
func (c *Cluster) Named(name string) (*embedded.Server, int) {
	for i, s := range c.Servers {
		if s.NATS().Name() == name {
			return s, i
		}
	}
	return nil, -1
}

// IsolateLeader shuts down every server but the leader of stream name (of
// js's cluster): the leader then proposes what it is sent and can commit
// nothing. It returns the leader and the indexes of the servers shut down
// (Restart each to give the group its quorum back).
func (c *Cluster) IsolateLeader(tb testing.TB, js jetstream.JetStream, name string) (*embedded.Server, []int) {
	tb.Helper()
	st, err := js.Stream(tb.Context(), name)
	if err != nil {
		tb.Fatal(err)
	}
	leader, li := c.Named(st.CachedInfo().Cluster.Leader)
	if leader == nil {
		tb.Fatalf("%s's leader %q is none of the servers", name, st.CachedInfo().Cluster.Leader)
	}
	var down []int
	for i, s := range c.Servers {
		if i != li {
			s.Shutdown()
			down = append(down, i)
		}
	}
	return leader, down
}

// Restart starts node i again (after its Shutdown) on its own store and
// route address; its client port is a new one. It does not wait for the
// cluster to answer: a node alone in its restart has no quorum to answer.
func (c *Cluster) Restart(tb testing.TB, i int) *embedded.Server {
	tb.Helper()
	c.Servers[i].Shutdown()
	s, err := embedded.Start(context.Background(), c.configs[i], nil)
	if err != nil {
		tb.Fatalf("restart %s: %v", c.configs[i].Name, err)
	}
	c.Servers[i] = s
	return s
}

// waitJetStream polls url with account info requests until one is answered.
func waitJetStream(tb testing.TB, url string, timeout time.Duration) {
	tb.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		tb.Fatalf("connect %s: %v", url, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		tb.Fatal(err)
	}
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := js.AccountInfo(ctx)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("JetStream at %s not answering after %s: %v", url, timeout, err)
		}
	}
}

// FreePort returns a TCP port that was free a moment ago.
func FreePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("free port: %v", err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// Connect returns a client connection and its JetStream context, closed by
// t.Cleanup.
func Connect(tb testing.TB, url string) (*nats.Conn, jetstream.JetStream) {
	tb.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		tb.Fatalf("connect %s: %v", url, err)
	}
	tb.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		tb.Fatalf("jetstream: %v", err)
	}
	return nc, js
}

// Bootstrap creates claimcheck's streams with o (stream.DefaultOptions when
// o is nil), retrying for up to a minute what a service starting beside
// the server would retry (stream.EnsureRetry): a cluster that has just
// formed refuses to place replicas on a server whose stats its meta leader
// has not had yet, and a route set up again forgets them.
func Bootstrap(tb testing.TB, js jetstream.JetStream, o *stream.Options) {
	tb.Helper()
	opts := stream.DefaultOptions()
	if o != nil {
		opts = *o
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var logs SyncBuffer
	if err := stream.EnsureRetry(ctx, js, opts, slog.New(slog.NewTextHandler(&logs, nil))); err != nil {
		tb.Fatalf("bootstrap streams: %v\n%s", err, logs.String())
	}
}

// Eventually polls cond every 10ms until it returns nil or timeout passes,
// then fails the test with cond's last error.
func Eventually(tb testing.TB, timeout time.Duration, cond func() error) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("condition not met after %s: %v", timeout, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// SilentServer listens on a free loopback port, accepts connections and
// never answers: a peer that makes clients wait for their deadline. It
// returns host:port.
func SilentServer(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	tb.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return l.Addr().String()
}

// ProfileFromEnv starts a CPU profile into the file named by CC_PROF, if
// set, and returns the function that stops it (a no-op otherwise). The
// benchmarks call it around the part worth profiling (a drain, not its
// setup).
func ProfileFromEnv(tb testing.TB) (stop func()) {
	tb.Helper()
	p := os.Getenv("CC_PROF")
	if p == "" {
		return func() {}
	}
	f, err := os.Create(p)
	if err != nil {
		tb.Fatalf("CC_PROF: %v", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		tb.Fatalf("CC_PROF: %v", err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}
}

// SyncBuffer is an io.Writer safe for concurrent use, for the logs of a
// service or command that a test reads while it runs.
type SyncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Secured is a server that requires NATS credentials (operator mode) and
// encrypts its store, as `claimcheck up` runs it, with the authority that
// issues its identities.
type Secured struct {
	*embedded.Server
	Authority *identity.Authority
}

// RunSecured starts a Secured server with claimcheck's streams created by
// an admin identity.
func RunSecured(tb testing.TB) *Secured {
	tb.Helper()
	dir := tb.TempDir()
	a, _, err := identity.Open(filepath.Join(dir, "auth"))
	if err != nil {
		tb.Fatalf("authority: %v", err)
	}
	auth, err := a.Server(filepath.Join(dir, "resolver"))
	if err != nil {
		tb.Fatalf("authority: %v", err)
	}
	s, err := embedded.Start(context.Background(), embedded.Config{StoreDir: filepath.Join(dir, "nats"), Listen: "127.0.0.1:0", Auth: auth,
		EncryptionKey: "natstest-store-key"}, nil)
	if err != nil {
		tb.Fatalf("start nats: %v", err)
	}
	tb.Cleanup(s.Shutdown)
	sec := &Secured{Server: s, Authority: a}
	_, js := sec.Connect(tb, identity.Request{Role: identity.RoleAdmin})
	Bootstrap(tb, js, nil)
	return sec
}

// Issue issues an identity, failing the test on error.
func (s *Secured) Issue(tb testing.TB, req identity.Request) identity.Creds {
	tb.Helper()
	c, err := s.Authority.Issue(req)
	if err != nil {
		tb.Fatalf("issue %+v: %v", req, err)
	}
	return c
}

// Connect issues an identity and connects as it.
func (s *Secured) Connect(tb testing.TB, req identity.Request) (*nats.Conn, jetstream.JetStream) {
	tb.Helper()
	c := s.Issue(tb, req)
	nc, err := nats.Connect(s.ClientURL(), c.Option(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		tb.Fatalf("connect as %s %s: %v", c.Identity.Role, c.Identity.Name, err)
	}
	tb.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		tb.Fatalf("jetstream: %v", err)
	}
	return nc, js
}

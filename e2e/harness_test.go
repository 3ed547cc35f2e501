package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/identity"
	"github.com/claimcheck/claimcheck/pkg/proctest"
)

// binDir holds the binaries under test: $CLAIMCHECK_BIN (set by `make e2e`
// after `make build`), or freshly built into a temporary directory.
var binDir string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, cleanup, err := proctest.BinDir("claimcheck", "claimcheck-hook", "ingest", "verifier", "gatekeeper", "rotator", "nats-server")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cleanup()
	binDir = dir
	// Binaries must not write into the real home (claimcheck up writes the
	// hook's trusted key set under $HOME/.local/state). Set after the build,
	// which needs the real Go caches.
	home, err := os.MkdirTemp("", "claimcheck-e2e-home")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(home) }()
	_ = os.Setenv("HOME", home)
	for _, k := range []string{"XDG_STATE_HOME", "XDG_DATA_HOME", "CLAIMCHECK_HOOK_STATE_DIR", "CLAIMCHECK_HOOK_GATE_KEYS"} {
		_ = os.Unsetenv(k)
	}
	return m.Run()
}

func bin(name string) string { return filepath.Join(binDir, name) }

// proc is a running claimcheck binary.
type proc struct {
	*proctest.Proc
	violationsExpected bool
}

// start runs a binary with the identity its role needs.
func start(t *testing.T, env []string, name string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin(name), args...)
	cmd.Env = append(os.Environ(), identityEnv(env, name, args)...)
	return &proc{Proc: proctest.Start(t, cmd)}
}

// up starts `claimcheck up` and returns its NATS URL once it is ready.
func up(t *testing.T, dataDir, listen string, extra ...string) (*proc, string) {
	t.Helper()
	return upEnv(t, nil, dataDir, listen, extra...)
}

// upEnv is up with extra environment (e.g. the hook state dir, so that up
// writes the key set the hook trusts where the hook looks).
func upEnv(t *testing.T, env []string, dataDir, listen string, extra ...string) (*proc, string) {
	t.Helper()
	args := append([]string{"up", "--data-dir", dataDir, "--listen", listen, "--http-listen", ""}, extra...)
	p := start(t, env, "claimcheck", args...)
	url := p.WaitLine(t, 60*time.Second, func(l string) bool { return strings.HasPrefix(l, "nats://") })
	line := p.WaitLine(t, 60*time.Second, func(l string) bool { return strings.HasPrefix(l, "credentials: ") })
	var c upCreds
	if _, err := fmt.Sscanf(line, "credentials: %s (this host's hook and `claimcheck claim`), %s", &c.hook, &c.operator); err != nil {
		t.Fatalf("up's credentials line %q: %v", line, err)
	}
	c.dataDir = dataDir
	credsMu.Lock()
	credsByURL[url] = c
	credsMu.Unlock()
	p.WaitLine(t, 60*time.Second, func(l string) bool { return strings.HasPrefix(l, "claimcheck is up") })
	// Every identity up runs and every command the tests run as the
	// people at this host must get by with its role's permissions: a
	// refused subject is a failure, unless the test tries refused things
	// on purpose (expectViolations).
	t.Cleanup(func() {
		errs := p.Stderr()
		if !p.violationsExpected && strings.Contains(errs, "Violation") {
			t.Errorf("claimcheck up's NATS refused a subject to one of its own identities or a command's:\n%s", violations(errs))
		}
	})
	return p, url
}

// expectViolations says the test tries refused things on purpose.
func (p *proc) expectViolations() { p.violationsExpected = true }

func violations(log string) string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "Violation") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// upCreds are the credentials `claimcheck up` wrote for the people at its
// host: this host's hook identity and the operator's.
type upCreds struct{ hook, operator, dataDir string }

var (
	credsMu    sync.Mutex
	credsByURL = map[string]upCreds{}
)

// identityEnv gives a command run against a `claimcheck up` the
// credentials its user has there, unless the test chose some: the hook and
// `claimcheck claim` run as this host's hook identity (as the agent does),
// every other claimcheck command as the operator.
func identityEnv(env []string, name string, args []string) []string {
	url := ""
	for _, e := range env {
		if strings.HasPrefix(e, "CLAIMCHECK_NATS_CREDS=") {
			return env
		}
		if u, ok := strings.CutPrefix(e, "CLAIMCHECK_NATS_URL="); ok {
			url = u
		}
	}
	for i, a := range args {
		if (a == "--nats-url" || a == "--nats-creds" || a == "--creds") && i+1 < len(args) {
			if a != "--nats-url" {
				return env
			}
			url = args[i+1]
		}
	}
	credsMu.Lock()
	c, ok := credsByURL[url]
	credsMu.Unlock()
	if !ok {
		return env
	}
	creds := c.operator
	switch {
	case strings.HasPrefix(name, "claimcheck-hook") || name == "claimcheck" && len(args) > 0 && args[0] == "claim":
		creds = c.hook
	case name == "ingest" || name == "verifier" || name == "gatekeeper" || name == "rotator":
		creds = c.service(name)
	}
	return append(env, "CLAIMCHECK_NATS_CREDS="+creds)
}

// service returns credentials of a role up writes none for (a service,
// the auditor, the admin), issued once per data directory with
// `claimcheck creds issue` (as an operator sets up a service on another
// host).
func (c upCreds) service(role string) string {
	path := filepath.Join(c.dataDir, "e2e-"+role+".creds")
	credsMu.Lock()
	defer credsMu.Unlock()
	if _, err := os.Stat(path); err == nil {
		return path
	}
	out, err := exec.Command(bin("claimcheck"), "creds", "issue", "--role", role, "--data-dir", c.dataDir, "--out", path).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "issue %s credentials: %v\n%s", role, err, out)
	}
	return path
}

type result struct {
	code           int
	stdout, stderr string
}

// runBin runs a binary to completion with stdin and extra environment.
func runBin(t *testing.T, env []string, stdin []byte, name string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin(name), args...)
	cmd.Env = append(os.Environ(), identityEnv(env, name, args)...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("run %s: %v", name, err)
		}
		code = ee.ExitCode()
	}
	return result{code, out.String(), errb.String()}
}

// shownEntry is what `ledger show --json` promises per line.
type shownEntry struct {
	N             uint64 `json:"n"`
	Hash          string `json:"hash"`
	PrevHash      string `json:"prev_hash"`
	HookEvent     string `json:"hook_event"`
	EventID       string `json:"event_id"`
	Kind          string `json:"kind"`
	PayloadDigest string `json:"payload_digest"`
	Payload       string `json:"payload"`
	Artifact      *struct {
		Object string `json:"object"`
	} `json:"artifact"`
	Redactions []struct {
		Rule string `json:"rule"`
	} `json:"redactions"`
	ClientSeq uint64 `json:"client_seq"`
	Reason    string `json:"reason"`
}

// show waits until session has at least want entries and returns them.
func show(t *testing.T, url, session string, want int) ([]shownEntry, string) {
	t.Helper()
	var raw string
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := runBin(t, []string{"CLAIMCHECK_NATS_URL=" + url}, nil, "claimcheck", "ledger", "show", "--session", session, "--json")
		raw = r.stdout
		if r.code == 0 {
			var out []shownEntry
			sc := bufio.NewScanner(strings.NewReader(r.stdout))
			sc.Buffer(make([]byte, 1<<20), 4<<20)
			for sc.Scan() {
				var e shownEntry
				if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
					t.Fatalf("ledger show --json line is not JSON: %v\n%s", err, sc.Text())
				}
				out = append(out, e)
			}
			if len(out) >= want {
				return out, raw
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s did not reach %d entries within 60s (last: code %d, %q %q)", session, want, r.code, r.stdout, r.stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func readFixtures(t *testing.T) (names []string, bodies [][]byte) {
	t.Helper()
	files, err := filepath.Glob("testdata/claude/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("fixtures: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, strings.TrimSuffix(filepath.Base(f)[3:], ".json"))
		bodies = append(bodies, b)
	}
	return names, bodies
}

// connectAs connects to a `claimcheck up` as one of its people or
// services (role), with the credentials they would hold; it returns the
// identity too.
func connectAs(t *testing.T, url, role string) (*nats.Conn, jetstream.JetStream, identity.Identity) {
	t.Helper()
	path := credsFile(t, url, role)
	i, err := identity.ReadCreds(path)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(url, nats.UserCredentials(path), nats.CustomInboxPrefix(i.Inbox()), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatalf("connect %s as %s: %v", url, role, err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js, i
}

// credsFile returns the credentials a role holds at a `claimcheck up`:
// up's own for this host's hook and the operator, and for every other
// role (the services, auditor, admin) credentials issued once with
// `claimcheck creds issue`.
func credsFile(t *testing.T, url, role string) string {
	t.Helper()
	credsMu.Lock()
	c, ok := credsByURL[url]
	credsMu.Unlock()
	if !ok {
		t.Fatalf("no claimcheck up at %s", url)
	}
	switch role {
	case identity.RoleHook:
		return c.hook
	case identity.RoleOperator:
		return c.operator
	}
	path := c.service(role)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s credentials were not issued: %v", role, err)
	}
	return path
}

// issueCreds runs `claimcheck creds issue` against the authority in
// dataDir for a role, or for a host's hook when host is set, writing
// dir/creds/<who>.creds; it returns who (the role or the host) and the path.
func issueCreds(t *testing.T, run func(*testing.T, []string, string, ...string) string, dataDir, dir, role, host string) (string, string) {
	t.Helper()
	who, args := role, []string{"creds", "issue", "--data-dir", dataDir, "--role", role}
	if host != "" {
		who, args = host, append(args, "--host", host)
	}
	path := filepath.Join(dir, "creds", who+".creds")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	run(t, nil, "claimcheck", append(args, "--out", path)...)
	return who, path
}

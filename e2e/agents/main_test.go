package agents

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/claimcheck/claimcheck/pkg/proctest"
)

// The test binary runs twice. On the host network (netnsEnv unset) it finds
// or builds claimcheck's binaries and installs the pinned clients with npm,
// the only step that needs the registry. It then re-executes itself under
// `unshare -rmn` (user, mount and network namespaces; /etc overlaid) with
// netnsEnv set: there, in a network namespace whose only interface is
// loopback, it checks that nothing else exists and runs the tests. The agent clients never run anywhere else.
const (
	netnsEnv = "CLAIMCHECK_AGENTS_NETNS"
	// skipEnv carries why the clients cannot run here (no npm, no registry,
	// no unshare); every test then skips with it.
	skipEnv = "CLAIMCHECK_AGENTS_SKIP"
	// requiredEnv turns that skip into a failure (CI sets it: a run that
	// cannot install or isolate the clients must not pass as green).
	requiredEnv = "CLAIMCHECK_AGENTS_REQUIRED"
	// noEtcEnv carries why /etc is not a private writable overlay in the
	// namespace (the managed-settings scenario needs one).
	noEtcEnv = "CLAIMCHECK_AGENTS_NO_ETC"
)

var (
	// binDir holds claimcheck's binaries: $CLAIMCHECK_BIN (make e2e-agents
	// sets it after make build), or built into a temporary directory.
	binDir string
	// skipReason is skipEnv's value in the tests' process.
	skipReason string
	// goCache is the host's Go build cache, given to the agent's `go test`
	// so that its isolated HOME does not mean a cold build.
	goCache string
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if os.Getenv(netnsEnv) != "" {
		return inNamespace(m)
	}
	bin, cleanup, err := proctest.BinDir("claimcheck", "claimcheck-hook")
	if err != nil {
		fmt.Fprintln(os.Stderr, "agents:", err)
		return 1
	}
	defer cleanup()
	_ = os.Setenv("CLAIMCHECK_BIN", bin)
	if reason := prepareHost(); reason != "" {
		if os.Getenv(requiredEnv) != "" {
			fmt.Fprintf(os.Stderr, "agents: %s is set and the agent clients cannot run: %s\n", requiredEnv, reason)
			return 1
		}
		// Nothing of the clients runs: every test skips, on the host.
		_ = os.Setenv(skipEnv, reason)
		return inNamespace(m)
	}
	// A mount namespace too: /etc gets a writable overlay there, so that
	// `claimcheck hooks install --managed` writes Claude Code's real managed
	// settings path (/etc/claude-code) without touching the host's /etc.
	etc, err := os.MkdirTemp("", "claimcheck-agents-etc-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "agents:", err)
		return 1
	}
	defer func() { _ = os.RemoveAll(etc) }()
	for _, d := range []string{"upper", "work"} {
		if err := os.Mkdir(filepath.Join(etc, d), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "agents:", err)
			return 1
		}
	}
	script := `ip link set lo up && { mount -t overlay overlay -o "lowerdir=/etc,upperdir=$ETC/upper,workdir=$ETC/work" /etc ||
		export ` + noEtcEnv + `="cannot overlay /etc in a mount namespace"; } && exec "$0" "$@"`
	cmd := exec.Command("unshare", append([]string{"-rmn", "sh", "-c", script, os.Args[0]}, os.Args[1:]...)...)
	cmd.Env = append(os.Environ(), netnsEnv+"=1", "ETC="+etc)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode()
	case err != nil:
		fmt.Fprintln(os.Stderr, "agents: re-run the tests in a loopback-only network namespace:", err)
		return 1
	}
	return 0
}

// prepareHost installs the pinned clients and checks that a loopback-only
// namespace can be made. It returns why the clients cannot run here, or "".
func prepareHost() string {
	out, err := exec.Command("unshare", "-rmn", "sh", "-c", "ip link set lo up").CombinedOutput()
	if err != nil {
		return fmt.Sprintf("cannot make a loopback-only network namespace (`unshare -rmn sh -c 'ip link set lo up'`: %v %s); "+
			"the agent clients may run nowhere else", err, strings.TrimSpace(string(out)))
	}
	cs, err := readClients()
	if err != nil {
		return err.Error()
	}
	for _, c := range cs {
		if _, err := install(c); err != nil {
			return fmt.Sprintf("cannot install %s@%s (npm and the npm registry are needed once; then the cache %s is used): %v",
				c.Package, c.Version, cacheRoot(), err)
		}
	}
	return ""
}

// inNamespace runs the tests, refusing to when any network interface but
// loopback exists.
func inNamespace(m *testing.M) int {
	binDir = os.Getenv("CLAIMCHECK_BIN")
	skipReason = os.Getenv(skipEnv)
	if skipReason == "" {
		if err := loopbackOnly(); err != nil {
			fmt.Fprintln(os.Stderr, "agents: refusing to run the agent clients:", err)
			return 1
		}
		out, err := exec.Command("go", "env", "GOCACHE").Output()
		if err != nil {
			fmt.Fprintln(os.Stderr, "agents: go env GOCACHE:", err)
			return 1
		}
		goCache = strings.TrimSpace(string(out))
	}
	return m.Run()
}

// loopbackOnly checks that the process sees no network interface but an
// up loopback.
func loopbackOnly() error {
	ifs, err := net.Interfaces()
	if err != nil {
		return err
	}
	var names []string
	up := false
	for _, i := range ifs {
		names = append(names, i.Name)
		if i.Flags&net.FlagLoopback != 0 && i.Flags&net.FlagUp != 0 {
			up = true
		}
	}
	if len(ifs) != 1 || !up {
		return fmt.Errorf("network interfaces %v: want only an up loopback (the tests must run under `unshare -rn`)", names)
	}
	return nil
}

func bin(name string) string { return filepath.Join(binDir, name) }

// needClients skips the test when the clients cannot run here.
func needClients(t *testing.T) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
}

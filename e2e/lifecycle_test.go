package e2e

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/claimcheck/claimcheck/pkg/natstest"
)

// TestServiceBinariesLifecycle starts each service binary against a running
// claimcheck, waits for /readyz, and stops it with SIGTERM.
func TestServiceBinariesLifecycle(t *testing.T) {
	dir := t.TempDir()
	upProc, url := up(t, filepath.Join(dir, "data"), "127.0.0.1:0")
	for _, name := range []string{"ingest", "verifier", "gatekeeper", "rotator"} {
		t.Run(name, func(t *testing.T) {
			port := natstest.FreePort(t)
			// The standalone verifier and gatekeeper sign with the keys up created.
			keys := filepath.Join(dir, "data", "keys")
			env := []string{"CLAIMCHECK_INGEST_TAKEOVER=false", "CLAIMCHECK_VERIFIER_KEY_DIR=" + keys, "CLAIMCHECK_GATEKEEPER_KEY_DIR=" + keys,
				"CLAIMCHECK_ROTATOR_KEY_DIR=" + keys, "CLAIMCHECK_ROTATOR_ARCHIVE_URL=file://" + filepath.Join(t.TempDir(), "archive")}
			p := start(t, env, name, "--nats-url", url, "--http-listen", fmt.Sprintf("127.0.0.1:%d", port))
			natstest.Eventually(t, 30*time.Second, func() error {
				resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", port))
				if err != nil {
					return err
				}
				defer resp.Body.Close()
				body, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != 200 {
					return fmt.Errorf("readyz %d: %s", resp.StatusCode, body)
				}
				return nil
			})
			p.Stop(t)
		})
	}
	// claimcheck up itself stops cleanly on SIGINT too.
	if err := upProc.Signal(syscall.SIGINT); err != nil {
		t.Fatalf("claimcheck up after SIGINT: %v", err)
	}
}

// TestServiceBinaryRejectsBadConfig: a bad key or value stops the service
// with an error naming it.
func TestServiceBinaryRejectsBadConfig(t *testing.T) {
	r := runBin(t, []string{"CLAIMCHECK_INGEST_BATCH_SIZE=0"}, nil, "ingest", "--nats-url", "nats://127.0.0.1:1")
	if r.code == 0 || !contains(r.stderr, "batch_size") {
		t.Fatalf("bad batch size: %+v", r)
	}
	r = runBin(t, nil, nil, "verifier", "--log-level", "loud")
	if r.code == 0 || !contains(r.stderr, "log.level") {
		t.Fatalf("bad log level: %+v", r)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

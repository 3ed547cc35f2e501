package cli

import (
	"bufio"
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/claimcheck/claimcheck/pkg/natstest"
)

// `up --services` runs exactly the services named, each once, and leaves
// the default list alone (decoding the flag once wrote into the defaults'
// array: `--services verifier` built the verifier twice and failed,
// `--services ingest,verifier,rotator` ran two rotators).
func TestUpRunsExactlyTheNamedServices(t *testing.T) {
	for _, list := range []string{"verifier", "gatekeeper", "ingest,verifier,rotator"} {
		t.Run(list, func(t *testing.T) {
			dir := t.TempDir()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			pr, pw := io.Pipe()
			var errb natstest.SyncBuffer
			done := make(chan int, 1)
			go func() {
				env := Env{Getenv: func(k string) string { return map[string]string{"HOME": dir}[k] }, Stdin: strings.NewReader(""), Stdout: pw, Stderr: &errb}
				done <- Main(ctx, []string{"up", "--data-dir", dir + "/data", "--listen", "127.0.0.1:0", "--http-listen", "", "--services", list}, env)
				_ = pw.Close()
			}()
			lines := make(chan string, 16)
			go func() {
				sc := bufio.NewScanner(pr)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
			}()
			want := "claimcheck is up: " + strings.ReplaceAll(list, ",", ", ") + " running"
			deadline := time.After(60 * time.Second)
		wait:
			for {
				select {
				case l, ok := <-lines:
					if !ok {
						t.Fatalf("up exited before it was up:\n%s", errb.String())
					}
					if strings.HasPrefix(l, "claimcheck is up") {
						if !strings.HasPrefix(l, want) {
							t.Fatalf("%q, want %q", l, want)
						}
						break wait
					}
				case <-deadline:
					t.Fatalf("up not up within 60s:\n%s", errb.String())
				}
			}
			cancel()
			for range lines {
			}
			if code := <-done; code != 0 {
				t.Fatalf("exit %d:\n%s", code, errb.String())
			}
			if !slices.Equal(allServices, []string{"ingest", "verifier", "gatekeeper", "rotator"}) {
				t.Fatalf("the default services became %q", allServices)
			}
		})
	}
}

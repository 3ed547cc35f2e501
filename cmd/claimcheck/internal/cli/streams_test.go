package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/claimcheck/claimcheck/pkg/natstest"
)

// streams ensure waits for JetStream to be ready (a cluster that has just
// formed, an account just pushed), saying so, and gives up after --wait
// with the last error; with --wait 0 it tries once.
func TestStreamsEnsureWaitsForJetStream(t *testing.T) {
	noJS := natstest.RunWithOptions(t, &server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	env := map[string]string{"CLAIMCHECK_NATS_URL": noJS.ClientURL(), "HOME": t.TempDir()}

	start := time.Now()
	r := runCLI(t, env, "streams", "ensure", "--wait", "1500ms")
	took := time.Since(start)
	if r.code != ExitError || !strings.Contains(r.stderr, "JetStream not available yet; retrying") || !strings.Contains(r.stderr, "not ready within --wait 1.5s; the last attempt: stream INTAKE: nats: no responders") ||
		!strings.Contains(r.stderr, "no responders") {
		t.Fatalf("ensure --wait 1500ms without JetStream: %+v", r)
	}
	if took < time.Second {
		t.Fatalf("ensure gave up after %s, before its --wait of 1.5s", took)
	}

	r = runCLI(t, env, "streams", "ensure", "--wait", "0")
	if r.code != ExitError || strings.Contains(r.stderr, "retrying") || !strings.Contains(r.stderr, "no responders") {
		t.Fatalf("ensure --wait 0 without JetStream: %+v", r)
	}

	s := natstest.RunServer(t)
	r = runCLI(t, map[string]string{"CLAIMCHECK_NATS_URL": s.ClientURL(), "HOME": t.TempDir()}, "streams", "ensure")
	if r.code != 0 || !strings.Contains(r.stdout, "are set up") {
		t.Fatalf("ensure with JetStream: %+v", r)
	}
}

// streams status: 0 and a line per stream when every stream answers; 1
// naming the streams that do not (here, before ensure has made them), and
// --json is one array.
func TestStreamsStatus(t *testing.T) {
	s := natstest.RunServer(t)
	env := map[string]string{"CLAIMCHECK_NATS_URL": s.ClientURL(), "HOME": t.TempDir()}
	r := runCLI(t, env, "streams", "status", "--timeout", "1s")
	if r.code != ExitError || !strings.Contains(r.stdout, "LEDGER") || !strings.Contains(r.stdout, "stream not found") ||
		!strings.Contains(r.stderr, "12 of 12 streams cannot take writes and reads now") {
		t.Fatalf("status before ensure: %+v", r)
	}
	if r := runCLI(t, env, "streams", "ensure"); r.code != 0 {
		t.Fatalf("ensure: %+v", r)
	}
	r = runCLI(t, env, "streams", "status")
	if r.code != 0 || strings.Count(r.stdout, "\n") != 12 || strings.Count(r.stdout, "  ok\n") != 12 || !strings.Contains(r.stdout, "KV_levels") {
		t.Fatalf("status after ensure: %+v", r)
	}
	r = runCLI(t, env, "streams", "status", "--json")
	if r.code != 0 || !strings.HasPrefix(r.stdout, `[{"name":"INTAKE","replicas":1,`) {
		t.Fatalf("status --json: %+v", r)
	}
}

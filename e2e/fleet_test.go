package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/clock"
	"github.com/claimcheck/claimcheck/pkg/envelope"
	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/identity"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
)

// claimer publishes claim requests the way `claimcheck claim` does (a
// ClaimRequest envelope on INTAKE) and collects every reply.
type claimer struct {
	nc  *nats.Conn
	js  jetstream.JetStream
	gen *id.Generator

	mu      sync.Mutex
	replies map[string][]schemas.Verdict // by request id
	total   int
	sub     *nats.Subscription
	hook    identity.Identity
}

func newClaimer(t *testing.T, url string) *claimer {
	t.Helper()
	nc, js, hook := connectAs(t, url, identity.RoleHook)
	c := &claimer{nc: nc, js: js, gen: id.NewGenerator(clock.Real{}, nil), replies: map[string][]schemas.Verdict{}, hook: hook}
	// Claims are answered in the host's inbox (_INBOX.hook.<host>.<id>),
	// as are other clients' requests of that host: keep only ours.
	var err error
	c.sub, err = nc.Subscribe(hook.Inbox()+".*", func(m *nats.Msg) {
		if !strings.HasPrefix(m.Subject, hook.Inbox()+".fleet-") {
			return
		}
		var v schemas.Verdict
		if json.Unmarshal(m.Data, &v, json.RejectUnknownMembers(false)) != nil || v.RequestID == "" {
			return
		}
		c.mu.Lock()
		c.replies[v.RequestID] = append(c.replies[v.RequestID], v)
		c.total++
		c.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// request publishes one claim request and returns its request id.
func (c *claimer) request(ctx context.Context, session, claimType, validator, args string) (string, error) {
	eventID, _ := c.gen.New()
	reqID, _ := c.gen.New()
	payload := fmt.Sprintf(`{"session_id":%q,"hook_event_name":"ClaimRequest","request_id":%q,"claim":%q,"validator":%q,"args":%s,"reply_to":"%s.fleet-%s"}`, session, reqID, claimType, validator, args, c.hook.Inbox(), reqID)
	env, err := envelope.Event(eventID, session, schemas.ClaimRequestEvent, 0, time.Now(), envelope.Source{Host: c.hook.Host, AgentType: "claimcheck-cli", AgentID: "e2e@test"}, []byte(payload))
	if err != nil {
		return "", err
	}
	m := nats.NewMsg(subject.Intake(subject.OriginHook, c.hook.Name, session, id.EventToken(schemas.ClaimRequestEvent)))
	m.Data = env
	m.Header.Set(jetstream.MsgIDHeader, eventID)
	_, err = c.js.PublishMsg(ctx, m)
	return reqID, err
}

func (c *claimer) answered() (distinct, total int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.replies), c.total
}

// TestVerifierFleetSurvivesKill9: three verifier processes share the
// CLAIMS consumer; 1,000 claim requests; one verifier is killed with
// SIGKILL mid-run. Every request is answered, every redelivered answer is
// the recorded one, and every request has exactly one verdict in the
// ledger and (for a PASS) one attestation.
func TestVerifierFleetSurvivesKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("fleet test in -short mode")
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	_, url := up(t, data, "127.0.0.1:0", "--services", "ingest")
	hookEnv := []string{"CLAIMCHECK_NATS_URL=" + url, "CLAIMCHECK_HOOK_STATE_DIR=" + filepath.Join(dir, "hook"), "CLAIMCHECK_HOOK_GATE=false"}

	const sessions, perSession = 25, 40
	for s := range sessions {
		a := newAgent(t, hookEnv, fmt.Sprintf("fleet-%02d", s))
		a.prompt(matrixPrompt)
		a.bash("go test ./...", goTestPass)
	}
	var verifiers []*proc
	var metricsAddr []string
	for i := range 3 {
		addr := fmt.Sprintf("127.0.0.1:%d", natstest.FreePort(t))
		metricsAddr = append(metricsAddr, addr)
		verifiers = append(verifiers, start(t, []string{
			"CLAIMCHECK_VERIFIER_KEY_DIR=" + filepath.Join(data, "keys"),
			"CLAIMCHECK_VERIFIER_ACK_WAIT=2s",
			fmt.Sprintf("CLAIMCHECK_VERIFIER_ID=fleet-%d", i),
		}, "verifier", "--nats-url", url, "--http-listen", addr))
	}
	for _, v := range verifiers {
		v.WaitStderr(t, 30*time.Second, "verifier running")
	}

	c := newClaimer(t, url)
	kinds := []struct{ claim, validator, args, want string }{
		{"done", "test_pass", `{"command_substring":"go test ./..."}`, schemas.Pass},
		{"done", "file_diff_present", `{"path":"src/other.ts"}`, schemas.Refused},
		{"done", "command_zero_exit", `{"command_substring":"go test ./..."}`, schemas.Pass},
		{"done", "http_2xx", `{"url":"https://app.example.com/healthz"}`, schemas.Fail},
	}
	want := map[string]string{}      // request id → verdict
	sessionOf := map[string]string{} // request id → session
	ctx := t.Context()
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			if n, _ := c.answered(); n >= 300 {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		// Freeze it mid-work (requests pulled, some decided and recorded
		// but not answered), then SIGKILL it.
		_ = verifiers[0].Cmd.Process.Signal(syscall.SIGSTOP)
		time.Sleep(300 * time.Millisecond)
		verifiers[0].Kill()
	}()
	for i := range sessions * perSession {
		s := fmt.Sprintf("fleet-%02d", i%sessions)
		k := kinds[(i/sessions)%len(kinds)]
		reqID, err := c.request(ctx, s, k.claim, k.validator, k.args)
		if err != nil {
			t.Fatal(err)
		}
		want[reqID], sessionOf[reqID] = k.want, s
	}
	<-killed
	natstest.Eventually(t, 120*time.Second, func() error {
		if n, _ := c.answered(); n < len(want) {
			return fmt.Errorf("%d of %d requests answered", n, len(want))
		}
		return nil
	})
	_, total := c.answered()
	if verifiers[0].Cmd.ProcessState == nil || verifiers[0].Cmd.ProcessState.Success() {
		t.Fatal("verifier 0 was not killed")
	}

	// Every request: the expected verdict, and every reply to it the same.
	c.mu.Lock()
	byVerifier := map[string]int{}
	passes := 0
	for req, vs := range c.replies {
		w, ok := want[req]
		if !ok {
			t.Fatalf("reply for unknown request %s", req)
		}
		if vs[0].Verdict != w {
			t.Errorf("request %s: %s, want %s (%q)", req, vs[0].Verdict, w, vs[0].Reasons)
		}
		for _, v := range vs[1:] {
			if v.Verdict != vs[0].Verdict || v.AttestationID != vs[0].AttestationID || v.Verifier != vs[0].Verifier || v.Range != vs[0].Range {
				t.Errorf("request %s answered differently on redelivery: %+v vs %+v", req, vs[0], v)
			}
		}
		byVerifier[vs[0].Verifier]++
		if w == schemas.Pass {
			passes++
		}
	}
	c.mu.Unlock()
	t.Logf("%d requests, %d replies (%d repeated after redelivery); verdicts by verifier: %v", len(want), total, total-len(want), byVerifier)
	if byVerifier["fleet-0"] == 0 || byVerifier["fleet-1"]+byVerifier["fleet-2"] == 0 {
		t.Fatalf("the work was not shared before and after the kill: %v", byVerifier)
	}
	// The survivors took over requests the killed verifier held.
	redelivered := 0
	for _, addr := range metricsAddr[1:] {
		redelivered += scrapeCounter(t, addr, "claimcheck_verifier_redelivered_total")
	}
	t.Logf("requests redelivered to the survivors: %d", redelivered)
	if redelivered == 0 {
		t.Fatal("no request was redelivered: the kill did not land mid-run")
	}

	// The ledger (read as the operator: a hook may not): each claim chained
	// once, with exactly one verdict; every chain verifies.
	_, js, _ := connectAs(t, url, identity.RoleOperator)
	r := ledger.NewReader(js, stream.Ledger)
	verdicts := map[string]int{}
	for s := range sessions {
		name := fmt.Sprintf("fleet-%02d", s)
		v := chain.NewVerifier(name)
		claims := 0
		err := r.Walk(ctx, name, 0, func(st ledger.Stored) error {
			if err := v.Next(st.Raw); err != nil {
				return err
			}
			var e schemas.Entry
			if err := json.Unmarshal(st.Raw, &e); err != nil {
				return err
			}
			switch {
			case e.Claim != nil:
				claims++
			case e.Verdict != nil:
				verdicts[e.Verdict.RequestID]++
				if sessionOf[e.Verdict.RequestID] != name {
					return fmt.Errorf("verdict for %s in the wrong chain", e.Verdict.RequestID)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("chain %s: %v", name, err)
		}
		if claims != perSession {
			t.Errorf("chain %s has %d claims, want %d", name, claims, perSession)
		}
	}
	for req := range want {
		if verdicts[req] != 1 {
			t.Errorf("request %s has %d verdicts in the ledger, want 1", req, verdicts[req])
		}
	}
	att, err := js.Stream(ctx, stream.Attest)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := att.Info(ctx, jetstream.WithSubjectFilter(subject.AttestPrefix+".>"))
	if int(info.State.Msgs) != passes || len(info.State.Subjects) != passes {
		t.Fatalf("ATTEST holds %d attestations on %d subjects, want one per PASS (%d)", info.State.Msgs, len(info.State.Subjects), passes)
	}
	if res := runBin(t, []string{"CLAIMCHECK_NATS_URL=" + url}, nil, "claimcheck", "attest", "verify"); res.code != 0 || !strings.Contains(res.stdout, fmt.Sprintf("%d verified, 0 failed", passes)) {
		t.Fatalf("attest verify: code %d %s", res.code, lastLine(res.stdout))
	}
}

// scrapeCounter reads one counter from a service's /metrics.
func scrapeCounter(t *testing.T, addr, name string) int {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %q", name, l)
			}
			return int(n)
		}
	}
	t.Fatalf("%s not in the metrics of %s", name, addr)
	return 0
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndex(s, "\n")+1:]
}

package e2e

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/clock"
	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/identity"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/schemas"
)

// TestUpKilledWhileCommittingAtomicBatches queues acknowledged events of
// many sessions, then kills `claimcheck up` (its embedded NATS server and
// ingest together) with SIGKILL again and again while ingest commits them
// in atomic batches across sessions, and checks that every acknowledged
// event is chained exactly once, in order, and every chain verifies. A
// batch interrupted before its commit leaves nothing; one interrupted
// while the server wrote it is completed by the server on restart; the
// restarted ingest reads the chains again and skips what is chained.
func TestUpKilledWhileCommittingAtomicBatches(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	listen := fmt.Sprintf("127.0.0.1:%d", natstest.FreePort(t))
	env := []string{"CLAIMCHECK_INGEST_BATCH_SIZE=25"}
	const sessions, total = 120, 12000

	// Queue everything first, with ingest not running.
	p, url := upEnv(t, env, data, listen, "--services", "verifier")
	nc, js, hook := connectAs(t, url, identity.RoleHook)
	gen := id.NewGenerator(clock.Real{}, nil)
	want := map[string][]string{}
	var acks []jetstream.PubAckFuture
	for i := range total {
		sess := fmt.Sprintf("crash-%03d", i%sessions)
		m, eid, err := bashEvent(gen, hook.Host, sess, len(want[sess])+1, i)
		if err != nil {
			t.Fatal(err)
		}
		f, err := js.PublishMsgAsync(m)
		if err != nil {
			t.Fatal(err)
		}
		acks = append(acks, f)
		want[sess] = append(want[sess], eid)
		if i%1000 == 999 {
			select {
			case <-js.PublishAsyncComplete():
			case <-time.After(30 * time.Second):
				t.Fatal("publishing stalled")
			}
		}
	}
	for i, f := range acks {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			t.Fatalf("event %d not acknowledged: %v", i, err)
		case <-time.After(30 * time.Second):
			t.Fatalf("event %d: no acknowledgement", i)
		}
	}
	nc.Close()
	p.Stop(t)

	ledgerMsgs := func(js jetstream.JetStream) uint64 {
		s, err := js.Stream(t.Context(), stream.Ledger)
		if err != nil {
			return 0
		}
		info, err := s.Info(t.Context())
		if err != nil {
			return 0
		}
		return info.State.Msgs
	}
	kills := 0
	var progress uint64
	for ; kills < 6; kills++ {
		p, url := upEnv(t, env, data, listen)
		_, js, _ := connectAs(t, url, identity.RoleOperator)
		start := progress
		natstest.Eventually(t, 60*time.Second, func() error {
			if progress = ledgerMsgs(js); progress <= start {
				return fmt.Errorf("no progress beyond %d ledger messages", start)
			}
			return nil
		})
		if err := p.Cmd.Process.Kill(); err != nil { // SIGKILL: server and ingest at once
			t.Fatal(err)
		}
		p.Kill()
		if kills >= 3 && progress > total/4 {
			break
		}
	}
	p, url = upEnv(t, env, data, listen)
	_, js, _ = connectAs(t, url, identity.RoleOperator)
	natstest.Eventually(t, 120*time.Second, func() error {
		n := 0
		for sess := range want {
			if last, err := ledger.NewReader(js, "").Last(t.Context(), sess); err == nil {
				var e schemas.Entry
				_ = json.Unmarshal(last.Raw, &e)
				n += int(e.N)
			}
		}
		if n < total {
			return fmt.Errorf("%d of %d chained", n, total)
		}
		return nil
	})
	checkChained(t, js, want)
	if r := runBin(t, []string{"CLAIMCHECK_NATS_URL=" + url}, nil, "claimcheck", "ledger", "verify"); r.code != 0 {
		t.Fatalf("ledger verify: %+v", r)
	}
	p.Stop(t)
	t.Logf("%d SIGKILLs of claimcheck up while chaining; %d events in %d sessions chained exactly once, in order", kills, total, sessions)
}

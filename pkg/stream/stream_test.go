package stream_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
)

func TestEnsureIsIdempotentAndConcurrent(t *testing.T) {
	s := natstest.RunServer(t)
	_, js := natstest.Connect(t, s.ClientURL())
	ctx := t.Context()
	o := stream.DefaultOptions()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() { errs <- stream.Ensure(ctx, js, o) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent Ensure: %v", err)
		}
	}
	if err := stream.Ensure(ctx, js, o); err != nil {
		t.Fatalf("second Ensure: %v", err)
	}
	for _, name := range []string{stream.Intake, stream.Ledger, stream.Claims, stream.Attest} {
		if _, err := js.Stream(ctx, name); err != nil {
			t.Errorf("stream %s: %v", name, err)
		}
	}
	for _, b := range []string{stream.BucketContracts, stream.BucketSessions, stream.BucketHeads, stream.BucketKeys} {
		if _, err := js.KeyValue(ctx, b); err != nil {
			t.Errorf("bucket %s: %v", b, err)
		}
	}
	if _, err := js.ObjectStore(ctx, stream.ObjectArtifacts); err != nil {
		t.Errorf("object store: %v", err)
	}
	l, _ := js.Stream(ctx, stream.Ledger)
	if err := stream.CheckLedger(l.CachedInfo().Config); err != nil {
		t.Errorf("ledger not append-only: %v", err)
	}
	if !stream.Trimmable(l.CachedInfo().Config) {
		t.Error("a new ledger cannot be trimmed by the rotator")
	}
	a, _ := js.Stream(ctx, stream.Attest)
	if err := stream.CheckAppendOnly(a.CachedInfo().Config); err != nil {
		t.Errorf("attest not append-only: %v", err)
	}
}

// A ledger created with deny_purge (before the rotator trimmed) keeps it:
// Ensure neither fails nor loosens it, and the rotator does not trim it.
func TestEnsureKeepsAnOlderLedgersDenyPurge(t *testing.T) {
	s := natstest.RunServer(t)
	_, js := natstest.Connect(t, s.ClientURL())
	ctx := t.Context()
	cfg := stream.LedgerConfig(stream.DefaultOptions())
	cfg.DenyPurge = true
	if _, err := js.CreateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if err := stream.Ensure(ctx, js, stream.DefaultOptions()); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	l, _ := js.Stream(ctx, stream.Ledger)
	if c := l.CachedInfo().Config; !c.DenyPurge || stream.Trimmable(c) {
		t.Fatalf("deny_purge=%v after Ensure", c.DenyPurge)
	}
}

// A ledger and an ATTEST created before atomic batches were used get
// allow_atomic (the server can turn it on for an existing stream), and the
// evidence checks accept it; allow_batched (fast batches, no per-message
// checks) stays refused.
func TestEnsureEnablesAtomicBatchesOnOlderEvidenceStreams(t *testing.T) {
	s := natstest.RunServer(t)
	_, js := natstest.Connect(t, s.ClientURL())
	ctx := t.Context()
	for _, cfg := range []jetstream.StreamConfig{stream.LedgerConfig(stream.DefaultOptions()), stream.AttestConfig(stream.DefaultOptions())} {
		cfg.AllowAtomicPublish = false
		if _, err := js.CreateStream(ctx, cfg); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Ensure(ctx, js, stream.DefaultOptions()); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	for name, check := range map[string]func(jetstream.StreamConfig) error{stream.Ledger: stream.CheckLedger, stream.Attest: stream.CheckAppendOnly} {
		st, _ := js.Stream(ctx, name)
		c := st.CachedInfo().Config
		if !c.AllowAtomicPublish {
			t.Fatalf("%s: allow_atomic still off after Ensure", name)
		}
		if err := check(c); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		c.AllowBatchPublish = true
		if err := check(c); err == nil || !strings.Contains(err.Error(), "allow_batched") {
			t.Fatalf("%s with allow_batched: %v", name, err)
		}
	}
}

func TestEnsureRestoresLedgerSafety(t *testing.T) {
	s := natstest.RunServer(t)
	_, js := natstest.Connect(t, s.ClientURL())
	ctx := t.Context()
	natstest.Bootstrap(t, js, nil)
	cfg := stream.LedgerConfig(stream.DefaultOptions())
	cfg.DenyDelete, cfg.AllowRollup = false, true
	// The server itself refuses to loosen an existing ledger...
	if _, err := js.UpdateStream(ctx, cfg); err == nil {
		t.Fatal("server accepted turning deny_delete off")
	}
	// ...so simulate a ledger someone created without the safety flags.
	if err := js.DeleteStream(ctx, stream.Ledger); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if err := stream.Ensure(ctx, js, stream.DefaultOptions()); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	l, _ := js.Stream(ctx, stream.Ledger)
	if c := l.CachedInfo().Config; !c.DenyDelete || c.AllowRollup {
		t.Fatalf("ledger safety not restored: deny_delete=%v allow_rollup=%v", c.DenyDelete, c.AllowRollup)
	}
}

func TestEnsureRefusesPartitionChange(t *testing.T) {
	s := natstest.RunServer(t)
	_, js := natstest.Connect(t, s.ClientURL())
	natstest.Bootstrap(t, js, nil)
	o := stream.DefaultOptions()
	o.Partitions = 8
	err := stream.Ensure(t.Context(), js, o)
	if err == nil || !strings.Contains(err.Error(), "partition") {
		t.Fatalf("Ensure with another partition count: %v, want a partition error", err)
	}
}

func TestCheckAppendOnlyNamesEveryProblem(t *testing.T) {
	c := jetstream.StreamConfig{Name: "X", Retention: jetstream.WorkQueuePolicy, AllowRollup: true, AllowMsgTTL: true, MaxAge: time.Hour}
	err := stream.CheckAppendOnly(c)
	if !errors.Is(err, stream.ErrUnsafe) {
		t.Fatalf("err = %v", err)
	}
	for _, want := range []string{"deny_delete", "deny_purge", "allow_rollup_hdrs", "allow_msg_ttl", "retention", "discard old entries"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

func TestIntakePartitionsBySession(t *testing.T) {
	s := natstest.RunServer(t)
	nc, js := natstest.Connect(t, s.ClientURL())
	natstest.Bootstrap(t, js, nil)
	ctx := t.Context()
	// Whoever publishes (the session's host, the gatekeeper), a session's
	// events land in one partition.
	for i, sess := range []string{"s1", "s2", "s3", "s4", "s5", "s6", "s1"} {
		for _, subj := range []string{subject.Intake(subject.OriginHook, "laptop", sess, "Stop"), subject.Intake(subject.OriginGatekeeper, fmt.Sprint("gk", i), sess, "GateDecision")} {
			if _, err := js.Publish(ctx, subj, []byte("{}")); err != nil {
				t.Fatalf("publish: %v", err)
			}
		}
	}
	st, _ := js.Stream(ctx, stream.Intake)
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(">"))
	if err != nil {
		t.Fatal(err)
	}
	partitionOf := map[string]string{}
	for subj := range info.State.Subjects {
		stored, ok := subject.ParseIntake(subj)
		if !ok || stored.Legacy || stored.Event != "Stop" && stored.Event != "GateDecision" {
			t.Fatalf("stored subject %q not partitioned", subj)
		}
		p := strings.Split(subj, ".")[2]
		if prev, seen := partitionOf[stored.Chain]; seen && prev != p {
			t.Fatalf("session %s in two partitions", stored.Chain)
		}
		partitionOf[stored.Chain] = p
	}
	if len(partitionOf) != 6 {
		t.Fatalf("sessions seen: %v", partitionOf)
	}
	// A subject already in the stored shape is not captured.
	if _, err := js.Publish(ctx, "cc.intake.0.hook.laptop.s1.Stop", []byte("{}")); !errors.Is(err, jetstream.ErrNoStreamResponse) && !errors.Is(err, nats.ErrNoResponders) {
		t.Fatalf("publish to stored shape: %v, want no responders", err)
	}
	_ = nc
}

// An INTAKE of a claimcheck before subjects named their publisher is
// updated in place: the events it still holds keep their partition, and a
// session's new events join them there, so ingest reads them in order.
func TestEnsureUpdatesALegacyIntakeInPlace(t *testing.T) {
	s := natstest.RunServer(t)
	_, js := natstest.Connect(t, s.ClientURL())
	ctx := t.Context()
	legacy := stream.IntakeConfig(stream.DefaultOptions())
	legacy.Subjects = []string{"cc.intake.*.*"}
	legacy.SubjectTransform = &jetstream.SubjectTransformConfig{Source: "cc.intake.*.*", Destination: "cc.intake.{{partition(4,1)}}.{{wildcard(1)}}.{{wildcard(2)}}"}
	if _, err := js.CreateStream(ctx, legacy); err != nil {
		t.Fatal(err)
	}
	sessions := []string{"a1", "b2", "c3", "d4", "e5", "f6", "g7", "h8"}
	for _, sess := range sessions {
		if _, err := js.Publish(ctx, "cc.intake."+sess+".Stop", []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	natstest.Bootstrap(t, js, nil)
	for _, sess := range sessions {
		if _, err := js.Publish(ctx, subject.Intake(subject.OriginHook, "laptop", sess, "Stop"), []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	st, _ := js.Stream(ctx, stream.Intake)
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(">"))
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != uint64(2*len(sessions)) {
		t.Fatalf("INTAKE holds %d messages, want %d (nothing queued may be lost)", info.State.Msgs, 2*len(sessions))
	}
	partitions := map[string]map[string]bool{}
	legacySeen := 0
	for subj := range info.State.Subjects {
		stored, ok := subject.ParseIntake(subj)
		if !ok {
			t.Fatalf("stored subject %q unreadable", subj)
		}
		if stored.Legacy {
			legacySeen++
		}
		if partitions[stored.Chain] == nil {
			partitions[stored.Chain] = map[string]bool{}
		}
		partitions[stored.Chain][strings.Split(subj, ".")[2]] = true
	}
	if legacySeen != len(sessions) {
		t.Fatalf("%d legacy subjects left, want %d", legacySeen, len(sessions))
	}
	for sess, ps := range partitions {
		if len(ps) != 1 {
			t.Errorf("session %s is in partitions %v after the update", sess, ps)
		}
	}
	// Another partition count is still refused while events are queued.
	o := stream.DefaultOptions()
	o.Partitions = 8
	if err := stream.Ensure(ctx, js, o); err == nil || !strings.Contains(err.Error(), "partition count") {
		t.Fatalf("another partition count: %v", err)
	}
}

// LEDGER refuses message deletes and every header feature; purges are
// possible (the rotator trims archived entries), so the ledger's defence
// against them is detection (see the rotator's and archive's tests).
func TestLedgerRefusesDeletesAndHeaderFeatures(t *testing.T) {
	s := natstest.RunServer(t)
	nc, js := natstest.Connect(t, s.ClientURL())
	natstest.Bootstrap(t, js, nil)
	ctx := t.Context()
	ack, err := js.Publish(ctx, subject.Ledger("s1"), []byte(`{"n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	l, _ := js.Stream(ctx, stream.Ledger)
	if err := l.DeleteMsg(ctx, ack.Sequence); err == nil {
		t.Error("delete of a ledger message succeeded")
	}
	a, _ := js.Stream(ctx, stream.Attest)
	if err := a.Purge(ctx); err == nil {
		t.Error("purge of ATTEST succeeded")
	}
	for hdr, val := range map[string]string{"Nats-Rollup": "sub", "Nats-TTL": "1s", "Nats-Incr": "1"} {
		m := nats.NewMsg(subject.Ledger("s1"))
		m.Header.Set(hdr, val)
		m.Data = []byte(`{"n":2}`)
		if _, err := js.PublishMsg(ctx, m); err == nil {
			t.Errorf("publish with %s accepted by the ledger", hdr)
		}
	}
	// Atomic batches are allowed on the ledger (ingest commits many
	// sessions at once) and on ATTEST (a verifier commits its workers'
	// attestations at once), but every message in one keeps its own
	// compare-and-set: a batch with one stale expectation stores nothing.
	batch := func(subj func(int) string, expect ...string) error {
		var msgs []*nats.Msg
		for i, e := range expect {
			m := nats.NewMsg(subj(i))
			m.Data = []byte(`{"n":1}`)
			m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, e)
			msgs = append(msgs, m)
		}
		_, err := stream.PublishAtomic(ctx, nc, msgs, 5*time.Second)
		return err
	}
	ledgerSubj := func(i int) string { return subject.Ledger(fmt.Sprintf("b%d", i)) }
	if err := batch(ledgerSubj, "0", "7", "0"); !stream.IsWrongLastSequence(err) {
		t.Errorf("a batch with a stale compare-and-set: %v, want it refused", err)
	}
	info, _ := l.Info(ctx)
	if info.State.Msgs != 1 {
		t.Fatalf("ledger holds %d messages after refused operations, want 1", info.State.Msgs)
	}
	if err := batch(ledgerSubj, "0", "0", "0"); err != nil {
		t.Fatalf("a consistent batch: %v", err)
	}
	if info, _ = l.Info(ctx); info.State.Msgs != 4 {
		t.Fatalf("ledger holds %d messages after a batch of 3, want 4", info.State.Msgs)
	}
	// An attestation subject takes one message, in a batch as alone.
	attSubj := func(i int) string { return subject.Attestation("s1", fmt.Sprintf("a%d", i)) }
	if err := batch(attSubj, "0"); err != nil {
		t.Fatal(err)
	}
	if err := batch(func(i int) string { return attSubj(1 - i) }, "0", "0"); !stream.IsWrongLastSequence(err) {
		t.Errorf("a batch writing an attestation subject again: %v, want it refused", err)
	}
	if info, _ = a.Info(ctx); info.State.Msgs != 1 {
		t.Fatalf("ATTEST holds %d messages after a refused batch, want 1", info.State.Msgs)
	}
	if err := batch(func(i int) string { return attSubj(i + 1) }, "0", "0"); err != nil {
		t.Fatalf("a consistent batch of attestations: %v", err)
	}
	if info, _ = a.Info(ctx); info.State.Msgs != 3 {
		t.Fatalf("ATTEST holds %d messages after a batch of 2, want 3", info.State.Msgs)
	}
}

func TestOptionsValidate(t *testing.T) {
	o := stream.Options{}
	err := o.Validate()
	for _, want := range []string{"replicas", "partitions", "intake_max_bytes", "duplicate_window", "max_msg_size"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to name %s", err, want)
		}
	}
	if err := stream.DefaultOptions().Validate(); err != nil {
		t.Fatal(err)
	}
	_ = context.Background
}

// Check changes nothing: it reports streams that are missing or differ
// from this claimcheck's configuration as not set up (services with
// credentials that may not change streams wait on it), and passes once
// Ensure has run.
func TestCheckReportsStreamsNotSetUp(t *testing.T) {
	s := natstest.RunServer(t)
	_, js := natstest.Connect(t, s.ClientURL())
	ctx := t.Context()
	if err := stream.Check(ctx, js, stream.DefaultOptions()); !errors.Is(err, stream.ErrNotSetUp) || !strings.Contains(err.Error(), "streams ensure") {
		t.Fatalf("no streams: %v, want ErrNotSetUp naming the command", err)
	}
	natstest.Bootstrap(t, js, nil)
	if err := stream.Check(ctx, js, stream.DefaultOptions()); err != nil {
		t.Fatalf("after Ensure: %v", err)
	}
	o := stream.DefaultOptions()
	o.DuplicateWindow = 5 * time.Minute
	if err := stream.Check(ctx, js, o); !errors.Is(err, stream.ErrNotSetUp) {
		t.Fatalf("another configuration: %v, want ErrNotSetUp", err)
	}
	// Check changed nothing: the configuration is still the old one.
	if err := stream.Check(ctx, js, stream.DefaultOptions()); err != nil {
		t.Fatalf("Check changed the streams: %v", err)
	}
	ctx2, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := stream.CheckRetry(ctx2, js, o, slog.New(slog.DiscardHandler)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("CheckRetry should wait for the streams to be set up, got %v", err)
	}
}

// TestEnsureLeavesWhatIsSetUpAlone: a second Ensure sends no create or
// update for a stream, bucket or object store whose configuration is
// already right. Every update rewrites the stream's metadata files, and a
// storage error in the middle of that leaves a stream NATS refuses to load
// at its next start (e2e TestUpStorageErrorsAtStart): `claimcheck up` runs
// Ensure at every start. A changed configuration is still applied.
func TestEnsureLeavesWhatIsSetUpAlone(t *testing.T) {
	s := natstest.RunServer(t)
	nc, js := natstest.Connect(t, s.ClientURL())
	ctx := t.Context()
	o := stream.DefaultOptions()
	if err := stream.Ensure(ctx, js, o); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var changes []string
	marker := ""
	sub, err := nc.Subscribe("$JS.EVENT.ADVISORY.STREAM.>", func(m *nats.Msg) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case strings.Contains(m.Subject, ".ensure-marker-"):
			marker = m.Subject
		case strings.Contains(m.Subject, ".CREATED.") || strings.Contains(m.Subject, ".UPDATED."):
			changes = append(changes, m.Subject)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe() //nolint:errcheck // the connection closes at cleanup
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	round := 0
	ensureAndWait := func() []string {
		t.Helper()
		round++
		mu.Lock()
		changes = nil
		mu.Unlock()
		if err := stream.Ensure(ctx, js, o); err != nil {
			t.Fatal(err)
		}
		// Advisories come in order: once the marker's is here, Ensure's are.
		name := fmt.Sprintf("ensure-marker-%d", round)
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{name}}); err != nil {
			t.Fatal(err)
		}
		natstest.Eventually(t, 5*time.Second, func() error {
			mu.Lock()
			defer mu.Unlock()
			if !strings.HasSuffix(marker, name) {
				return errors.New("the marker's advisory has not arrived")
			}
			return nil
		})
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), changes...)
	}
	if got := ensureAndWait(); len(got) != 0 {
		t.Fatalf("a second Ensure changed what was set up already: %v", got)
	}
	o.DuplicateWindow = 3 * time.Minute
	if got := ensureAndWait(); len(got) == 0 {
		t.Fatal("a changed configuration was not applied")
	}
}

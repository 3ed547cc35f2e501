package intake_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/envelope"
	"github.com/claimcheck/claimcheck/pkg/intake"
	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
)

func TestEventLandsOnceOnItsOriginsSubject(t *testing.T) {
	srv := natstest.RunServer(t)
	_, js := natstest.Connect(t, srv.ClientURL())
	natstest.Bootstrap(t, js, nil)
	ctx := t.Context()
	pub := intake.Publisher{JS: js, Origin: subject.OriginOperator, Name: "alice"}
	src := envelope.Source{Host: "h1", AgentType: "claimcheck", AgentID: "alice@h1"}
	raw := []byte(`{"session_id":"s-1","hook_event_name":"GateOverride","reason":"r"}`)
	at := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	const eventID = "01KAB0000000000000000000AA"
	// A retried publication (same event id) is stored once.
	for range 2 {
		if err := pub.Event(ctx, eventID, "s-1", schemas.GateOverrideEvent, at, src, raw); err != nil {
			t.Fatal(err)
		}
	}
	st, err := js.Stream(ctx, stream.Intake)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 1 {
		t.Fatalf("INTAKE holds %d messages, want 1", info.State.Msgs)
	}
	m, err := st.GetMsg(ctx, info.State.FirstSeq)
	if err != nil {
		t.Fatal(err)
	}
	want := subject.Stored{Origin: subject.OriginOperator, Name: "alice", Chain: "s-1", Event: "GateOverride"}
	if got, ok := subject.ParseIntake(m.Subject); !ok || got != want {
		t.Errorf("stored on %q (%+v), want the operator alice's subject for s-1", m.Subject, got)
	}
	if got := m.Header.Get(jetstream.MsgIDHeader); got != eventID {
		t.Errorf("dedupe id %q, want %q", got, eventID)
	}
	var env struct {
		EventID   string         `json:"event_id"`
		SessionID string         `json:"session_id"`
		HookEvent string         `json:"hook_event"`
		Host      string         `json:"host"`
		Payload   map[string]any `json:"payload"`
	}
	if err := json.Unmarshal(m.Data, &env, json.RejectUnknownMembers(false)); err != nil {
		t.Fatal(err)
	}
	if env.EventID != eventID || env.SessionID != "s-1" || env.HookEvent != schemas.GateOverrideEvent || env.Host != "h1" || env.Payload["reason"] != "r" {
		t.Errorf("envelope %+v", env)
	}
}

func TestEnvelopeAndPublishErrorsAreTold(t *testing.T) {
	srv := natstest.RunServer(t)
	_, js := natstest.Connect(t, srv.ClientURL())
	src := envelope.Source{Host: "h1"}
	pub := intake.Publisher{JS: js, Origin: subject.OriginHook, Name: "h1"}
	var perr *intake.PublishError

	// Input an envelope cannot carry (invalid UTF-8): not a publication
	// failure, and nothing is sent.
	err := pub.Event(t.Context(), "01KAB0000000000000000000AB", "s-\xff", "Stop", time.Now(), src, []byte(`{}`))
	if err == nil || errors.As(err, &perr) {
		t.Fatalf("invalid session: %v, want an envelope error", err)
	}
	// No INTAKE stream: a publication failure.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	err = pub.Event(ctx, "01KAB0000000000000000000AC", "s-2", "Stop", time.Now(), src, []byte(`{}`))
	if !errors.As(err, &perr) || !errors.Is(err, jetstream.ErrNoStreamResponse) {
		t.Fatalf("no stream: %v, want a *PublishError wrapping ErrNoStreamResponse", err)
	}
}

// A gate decision's record is published by the hook and the gatekeeper
// with one dedupe id. While INTAKE's leader holds one copy uncommitted (its
// followers gone), the other copy is refused with a 409 "in process";
// Settle publishes it again until the group commits the first, and the
// stream then holds the record once.
func TestSettleOutlastsACopyInProcess(t *testing.T) {
	c := natstest.StartCluster(t, 3)
	leader, down := c.IsolateLeader(t, c.Bootstrap(t), stream.Intake)
	_, js := natstest.Connect(t, leader.ClientURL())
	pub := intake.Publisher{JS: js, Origin: subject.OriginGatekeeper, Name: "gk-1"}
	const eventID = "01KAB0000000000000000000GD"
	env, err := envelope.Event(eventID, "s-1", schemas.GateDecisionEvent, 0, time.Now(),
		envelope.Source{Host: "h1", AgentType: "claimcheck-gatekeeper", AgentID: "gk-1"}, []byte(`{"session_id":"s-1"}`))
	if err != nil {
		t.Fatal(err)
	}
	// The first copy: the leader proposes it and cannot commit it.
	first, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	if err := pub.Publish(first, "s-1", schemas.GateDecisionEvent, eventID, env); err == nil {
		t.Fatal("a publish without quorum was acknowledged")
	}
	fut, err := pub.PublishAsync("s-1", schemas.GateDecisionEvent, eventID, env)
	if err != nil {
		t.Fatal(err)
	}
	settled := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		settled <- pub.Settle(ctx, fut, "s-1", schemas.GateDecisionEvent, eventID, env)
	}()
	select {
	case err := <-settled:
		t.Fatalf("settled without quorum: %v", err)
	case <-time.After(2 * time.Second): // several tries, each refused in process
	}
	for _, i := range down {
		c.Restart(t, i)
	}
	if err := <-settled; err != nil {
		t.Fatalf("the second copy, once the group has its quorum back: %v", err)
	}
	st, err := js.Stream(t.Context(), stream.Intake)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 1 {
		t.Fatalf("INTAKE holds %d messages, want the record once", info.State.Msgs)
	}
}

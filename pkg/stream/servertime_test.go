package stream_test

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/stream"
)

func TestServerTime(t *testing.T) {
	s := natstest.RunServer(t)
	_, js := natstest.Connect(t, s.ClientURL())
	read := stream.ServerTime(js)
	if _, err := read(t.Context()); err == nil || !strings.Contains(err.Error(), "no stream to ask yet") {
		t.Fatalf("with no stream: err %v, want one saying there is no stream to ask", err)
	}
	// Before LEDGER exists, any stream answers.
	if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: "OTHER", Subjects: []string{"other.>"}}); err != nil {
		t.Fatal(err)
	}
	check := func(what string) {
		t.Helper()
		before := time.Now()
		got, err := read(t.Context())
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		// The embedded server runs on this host's clock.
		if got.Before(before.Add(-time.Second)) || got.After(time.Now().Add(time.Second)) {
			t.Fatalf("%s: server time %v, this host's %v", what, got, before)
		}
	}
	check("with another stream")
	natstest.Bootstrap(t, js, nil)
	check("with LEDGER")
}

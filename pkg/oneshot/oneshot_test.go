package oneshot_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/oneshot"
)

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestPublishToJetStream(t *testing.T) {
	s := natstest.RunServer(t)
	_, js := natstest.Connect(t, s.ClientURL())
	if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}}); err != nil {
		t.Fatal(err)
	}
	c, err := oneshot.Dial(ctx(t), oneshot.Options{URL: s.ClientURL(), Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := range 3 {
		ack, err := c.Publish(ctx(t), "t.a", map[string]string{"Nats-Msg-Id": "m1"}, []byte(`{"i":1}`))
		if err != nil {
			t.Fatal(err)
		}
		if ack.Stream != "T" || ack.Seq != 1 || ack.Duplicate != (i > 0) {
			t.Fatalf("ack %d = %+v", i, ack)
		}
	}
	// A second message id gets the next sequence; the body arrives intact.
	body := []byte(strings.Repeat("é\r\n", 1000))
	ack, err := c.Publish(ctx(t), "t.b", map[string]string{"Nats-Msg-Id": "m2"}, body)
	if err != nil || ack.Seq != 2 {
		t.Fatalf("ack %+v err %v", ack, err)
	}
	st, _ := js.Stream(t.Context(), "T")
	m, err := st.GetMsg(t.Context(), 2)
	if err != nil || string(m.Data) != string(body) || m.Header.Get("Nats-Msg-Id") != "m2" {
		t.Fatalf("stored message %q %v %v", m.Data[:20], m.Header, err)
	}
	// JetStream refusal is an APIError.
	_, err = c.Publish(ctx(t), "t.c", map[string]string{"Nats-Expected-Last-Subject-Sequence": "7"}, []byte("x"))
	var apiErr *oneshot.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrCode != 10071 {
		t.Fatalf("wrong last sequence: %v", err)
	}
	// Nothing listens.
	if _, err := c.Publish(ctx(t), "nobody.home", nil, []byte("x")); !errors.Is(err, oneshot.ErrNoResponders) {
		t.Fatalf("no responders: %v", err)
	}
	if _, err := c.Publish(ctx(t), "t.d", map[string]string{"Bad:Key": "v"}, nil); err == nil {
		t.Fatal("header with ':' accepted")
	}
}

// serveAndDial answers subject with fn on nc and dials a oneshot
// connection to url; both end with the test.
func serveAndDial(t *testing.T, nc *nats.Conn, url, subject string, fn nats.MsgHandler) *oneshot.Conn {
	t.Helper()
	sub, err := nc.Subscribe(subject, fn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	_ = nc.Flush()
	c, err := oneshot.Dial(ctx(t), oneshot.Options{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestRequestReply(t *testing.T) {
	s := natstest.RunServer(t)
	nc, _ := natstest.Connect(t, s.ClientURL())
	c := serveAndDial(t, nc, s.ClientURL(), "svc", func(m *nats.Msg) {
		r := nats.NewMsg(m.Reply)
		r.Header.Set("X-Echo", m.Header.Get("X-In"))
		r.Data = append([]byte("re:"), m.Data...)
		_ = m.RespondMsg(r)
	})
	m, err := c.Request(ctx(t), "svc", map[string]string{"X-In": "42"}, []byte("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Data) != "re:hi" || m.Header["X-Echo"][0] != "42" {
		t.Fatalf("reply %q %v", m.Data, m.Header)
	}
}

// Several requests in flight on one connection: each Wait gets its own
// reply whatever the order replies arrive and are waited for in.
func TestRequestsInFlight(t *testing.T) {
	s := natstest.RunServer(t)
	nc, js := natstest.Connect(t, s.ClientURL())
	if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}}); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	c := serveAndDial(t, nc, s.ClientURL(), "slow", func(m *nats.Msg) {
		<-release // answered only after the fast ones
		_ = m.Respond(append([]byte("slow:"), m.Data...))
	})
	slow, err := c.Send(ctx(t), "slow", nil, []byte("1"))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := c.Send(ctx(t), "t.a", map[string]string{"Nats-Msg-Id": "m1"}, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	slow2, err := c.Send(ctx(t), "slow", nil, []byte("2"))
	if err != nil {
		t.Fatal(err)
	}
	// The ack arrives first and is waited for first.
	if ack, err := c.WaitAck(ctx(t), pub); err != nil || ack.Seq != 1 {
		t.Fatalf("ack %+v %v", ack, err)
	}
	close(release)
	// Wait in the reverse order of sending: the reply read first is kept.
	if m, err := c.Wait(ctx(t), slow2); err != nil || string(m.Data) != "slow:2" {
		t.Fatalf("second slow reply %v %v", m, err)
	}
	if m, err := c.Wait(ctx(t), slow); err != nil || string(m.Data) != "slow:1" {
		t.Fatalf("first slow reply %v %v", m, err)
	}
	// A reply is handed out once.
	if _, err := c.Wait(ctx(t), slow); err == nil {
		t.Fatal("a second Wait for the same request returned")
	}
	// A request in flight to nobody ends in ErrNoResponders at its Wait.
	none, err := c.Send(ctx(t), "nobody.home", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Wait(ctx(t), none); !errors.Is(err, oneshot.ErrNoResponders) {
		t.Fatalf("no responders: %v", err)
	}
}

func TestDialFailures(t *testing.T) {
	// Nothing listening.
	port := natstest.FreePort(t)
	_, err := oneshot.Dial(ctx(t), oneshot.Options{URL: "nats://127.0.0.1:" + strconv.Itoa(port)})
	if err == nil || !strings.Contains(err.Error(), "connect") {
		t.Fatalf("refused: %v", err)
	}
	// A server that accepts and never speaks: bounded by the context.
	silent := natstest.SilentServer(t)
	short, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = oneshot.Dial(short, oneshot.Options{URL: "nats://" + silent, Verify: true})
	if !errors.Is(err, oneshot.ErrTimeout) || time.Since(start) > 2*time.Second {
		t.Fatalf("silent server: %v after %s", err, time.Since(start))
	}
	// Without Verify the silence is met by the first request's deadline.
	short2, cancel2 := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel2()
	lazy, err := oneshot.Dial(short2, oneshot.Options{URL: "nats://" + silent})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lazy.Publish(short2, "x", nil, []byte("y")); !errors.Is(err, oneshot.ErrTimeout) {
		t.Fatalf("silent server, lazy: %v", err)
	}
	_ = lazy.Close()
	// A server speaking something else.
	l2, _ := net.Listen("tcp", "127.0.0.1:0")
	defer l2.Close()
	go func() {
		c, err := l2.Accept()
		if err == nil {
			_, _ = c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
			_ = c.Close()
		}
	}()
	g, err := oneshot.Dial(ctx(t), oneshot.Options{URL: "nats://" + l2.Addr().String()})
	if err == nil {
		_, err = g.Publish(ctx(t), "x", nil, []byte("y"))
		_ = g.Close()
	}
	if !errors.Is(err, oneshot.ErrProtocol) {
		t.Fatalf("garbage server: %v", err)
	}
	// Several URLs: the first dead, the second good.
	s := natstest.RunServer(t)
	c, err := oneshot.Dial(ctx(t), oneshot.Options{URL: "nats://127.0.0.1:" + strconv.Itoa(port) + "," + s.ClientURL()})
	if err != nil {
		t.Fatalf("fallback URL: %v", err)
	}
	_ = c.Close()
}

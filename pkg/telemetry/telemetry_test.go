package telemetry

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestHandlerServesHealthReadinessMetrics(t *testing.T) {
	reg := NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "claimcheck_test_total", Help: "test"})
	reg.MustRegister(c)
	c.Add(3)
	h := NewHealth()
	ready := errors.New("starting")
	h.Add("svc", func() error { return ready })
	ctx, cancel := context.WithCancel(t.Context())
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, "127.0.0.1:0", Handler(reg, h), func(a net.Addr) { addrc <- a.String() }) }()
	base := "http://" + <-addrc
	get := func(path string) (int, string) {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Fatalf("healthz %d", code)
	}
	if code, body := get("/readyz"); code != 503 || !strings.Contains(body, "svc: starting") {
		t.Fatalf("readyz while starting: %d %q", code, body)
	}
	ready = nil
	if code, _ := get("/readyz"); code != 200 {
		t.Fatalf("readyz when ready: %d", code)
	}
	if code, body := get("/metrics"); code != 200 || !strings.Contains(body, "claimcheck_test_total 3") || !strings.Contains(body, "go_goroutines") {
		t.Fatalf("metrics: %d", code)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestNewLoggerRejectsBadSettings(t *testing.T) {
	if _, err := NewLogger(io.Discard, "loud", "text"); err == nil || !strings.Contains(err.Error(), "log.level") {
		t.Fatalf("bad level: %v", err)
	}
	if _, err := NewLogger(io.Discard, "info", "xml"); err == nil || !strings.Contains(err.Error(), "log.format") {
		t.Fatalf("bad format: %v", err)
	}
	if _, err := NewLogger(io.Discard, "debug", "json"); err != nil {
		t.Fatal(err)
	}
}

package telemetry

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestMetricsAreNamedRegisteredAndReusedOnRestart(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg, "svc")
	c := m.Counter("events_total", "Events.")
	v := m.CounterVec("decisions_total", "Decisions.", "decision")
	h := m.Histogram("seconds", "Time.", []float64{1, 2})
	hv := m.HistogramVec("batch", "Batch.", []float64{1}, "kind")
	if err := m.Err(); err != nil {
		t.Fatal(err)
	}
	c.Add(2)
	v.WithLabelValues("allow").Inc()
	h.Observe(1)
	hv.WithLabelValues("x").Observe(1)
	if n, err := testutil.GatherAndCount(reg); err != nil || n != 4 {
		t.Fatalf("registry holds %d metrics (%v), want 4", n, err)
	}
	if n, err := testutil.GatherAndCount(reg, "claimcheck_svc_events_total", "claimcheck_svc_decisions_total"); err != nil || n != 2 {
		t.Fatalf("the metrics are not under their claimcheck_svc_ names: %d found (%v)", n, err)
	}

	// The service restarts in the same process: its counter goes on.
	again := NewMetrics(reg, "svc")
	c2 := again.Counter("events_total", "Events.")
	if err := again.Err(); err != nil {
		t.Fatal(err)
	}
	c2.Inc()
	if got := testutil.ToFloat64(c); got != 3 {
		t.Fatalf("after the restart the counter reads %v, want 3", got)
	}

	// The same name with other labels is an error that names the metric.
	bad := NewMetrics(reg, "svc")
	bad.CounterVec("events_total", "Events.", "other")
	if err := bad.Err(); err == nil || !strings.Contains(err.Error(), "claimcheck_svc_events_total") {
		t.Fatalf("conflicting registration: %v", err)
	}
}

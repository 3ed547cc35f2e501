package telemetry

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics makes one service's metrics, named claimcheck_<service>_<name>,
// and registers each as it makes it, so a metric cannot be declared and
// left unregistered. A metric already registered under the same name and
// labels (a service restarted in the same process) is reused, so its
// counts go on. The first other registration error is kept for Err.
type Metrics struct {
	reg    prometheus.Registerer
	prefix string
	err    error
}

// NewMetrics makes the metrics of service on reg.
func NewMetrics(reg prometheus.Registerer, service string) *Metrics {
	return &Metrics{reg: reg, prefix: "claimcheck_" + service + "_"}
}

// Err is the first registration error, naming the metric.
func (m *Metrics) Err() error { return m.err }

// Counter makes a counter.
func (m *Metrics) Counter(name, help string) prometheus.Counter {
	return register(m, name, prometheus.NewCounter(prometheus.CounterOpts{Name: m.prefix + name, Help: help}))
}

// Gauge makes a gauge.
func (m *Metrics) Gauge(name, help string) prometheus.Gauge {
	return register(m, name, prometheus.NewGauge(prometheus.GaugeOpts{Name: m.prefix + name, Help: help}))
}

// CounterVec makes a counter with labels.
func (m *Metrics) CounterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return register(m, name, prometheus.NewCounterVec(prometheus.CounterOpts{Name: m.prefix + name, Help: help}, labels))
}

// Histogram makes a histogram with buckets.
func (m *Metrics) Histogram(name, help string, buckets []float64) prometheus.Histogram {
	return register(m, name, prometheus.NewHistogram(prometheus.HistogramOpts{Name: m.prefix + name, Help: help, Buckets: buckets}))
}

// HistogramVec makes a histogram with buckets and labels.
func (m *Metrics) HistogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	opts := prometheus.HistogramOpts{Name: m.prefix + name, Help: help, Buckets: buckets}
	return register(m, name, prometheus.NewHistogramVec(opts, labels))
}

func register[C prometheus.Collector](m *Metrics, name string, c C) C {
	err := m.reg.Register(c)
	var dup prometheus.AlreadyRegisteredError
	if errors.As(err, &dup) {
		if existing, ok := dup.ExistingCollector.(C); ok {
			return existing
		}
	}
	if err != nil && m.err == nil {
		m.err = fmt.Errorf("register metric %s: %w", m.prefix+name, err)
	}
	return c
}

// Package service holds what every claimcheck service is handed by the
// process that runs it (its own main, or `claimcheck up`): a NATS connection,
// a logger, a metrics registerer and a clock. Services never create these
// themselves, so one process can compose all four.
package service

import (
	"errors"
	"log/slog"
	"sync/atomic"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/claimcheck/claimcheck/pkg/clock"
)

// Settings are a service's dependencies.
type Settings struct {
	Conn    *nats.Conn
	Logger  *slog.Logger
	Metrics prometheus.Registerer
	Clock   clock.Clock
}

// ErrNoConn is returned by Check when no NATS connection was given.
var ErrNoConn = errors.New("service settings: no NATS connection")

// Check fills optional fields and reports a missing connection.
func (s Settings) Check() (Settings, error) {
	if s.Conn == nil {
		return s, ErrNoConn
	}
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	if s.Metrics == nil {
		s.Metrics = prometheus.NewRegistry()
	}
	if s.Clock == nil {
		s.Clock = clock.Real{}
	}
	return s, nil
}

// Readiness is a small ready/not-ready flag with a reason.
type Readiness struct {
	reason atomic.Pointer[string]
}

// NotReady marks the service not ready, with a reason.
func (r *Readiness) NotReady(reason string) { r.reason.Store(&reason) }

// SetReady marks the service ready.
func (r *Readiness) SetReady() { r.reason.Store(nil) }

// Err returns nil when ready.
func (r *Readiness) Err() error {
	if p := r.reason.Load(); p != nil {
		return errors.New(*p)
	}
	return nil
}

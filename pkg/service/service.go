// Package service holds what every claimcheck service is handed by the
// process that runs it (its own main, or `claimcheck up`): a NATS connection,
// a logger, a metrics registerer and a clock. Services never create these
// themselves, so one process can compose all four.
package service

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strconv"
	"sync/atomic"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/claimcheck/claimcheck/pkg/clock"
	"github.com/claimcheck/claimcheck/pkg/stream"
)

// Settings are a service's dependencies.
type Settings struct {
	Conn    *nats.Conn
	Logger  *slog.Logger
	Metrics prometheus.Registerer
	Clock   clock.Clock
	// Name is the name of the service's NATS identity (the name tag of its
	// credentials), which the subjects it publishes on carry; default: the
	// service's role.
	Name string
	// CheckStreams says that the service's NATS credentials may not create
	// or update streams (someone with admin credentials sets them up): the
	// service then only checks them, waiting until they are right.
	CheckStreams bool
}

// InstanceID is id, or when it is empty <hostname>-<pid>: the name of one
// running instance of a service, in its logs and its consumers' names.
func InstanceID(id string) string {
	if id != "" {
		return id
	}
	h, _ := os.Hostname()
	return h + "-" + strconv.Itoa(os.Getpid())
}

// ErrNoConn is returned by Check when no NATS connection was given.
var ErrNoConn = errors.New("service settings: no NATS connection")

// Check fills optional fields (role names the service, for the default
// Name) and reports a missing connection.
func (s Settings) Check(role string) (Settings, error) {
	if s.Conn == nil {
		return s, ErrNoConn
	}
	if s.Name == "" {
		s.Name = role
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

// Streams makes sure the streams, buckets and object stores exist as this
// claimcheck needs them, waiting while JetStream is not there yet: it
// creates or updates them, or with CheckStreams only checks them.
func (s Settings) Streams(ctx context.Context, js jetstream.JetStream, o stream.Options) error {
	if s.CheckStreams {
		return stream.CheckRetry(ctx, js, o, s.Logger)
	}
	return stream.EnsureRetry(ctx, js, o, s.Logger)
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

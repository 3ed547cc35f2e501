// Package rotator archives the ledger, enforces retention and rotates signing
// keys. This foundation version only runs the lifecycle (connect, ensure
// streams, report ready, stop); archival and rotation arrive in a later
// release (issue 5).
package rotator

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/service"
	"github.com/claimcheck/claimcheck/pkg/stream"
)

// Config tunes the rotator. It has no settings yet.
type Config struct {
	// Streams is the process-wide stream layout (set by the composer).
	Streams stream.Options `mapstructure:"-"`
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config { return Config{Streams: stream.DefaultOptions()} }

// Validate reports every problem.
func (c Config) Validate() error { return c.Streams.Validate() }

// Service is a running rotator.
type Service struct {
	cfg   Config
	set   service.Settings
	ready service.Readiness
}

// New checks the configuration and settings.
func New(cfg Config, set service.Settings) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	set, err := set.Check()
	if err != nil {
		return nil, err
	}
	s := &Service{cfg: cfg, set: set}
	s.ready.NotReady("starting")
	return s, nil
}

// Ready returns nil once the service runs.
func (s *Service) Ready() error { return s.ready.Err() }

// Run makes sure the streams exist, reports ready and waits for ctx to end.
func (s *Service) Run(ctx context.Context) error {
	js, err := jetstream.New(s.set.Conn)
	if err != nil {
		return fmt.Errorf("rotator: %w", err)
	}
	if err := stream.Ensure(ctx, js, s.cfg.Streams); err != nil {
		return fmt.Errorf("rotator: %w", err)
	}
	s.ready.SetReady()
	s.set.Logger.Info("rotator running (lifecycle only in this release)")
	<-ctx.Done()
	s.ready.NotReady("stopped")
	s.set.Logger.Info("rotator stopped")
	return nil
}

// Command gatekeeper runs claimcheck's gatekeeper service on its own (one container of a
// multi-host deployment). `claimcheck up` runs it in-process instead.
package main

import (
	"context"
	"os"

	"github.com/claimcheck/claimcheck/pkg/daemon"
	"github.com/claimcheck/claimcheck/pkg/service"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/services/gatekeeper"
)

func main() {
	os.Exit(daemon.Main(context.Background(), daemon.Spec[gatekeeper.Config]{
		Name:     "gatekeeper",
		Defaults: gatekeeper.DefaultConfig(),
		Prepare: func(c gatekeeper.Config, st stream.Options) (gatekeeper.Config, error) {
			c.Streams = st
			return c, c.Validate()
		},
		New: func(c gatekeeper.Config, set service.Settings) (daemon.Runner, error) { return gatekeeper.New(c, set) },
	}, os.Args[1:], os.Stderr))
}

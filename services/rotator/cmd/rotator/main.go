// Command rotator runs claimcheck's rotator service on its own (one container of a
// multi-host deployment). `claimcheck up` runs it in-process instead.
package main

import (
	"context"
	"os"

	"github.com/claimcheck/claimcheck/pkg/daemon"
	"github.com/claimcheck/claimcheck/pkg/service"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/services/rotator"
)

func main() {
	os.Exit(daemon.Main(context.Background(), daemon.Spec[rotator.Config]{
		Name:     "rotator",
		Defaults: rotator.DefaultConfig(),
		Prepare: func(c rotator.Config, st stream.Options) (rotator.Config, error) {
			c.Streams = st
			return c, c.Validate()
		},
		New: func(c rotator.Config, set service.Settings) (daemon.Runner, error) { return rotator.New(c, set) },
	}, os.Args[1:], os.Stderr))
}

// Command verifier runs claimcheck's verifier service on its own (one container of a
// multi-host deployment). `claimcheck up` runs it in-process instead.
package main

import (
	"context"
	"os"

	"github.com/claimcheck/claimcheck/pkg/daemon"
	"github.com/claimcheck/claimcheck/pkg/service"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/services/verifier"
)

func main() {
	os.Exit(daemon.Main(context.Background(), daemon.Spec[verifier.Config]{
		Name:     "verifier",
		Defaults: verifier.DefaultConfig(),
		Prepare: func(c verifier.Config, st stream.Options) (verifier.Config, error) {
			c.Streams = st
			return c, c.Validate()
		},
		New: func(c verifier.Config, set service.Settings) (daemon.Runner, error) { return verifier.New(c, set) },
	}, os.Args[1:], os.Stderr))
}

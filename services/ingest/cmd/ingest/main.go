// Command ingest runs claimcheck's ingest service on its own (one container of a
// multi-host deployment). `claimcheck up` runs it in-process instead.
package main

import (
	"context"
	"os"

	"github.com/claimcheck/claimcheck/pkg/daemon"
	"github.com/claimcheck/claimcheck/pkg/service"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/services/ingest"
)

func main() {
	os.Exit(daemon.Main(context.Background(), daemon.Spec[ingest.Config]{
		Name:     "ingest",
		Defaults: ingest.DefaultConfig(),
		Prepare: func(c ingest.Config, st stream.Options) (ingest.Config, error) {
			c.Streams = st
			return c, c.Validate()
		},
		New: func(c ingest.Config, set service.Settings) (daemon.Runner, error) { return ingest.New(c, set) },
	}, os.Args[1:], os.Stderr))
}

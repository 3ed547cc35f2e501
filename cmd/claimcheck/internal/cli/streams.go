package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/claimcheck/claimcheck/pkg/config"
	"github.com/claimcheck/claimcheck/pkg/identity"
	"github.com/claimcheck/claimcheck/pkg/stream"
)

func (a *app) streamsCommand() *cobra.Command {
	streams := &cobra.Command{Use: "streams", Short: "Set up claimcheck's JetStream streams and buckets", RunE: unknownSubcommand}
	ensure := &cobra.Command{
		Use:   "ensure",
		Short: "Create claimcheck's streams and buckets, or bring them to this version's configuration (admin)",
		Long: `ensure creates the streams, buckets and object store claimcheck needs, or updates
existing ones to this version's configuration (never deleting or purging anything),
and checks the ledger's safety settings. Services with credentials may not do this
themselves: they wait until it is done. It needs admin credentials
(claimcheck creds issue --role admin); claimcheck up does it at every start.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := config.SetDefaults(a.v, "streams", stream.DefaultOptions()); err != nil {
				return err
			}
			var o stream.Options
			if err := config.Decode(a.v, "streams", &o); err != nil {
				return &exitError{ExitError, fmt.Errorf("streams: %w", err)}
			}
			nc, js, err := a.connectAs(cmd.Context(), identity.RoleAdmin)
			if err != nil {
				return err
			}
			defer nc.Close()
			if err := stream.Ensure(cmd.Context(), js, o); err != nil {
				return &exitError{ExitError, err}
			}
			fmt.Fprintf(a.env.Stdout, "streams, buckets and object store are set up (%d partitions, %d replicas)\n",
				o.Partitions, o.Replicas)
			return nil
		},
	}
	streams.AddCommand(ensure)
	return streams
}

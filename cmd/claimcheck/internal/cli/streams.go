package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/spf13/cobra"

	"github.com/claimcheck/claimcheck/pkg/config"
	"github.com/claimcheck/claimcheck/pkg/identity"
	"github.com/claimcheck/claimcheck/pkg/stream"
)

func (a *app) streamsCommand() *cobra.Command {
	streams := &cobra.Command{Use: "streams", Short: "Set up claimcheck's JetStream streams and buckets", RunE: unknownSubcommand}
	var wait time.Duration
	ensure := &cobra.Command{
		Use:   "ensure",
		Short: "Create claimcheck's streams and buckets, or bring them to this version's configuration (admin)",
		Long: `ensure creates the streams, buckets and object store claimcheck needs, or updates
existing ones to this version's configuration (never deleting or purging anything),
and checks the ledger's safety settings. Services with credentials may not do this
themselves: they wait until it is done. It needs admin credentials
(claimcheck creds issue --role admin); claimcheck up does it at every start.

A cluster that has just formed (or an account just pushed to it) answers no
JetStream request until it has elected its leaders: ensure waits up to --wait
for it, saying on stderr why, and gives up with the last error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := a.streamOptions()
			if err != nil {
				return err
			}
			nc, js, err := a.connectAs(cmd.Context(), identity.RoleAdmin)
			if err != nil {
				return err
			}
			defer nc.Close()
			if wait <= 0 {
				err = stream.Ensure(cmd.Context(), js, o)
			} else {
				ctx, cancel := context.WithTimeout(cmd.Context(), wait)
				defer cancel()
				log := slog.New(slog.NewTextHandler(a.env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
				if err = stream.EnsureRetry(ctx, js, o, log); err != nil && ctx.Err() != nil && cmd.Context().Err() == nil {
					err = fmt.Errorf("JetStream was not ready within --wait %s; the last attempt: %w", wait, lastOf(err))
				}
			}
			if err != nil {
				return &exitError{ExitError, err}
			}
			fmt.Fprintf(a.env.Stdout, "streams, buckets and object store are set up (%d partitions, %d replicas)\n",
				o.Partitions, o.Replicas)
			return nil
		},
	}
	ensure.Flags().DurationVar(&wait, "wait", time.Minute, "how long to wait for JetStream to be ready (0: try once)")
	streams.AddCommand(ensure, a.streamsStatusCommand())
	return streams
}

func (a *app) streamsStatusCommand() *cobra.Command {
	var (
		asJSON bool
		per    time.Duration
	)
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show whether every stream and bucket has a leader and current replicas",
		Long: `status asks the cluster about each of claimcheck's streams, buckets and object
store at once: its leader, its replicas as the leader sees them, and its message
count. It exits 1 when any has no leader, does not answer within --timeout (a
raft group without a leader does not answer at all), or has a replica that is
offline or behind.

nats-server's /healthz counts a raft group with no leader as current once its
log is applied, so check this too before taking down the next node of a rolling
restart: after a double failure a group can stay without a leader while every
node's /healthz answers 200 (docs/deploy.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := a.streamOptions()
			if err != nil {
				return err
			}
			nc, js, err := a.connectAs(cmd.Context(), identity.RoleOperator)
			if err != nil {
				return err
			}
			defer nc.Close()
			hs := stream.Status(cmd.Context(), js, stream.Names(o), per)
			bad := 0
			for _, h := range hs {
				if len(h.Problems) > 0 {
					bad++
				}
			}
			if asJSON {
				b, err := json.Marshal(hs)
				if err != nil {
					return err
				}
				fmt.Fprintln(a.env.Stdout, string(b))
			} else {
				printStreamStatus(a.env.Stdout, hs)
			}
			if bad > 0 {
				return &exitError{ExitError, fmt.Errorf("%d of %d streams cannot take writes and reads now", bad, len(hs))}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON array, a stream per element")
	cmd.Flags().DurationVar(&per, "timeout", 3*time.Second, "how long each stream's answer may take")
	return cmd
}

func printStreamStatus(w io.Writer, hs []stream.Health) {
	for _, h := range hs {
		state := "ok"
		if len(h.Problems) > 0 {
			state = strings.Join(h.Problems, "; ")
		}
		leader := h.Leader
		if leader == "" {
			leader = "-"
		}
		var peers []string
		for _, p := range h.Peers {
			peers = append(peers, fmt.Sprintf("%s current=%t", p.Name, p.Current))
		}
		fmt.Fprintf(w, "%-16s R%d  leader %-10s %8d msgs  %s  %s\n", h.Name, h.Replicas, leader, h.Msgs, strings.Join(peers, ", "), state)
	}
}

// streamOptions are the streams section of the configuration.
func (a *app) streamOptions() (stream.Options, error) {
	var o stream.Options
	if err := config.SetDefaults(a.v, "streams", stream.DefaultOptions()); err != nil {
		return o, err
	}
	if err := config.Decode(a.v, "streams", &o); err != nil {
		return o, &exitError{ExitError, fmt.Errorf("streams: %w", err)}
	}
	return o, nil
}

// lastOf is the last error an errors.Join holds (EnsureRetry joins the
// context's error and the last attempt's), or err itself.
func lastOf(err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		if es := j.Unwrap(); len(es) > 0 {
			return es[len(es)-1]
		}
	}
	return err
}

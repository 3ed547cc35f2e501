package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/claimcheck/claimcheck/pkg/transparency"
)

// witnessCommand is `claimcheck witness`: a transparency log witness
// (c2sp.org/tlog-witness) for the ledger's Merkle tree, meant to run on
// another host, by another operator, with its own disk.
func (a *app) witnessCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "witness",
		Short: "Run a witness that cosigns the ledger's checkpoints only while they grow consistently",
		Long: `A witness keeps, for each log it trusts, the checkpoint it cosigned last, and cosigns a
new one only when a consistency proof shows it extends that one: a log rolled back,
cut short, rewritten or showing two histories cannot get its cosignature. Run it on
another host, by another operator, with its own disk; give the log its key
(claimcheck witness key) in rotator.witnesses, and it the log's keys
(claimcheck ledger checkpoint --keys).`,
	}
	cmd.AddCommand(a.witnessServeCommand(), a.witnessKeyCommand())
	return cmd
}

type witnessFlags struct {
	dir, name string
}

func (f *witnessFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.dir, "dir", "", "the witness's directory: its key and its state (required)")
	cmd.Flags().StringVar(&f.name, "name", "", "the witness's key name, used when its key is made (default claimcheck.witness/<host name>)")
}

func (f *witnessFlags) check() error {
	if f.dir == "" {
		return &exitError{ExitError, errors.New("--dir: the witness's directory is required")}
	}
	if f.name == "" {
		h, _ := os.Hostname()
		f.name = "claimcheck.witness/" + strings.ToLower(strings.ReplaceAll(h, " ", "-"))
	}
	return nil
}

// witnessKeyCommand is `witness key`: the witness's cosignature/v1
// verifier key, its key made on first use.
func (a *app) witnessKeyCommand() *cobra.Command {
	var f witnessFlags
	cmd := &cobra.Command{
		Use:   "key --dir D [--name N]",
		Short: "Print the witness's verifier key (cosignature/v1), making its key on first use",
		Args:  cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			if err := f.check(); err != nil {
				return err
			}
			w, err := transparency.OpenWitness(f.dir, f.name, nil, slog.New(slog.DiscardHandler))
			if err != nil {
				return &exitError{ExitError, err}
			}
			fmt.Fprintln(a.env.Stdout, w.VerifierKey())
			return nil
		},
	}
	f.add(cmd)
	return cmd
}

// witnessServeCommand is `witness serve`.
func (a *app) witnessServeCommand() *cobra.Command {
	var f witnessFlags
	var listen, logsFile string
	var logs []string
	cmd := &cobra.Command{
		Use:   "serve --dir D --listen ADDR (--log 'ORIGIN KEY' ... | --logs FILE)",
		Short: "Serve POST /add-checkpoint for the logs given",
		Long: `serve answers c2sp.org/tlog-witness add-checkpoint requests (and GET
/checkpoint?origin=O, its latest cosigned checkpoint of a log, for monitors and
claimcheck ledger verify --witness). --log takes a log's origin and one of its note
verifier keys, space-separated; --logs a file of "log <origin> <key>" lines, as
claimcheck ledger checkpoint --keys prints them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.check(); err != nil {
				return err
			}
			trusted, err := witnessLogs(logs, logsFile)
			if err != nil {
				return &exitError{ExitError, err}
			}
			logger := slog.New(slog.NewTextHandler(a.env.Stderr, nil))
			w, err := transparency.OpenWitness(f.dir, f.name, trusted, logger)
			if err != nil {
				return &exitError{ExitError, err}
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return &exitError{ExitError, fmt.Errorf("--listen %s: %w", listen, err)}
			}
			fmt.Fprintf(a.env.Stdout, "witness %s listening on http://%s (key %s; %d log(s))\n", w.Name(), ln.Addr(), w.VerifierKey(),
				len(trusted))
			return serveWitness(cmd.Context(), ln, w)
		},
	}
	f.add(cmd)
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:7380", "address to listen on")
	cmd.Flags().StringArrayVar(&logs, "log", nil, "a log to witness: its origin and a verifier key, space-separated (repeat)")
	cmd.Flags().StringVar(&logsFile, "logs", "", `a file of "log <origin> <key>" lines`)
	return cmd
}

// serveWitness serves w on ln until ctx ends.
func serveWitness(ctx context.Context, ln net.Listener, w *transparency.Witness) error {
	srv := &http.Server{Handler: w.Handler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		return srv.Shutdown(sctx)
	}
}

// witnessLogs reads the logs a witness trusts: origin → verifier keys.
func witnessLogs(flags []string, file string) (map[string][]string, error) {
	out := map[string][]string{}
	add := func(where, origin, key string) error {
		if origin == "" || key == "" {
			return fmt.Errorf("%s: want an origin and a key", where)
		}
		out[origin] = append(out[origin], key)
		return nil
	}
	for _, l := range flags {
		f := strings.Fields(l)
		if len(f) != 2 {
			return nil, fmt.Errorf("--log %q: want 'ORIGIN KEY'", l)
		}
		if err := add("--log", f[0], f[1]); err != nil {
			return nil, err
		}
	}
	if file != "" {
		fh, err := os.Open(filepath.Clean(file))
		if err != nil {
			return nil, fmt.Errorf("--logs: %w", err)
		}
		defer fh.Close() //nolint:errcheck // read-only
		if err := transparency.ParseLogs(fh, out); err != nil {
			return nil, fmt.Errorf("--logs %s: %w", file, err)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no log to witness: give --log or --logs (claimcheck ledger checkpoint --keys prints them)")
	}
	return out, nil
}

// Package cli is the claimcheck command: `up` (everything in one process on an
// embedded NATS), `hooks install`, `ledger sessions|show|verify`, `claim`,
// `keys list|rotate|revoke|export`, `attest export|verify` and
// `archive verify|restore`.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/claimcheck/claimcheck/pkg/config"
	"github.com/claimcheck/claimcheck/pkg/daemon"
)

// Version is set at build time.
var Version = "dev"

// Exit codes.
const (
	ExitOK    = 0
	ExitFault = 1 // a check found a problem (ledger verify)
	ExitError = 2 // usage, configuration or connection error
)

// exitError carries an exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

// Env is what the commands get from the process. Getenv supplies HOME and
// XDG_* paths; CLAIMCHECK_* configuration is read from the process
// environment by viper.
type Env struct {
	Getenv func(string) string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// app holds the process's single viper instance and shared state.
type app struct {
	env     Env
	v       *viper.Viper
	cfgFile string
}

// Main runs the claimcheck command and returns its exit code.
func Main(ctx context.Context, args []string, env Env) int {
	a := &app{env: env, v: config.New()}
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		// A nil err means the command already said everything (a verdict).
		if ee.err != nil {
			fmt.Fprintf(env.Stderr, "claimcheck: %v\n", ee.err)
		}
		return ee.code
	}
	fmt.Fprintf(env.Stderr, "claimcheck: %v\n", err)
	return ExitError
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "claimcheck",
		Short:         "Evidence gate and tamper-evident audit for AI coding agents",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := config.SetDefaults(a.v, "", daemon.DefaultCommon()); err != nil {
				return err
			}
			return config.ReadFile(a.v, a.cfgFile)
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&a.cfgFile, "config", "", "configuration file (YAML, JSON or TOML); env CLAIMCHECK_* and flags override it")
	pf.String("nats-url", "", "NATS server URL(s) (env CLAIMCHECK_NATS_URL; default nats://127.0.0.1:4222)")
	pf.String("nats-creds", "", "NATS credentials: a .creds file or an nkey seed file (env CLAIMCHECK_NATS_CREDS)")
	pf.String("log-level", "", "debug, info, warn or error (env CLAIMCHECK_LOG_LEVEL)")
	pf.String("log-format", "", "text or json (env CLAIMCHECK_LOG_FORMAT)")
	_ = a.v.BindPFlag("nats.url", pf.Lookup("nats-url"))
	_ = a.v.BindPFlag("nats.creds", pf.Lookup("nats-creds"))
	_ = a.v.BindPFlag("log.level", pf.Lookup("log-level"))
	_ = a.v.BindPFlag("log.format", pf.Lookup("log-format"))
	root.AddCommand(a.upCommand(), a.hooksCommand(), a.ledgerCommand(), a.claimCommand(), a.keysCommand(), a.attestCommand(), a.gateCommand(), a.archiveCommand())
	return root
}

// connect opens a client connection for the short-lived commands.
func (a *app) connect(ctx context.Context) (*nats.Conn, jetstream.JetStream, error) {
	url := a.v.GetString("nats.url")
	opts := []nats.Option{nats.Name("claimcheck-cli"), nats.Timeout(5 * time.Second)}
	if creds := a.v.GetString("nats.creds"); creds != "" {
		opt, err := daemon.CredsOption(creds)
		if err != nil {
			return nil, nil, &exitError{ExitError, err}
		}
		opts = append(opts, opt)
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, nil, &exitError{ExitError, fmt.Errorf("connect to NATS at %s: %w (is `claimcheck up` running? set --nats-url or CLAIMCHECK_NATS_URL)", url, err)}
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, &exitError{ExitError, err}
	}
	return nc, js, nil
}

// dataDir is the configured data_dir (CLAIMCHECK_DATA_DIR), else the default.
func (a *app) dataDir() string {
	if d := a.v.GetString("data_dir"); d != "" {
		return d
	}
	return defaultDataDir(a.env.Getenv)
}

// defaultDataDir is $XDG_DATA_HOME/claimcheck or ~/.local/share/claimcheck.
func defaultDataDir(getenv func(string) string) string {
	if x := getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "claimcheck")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "share", "claimcheck")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "share", "claimcheck")
	}
	return "claimcheck-data"
}

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
	"github.com/claimcheck/claimcheck/pkg/identity"
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
	pf.String("data-dir", "",
		"claimcheck's data directory: up stores there, and the other commands find up's credentials (creds/) and NATS authority (auth/) there (env CLAIMCHECK_DATA_DIR; default $XDG_DATA_HOME/claimcheck or ~/.local/share/claimcheck)")
	pf.String("log-level", "", "debug, info, warn or error (env CLAIMCHECK_LOG_LEVEL)")
	pf.String("log-format", "", "text or json (env CLAIMCHECK_LOG_FORMAT)")
	_ = a.v.BindPFlag("nats.url", pf.Lookup("nats-url"))
	_ = a.v.BindPFlag("nats.creds", pf.Lookup("nats-creds"))
	_ = a.v.BindPFlag("data_dir", pf.Lookup("data-dir"))
	_ = a.v.BindPFlag("log.level", pf.Lookup("log-level"))
	_ = a.v.BindPFlag("log.format", pf.Lookup("log-format"))
	root.AddCommand(a.upCommand(), a.hooksCommand(), a.ledgerCommand(), a.claimCommand(), a.keysCommand(), a.attestCommand(),
		a.gateCommand(), a.archiveCommand(), a.exportCommand(), a.complianceCommand(),
		a.credsCommand(), a.streamsCommand(), a.sessionCommand(), a.hostsCommand(), a.witnessCommand())
	// A command group refuses a subcommand it does not know (exit 2),
	// rather than printing its help and succeeding.
	for _, c := range root.Commands() {
		if c.HasSubCommands() && c.RunE == nil && c.Run == nil {
			c.RunE = unknownSubcommand
		}
	}
	return root
}

// creds is the credentials file the command uses: the configured one
// (--nats-creds, CLAIMCHECK_NATS_CREDS), else the one `claimcheck up` wrote
// for role in its data directory, if any.
func (a *app) creds(role string) string {
	if c := a.v.GetString("nats.creds"); c != "" {
		return c
	}
	return a.defaultCreds(role)
}

// identity is who the credentials say this command (as role) runs as: ok
// is false without credentials, or with credentials that name no
// claimcheck role (a NATS set up by its operator).
func (a *app) identity(role string) (i identity.Identity, ok bool, err error) {
	creds := a.creds(role)
	if creds == "" {
		return i, false, nil
	}
	i, err = identity.ReadCreds(creds)
	if errors.Is(err, identity.ErrNotCredentials) {
		return i, false, nil
	}
	return i, err == nil, err
}

// connect opens a client connection for the short-lived commands, as the
// operator unless credentials are configured.
func (a *app) connect(ctx context.Context) (*nats.Conn, jetstream.JetStream, error) {
	return a.connectAs(ctx, identity.RoleOperator)
}

// connectAs is connect for a command whose default identity is role.
func (a *app) connectAs(_ context.Context, role string) (*nats.Conn, jetstream.JetStream, error) {
	url := a.v.GetString("nats.url")
	opts := []nats.Option{nats.Name("claimcheck-cli"), nats.Timeout(5 * time.Second)}
	if role == identity.RoleAdmin && a.v.GetString("nats.creds") == "" {
		// Nobody keeps admin credentials in a file: whoever can read the
		// authority may act as admin, with an identity made for this run.
		if au, err := a.authority(); err == nil {
			c, err := au.Issue(identity.Request{Role: identity.RoleAdmin, Expires: time.Hour})
			if err != nil {
				return nil, nil, &exitError{ExitError, err}
			}
			opts = append(opts, c.Option())
		}
	} else if creds := a.creds(role); creds != "" {
		opt, err := daemon.CredsOption(creds)
		if err != nil {
			return nil, nil, &exitError{ExitError, err}
		}
		opts = append(opts, opt)
		// Replies come under the identity's own inbox: the only place its
		// credentials may receive them.
		if i, ok, _ := a.identity(role); ok {
			opts = append(opts, nats.CustomInboxPrefix(i.Inbox()))
		}
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		hint := "is `claimcheck up` running? set --nats-url or CLAIMCHECK_NATS_URL"
		if errors.Is(err, nats.ErrAuthorization) {
			hint = "NATS refused these credentials: pass --nats-creds (or CLAIMCHECK_NATS_CREDS) with credentials `claimcheck up` wrote under <data dir>/creds, or `claimcheck creds issue` made"
		}
		return nil, nil, &exitError{ExitError, fmt.Errorf("connect to NATS at %s: %w (%s)", url, err, hint)}
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

// Package daemon runs one claimcheck service as its own process (the
// container images of a multi-host deployment): configuration through one
// viper instance (defaults → --config file → CLAIMCHECK_* environment →
// flags), a NATS connection that reconnects for ever, /healthz /readyz
// /metrics, and a clean stop on SIGINT or SIGTERM.
package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/claimcheck/claimcheck/pkg/clock"
	"github.com/claimcheck/claimcheck/pkg/config"
	"github.com/claimcheck/claimcheck/pkg/identity"
	"github.com/claimcheck/claimcheck/pkg/service"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/telemetry"
)

// Runner is a service.
type Runner interface {
	Run(ctx context.Context) error
	Ready() error
}

// Spec describes a service binary.
type Spec[C any] struct {
	Name     string // binary and config key ("ingest")
	Defaults C
	// Prepare merges the process-wide stream layout into the service's
	// configuration and validates it; it runs before connecting, so a bad
	// configuration fails at once.
	Prepare func(cfg C, streams stream.Options) (C, error)
	// New builds the service from its prepared configuration.
	New func(cfg C, set service.Settings) (Runner, error)
}

// Common holds the settings every service binary shares.
type Common struct {
	NATS       NATS           `mapstructure:"nats"`
	HTTPListen string         `mapstructure:"http_listen"`
	Log        Log            `mapstructure:"log"`
	Streams    stream.Options `mapstructure:"streams"`
}

// NATS locates the server and says how to authenticate.
type NATS struct {
	URL string `mapstructure:"url"`
	// Creds is a NATS credentials file (user JWT and nkey seed) or an nkey
	// seed file; empty for none (user/password or a token go in the URL).
	Creds string `mapstructure:"creds"`
}

// Log configures logging.
type Log struct {
	Level  string `mapstructure:"level"`
	Format string `mapstructure:"format"`
}

// DefaultCommon returns the shared defaults.
func DefaultCommon() Common {
	return Common{
		NATS:       NATS{URL: "nats://127.0.0.1:4222"},
		HTTPListen: "127.0.0.1:9090",
		Log:        Log{Level: "info", Format: "text"},
		Streams:    stream.DefaultOptions(),
	}
}

// Main runs the service described by spec and returns the exit code.
func Main[C any](ctx context.Context, spec Spec[C], args []string, stderr io.Writer) int {
	if err := run(ctx, spec, args, stderr); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "%s: %v\n", spec.Name, err)
		return 1
	}
	return 0
}

func run[C any](ctx context.Context, spec Spec[C], args []string, stderr io.Writer) error {
	v := config.New()
	fs := pflag.NewFlagSet(spec.Name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgFile := fs.String("config", "", "configuration file (YAML, JSON or TOML)")
	fs.String("nats-url", "", "NATS server URL(s) (env CLAIMCHECK_NATS_URL)")
	fs.String("nats-creds", "", "NATS credentials: a .creds file or an nkey seed file (env CLAIMCHECK_NATS_CREDS)")
	fs.String("http-listen", "",
		"address for /healthz, /readyz and /metrics; empty disables (env CLAIMCHECK_HTTP_LISTEN; default 127.0.0.1:9090)")
	fs.String("log-level", "", "debug, info, warn or error")
	fs.String("log-format", "", "text or json")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := config.BindFlags(v, fs,
		map[string]string{"nats-url": "nats.url", "nats-creds": "nats.creds", "http-listen": "http_listen", "log-level": "log.level",
			"log-format": "log.format"}); err != nil {
		return err
	}
	if err := config.SetDefaults(v, "", DefaultCommon()); err != nil {
		return err
	}
	if err := config.SetDefaults(v, spec.Name, spec.Defaults); err != nil {
		return err
	}
	if err := config.ReadFile(v, *cfgFile); err != nil {
		return err
	}
	var common Common
	svcCfg := spec.Defaults
	if err := decodeAll(v, spec.Name, &common, &svcCfg); err != nil {
		return err
	}
	log, err := telemetry.NewLogger(stderr, common.Log.Level, common.Log.Format)
	if err != nil {
		return err
	}
	if err := common.Streams.Validate(); err != nil {
		return err
	}
	if svcCfg, err = spec.Prepare(svcCfg, common.Streams); err != nil {
		return err
	}
	log = log.With(slog.Any("service", spec.Name))
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	set := service.Settings{Logger: log, Clock: clock.Real{}}
	if p := os.Getenv(clock.SkewFileEnv); p != "" {
		set.Clock = clock.NewFileSkew(ctx, p, 50*time.Millisecond)
		log.WarnContext(ctx, "this process's clock is moved by the offset in a file (fault-injection tests only)",
			slog.String("env", clock.SkewFileEnv), slog.String("file", p))
	}
	if common.NATS.Creds != "" {
		// With credentials the service is one identity among others: it
		// may not create or change streams (an admin sets them up), and
		// its subjects carry its identity's name.
		set.CheckStreams = true
		i, err := identity.ReadCreds(common.NATS.Creds)
		switch {
		case err == nil && i.Role != spec.Name:
			return fmt.Errorf("nats credentials %s are of role %s; the %s service needs its own (claimcheck creds issue --role %s)",
				common.NATS.Creds, i.Role, spec.Name, spec.Name)
		case err == nil:
			set.Name = i.Name
		case !errors.Is(err, identity.ErrNotCredentials):
			return err
		}
	}
	nc, err := Connect(ctx, common.NATS, spec.Name, log)
	if err != nil {
		return err
	}
	defer nc.Close()
	if set.Clock, err = serverClock(ctx, nc, set.Clock, log); err != nil {
		return err
	}
	reg := telemetry.NewRegistry()
	set.Conn, set.Metrics = nc, reg
	svc, err := spec.New(svcCfg, set)
	if err != nil {
		return err
	}
	health := telemetry.NewHealth()
	health.Add(spec.Name, svc.Ready)
	health.Add("nats", func() error {
		if !nc.IsConnected() {
			return errors.New("not connected")
		}
		return nil
	})
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	httpErr := make(chan error, 1)
	go func() {
		if common.HTTPListen == "" { // disabled
			httpErr <- nil
			return
		}
		httpErr <- telemetry.Serve(runCtx, common.HTTPListen, telemetry.Handler(reg, health), func(a net.Addr) {
			log.InfoContext(ctx, "http listening", slog.String("addr", a.String()))
		})
	}()
	err = svc.Run(runCtx)
	cancel()
	if herr := <-httpErr; err == nil && herr != nil {
		err = herr
	}
	_ = nc.Drain()
	return err
}

// serverClock is the clock a standalone service runs on: the NATS server's
// time (clock.Server), so that the signatures of a fleet's services and
// the rotator's key windows agree however far the hosts' clocks drift or
// step. It waits up to ServerClockWait for the first reading; a server that
// does not answer by then leaves the service on the local clock until it
// does, with a warning.
func serverClock(ctx context.Context, nc *nats.Conn, local clock.Clock, log *slog.Logger) (clock.Clock, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	c := clock.NewServer(ctx, stream.ServerTime(js), local, 10*time.Second, log)
	t := time.NewTimer(ServerClockWait)
	defer t.Stop()
	select {
	case <-c.Ready():
	case <-ctx.Done():
	case <-t.C:
		log.WarnContext(ctx, "the NATS server's time is not known yet; this host's clock dates what is signed until it is",
			slog.Duration("waited", ServerClockWait))
	}
	return c, nil
}

// ServerClockWait is how long a service waits at start for the NATS
// server's time.
var ServerClockWait = 5 * time.Second

// TopLevelKeys are the configuration keys any claimcheck process accepts at
// the top of a file; a shared file may configure every service.
var TopLevelKeys = map[string]bool{
	"nats": true, "http_listen": true, "log": true, "streams": true,
	"ingest": true, "verifier": true, "gatekeeper": true, "rotator": true,
	"data_dir": true, "listen": true, "allow_remote": true, "hook": true, "services": true,
	"store_key_file": true, "witness": true,
}

// decodeAll decodes the shared keys and the service's own subtree strictly;
// other services' subtrees may appear in a shared file and are ignored.
func decodeAll[C any](v *viper.Viper, name string, common *Common, svc *C) error {
	for k := range v.AllSettings() {
		if !TopLevelKeys[k] {
			return fmt.Errorf("configuration: unknown key %q", k)
		}
	}
	for key, out := range map[string]any{"nats": &common.NATS, "log": &common.Log, "streams": &common.Streams, name: svc} {
		if err := config.Decode(v, key, out); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
	}
	common.HTTPListen = v.GetString("http_listen")
	return nil
}

// CredsOption turns a credentials file into the nats.go option that
// authenticates with it: a .creds file (user JWT and seed, as nsc writes
// them) or a bare nkey seed.
func CredsOption(path string) (nats.Option, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("nats credentials: %w", err)
	}
	defer clear(raw)
	if bytes.Contains(raw, []byte("BEGIN NATS USER JWT")) {
		return nats.UserCredentials(path), nil
	}
	opt, err := nats.NkeyOptionFromSeed(path)
	if err != nil {
		return nil, fmt.Errorf("nats credentials %s: neither a .creds file nor an nkey seed: %w", path, err)
	}
	return opt, nil
}

// Connect connects to NATS (reconnecting for ever afterwards) and logs
// connection changes.
func Connect(ctx context.Context, n NATS, name string, log *slog.Logger) (*nats.Conn, error) {
	url := n.URL
	opts := []nats.Option{
		nats.Name("claimcheck-" + name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.RetryOnFailedConnect(false),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.WarnContext(ctx, "nats disconnected", slog.Any("err", err))
			}
		}),
		nats.ReconnectHandler(func(c *nats.Conn) {
			log.InfoContext(ctx, "nats reconnected", slog.String("url", c.ConnectedUrlRedacted()))
		}),
	}
	if n.Creds != "" {
		opt, err := CredsOption(n.Creds)
		if err != nil {
			return nil, err
		}
		opts = append(opts, opt)
		if i, err := identity.ReadCreds(n.Creds); err == nil {
			opts = append(opts, nats.CustomInboxPrefix(i.Inbox()))
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		nc, err := nats.Connect(url, opts...)
		if err == nil {
			log.InfoContext(ctx, "nats connected", slog.String("url", nc.ConnectedUrlRedacted()))
			return nc, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("connect to NATS at %s: %w", url, err)
		}
		log.WarnContext(ctx, "nats not reachable yet, retrying", slog.Any("err", err))
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

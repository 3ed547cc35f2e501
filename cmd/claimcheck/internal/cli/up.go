package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/oklog/run"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/claimcheck/claimcheck/pkg/archive"
	"github.com/claimcheck/claimcheck/pkg/clock"
	"github.com/claimcheck/claimcheck/pkg/config"
	"github.com/claimcheck/claimcheck/pkg/daemon"
	"github.com/claimcheck/claimcheck/pkg/embedded"
	"github.com/claimcheck/claimcheck/pkg/identity"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/service"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/telemetry"
	"github.com/claimcheck/claimcheck/services/gatekeeper"
	"github.com/claimcheck/claimcheck/services/ingest"
	"github.com/claimcheck/claimcheck/services/rotator"
	"github.com/claimcheck/claimcheck/services/verifier"
)

// upConfig is everything `claimcheck up` runs.
type upConfig struct {
	NATS        daemon.NATS       `mapstructure:"nats"` // accepted for shared files; up serves NATS itself
	DataDir     string            `mapstructure:"data_dir"`
	Listen      string            `mapstructure:"listen"`
	AllowRemote bool              `mapstructure:"allow_remote"`
	HTTPListen  string            `mapstructure:"http_listen"`
	Services    []string          `mapstructure:"services"`
	Log         daemon.Log        `mapstructure:"log"`
	Streams     stream.Options    `mapstructure:"streams"`
	Ingest      ingest.Config     `mapstructure:"ingest"`
	Verifier    verifier.Config   `mapstructure:"verifier"`
	Gatekeeper  gatekeeper.Config `mapstructure:"gatekeeper"`
	Rotator     rotator.Config    `mapstructure:"rotator"`
	Witness     upWitness         `mapstructure:"witness"`
	// StoreKeyFile holds the key JetStream encrypts its store with
	// (default <data_dir>/auth/store.key, created on first start).
	StoreKeyFile string `mapstructure:"store_key_file"`
}

func (a *app) upCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Run claimcheck on one machine: embedded NATS with JetStream and all four services",
		Long: `up starts an embedded NATS server (JetStream, fsync before every acknowledgement,
encrypted at rest, loopback only unless --allow-remote) storing under --data-dir, and
runs ingest, verifier, gatekeeper and rotator in this process, each with a NATS
identity that may do only what its role needs. Every client needs NATS credentials:
on first start up creates the NATS authority (operator, accounts, role signing keys)
in <data-dir>/auth, and it writes <data-dir>/creds/hook.creds (this host's hook
identity, for claimcheck-hook and claimcheck claim) and <data-dir>/creds/operator.creds
(for the other commands). A data directory of a claimcheck without authentication is
moved into the claimcheck account and encrypted at its first start. It prints the
NATS URL on a line of its own as soon as NATS is ready, then the credentials' paths,
then what to do next. SIGINT or SIGTERM stops it cleanly.`,
		Args: cobra.NoArgs,
		RunE: a.runUp,
	}
	f := cmd.Flags()
	f.String("listen", "", "NATS client address host:port; port 0 picks a free one (default 127.0.0.1:4222)")
	f.Bool("allow-remote", false, "allow a non-loopback --listen address (the embedded NATS requires NATS credentials but speaks no TLS)")
	f.String("store-key-file", "",
		"file holding the key JetStream encrypts its store with (default <data-dir>/auth/store.key, created on first start)")
	f.String("http-listen", "", "address for /healthz, /readyz and /metrics; empty disables (default 127.0.0.1:0, a free port)")
	f.StringSlice("services", nil,
		"services to run in this process (default ingest,verifier,gatekeeper,rotator); run the others as their own binaries")
	for flag, key := range map[string]string{"listen": "listen", "allow-remote": "allow_remote",
		"http-listen": "http_listen", "services": "services",
		"store-key-file": "store_key_file"} {
		_ = a.v.BindPFlag(key, f.Lookup(flag))
	}
	return cmd
}

func (a *app) upDefaults() upConfig {
	return upConfig{
		DataDir:    defaultDataDir(a.env.Getenv),
		Listen:     "127.0.0.1:4222",
		HTTPListen: "127.0.0.1:0",
		Services:   slices.Clone(allServices), // decoding --services writes into this array
		Log:        daemon.Log{Level: "info", Format: "text"},
		Streams:    stream.DefaultOptions(),
		Ingest:     ingest.DefaultConfig(),
		Verifier:   verifier.DefaultConfig(),
		Gatekeeper: gatekeeper.DefaultConfig(),
		Rotator:    rotator.DefaultConfig(),
		Witness:    upWitness{Enabled: true, Listen: "127.0.0.1:0"},
	}
}

func (a *app) loadUp() (upConfig, error) {
	cfg := a.upDefaults()
	if err := config.SetDefaults(a.v, "", cfg); err != nil {
		return cfg, err
	}
	for k := range a.v.AllSettings() {
		if !daemon.TopLevelKeys[k] {
			return cfg, fmt.Errorf("configuration: unknown key %q", k)
		}
	}
	if err := config.Decode(a.v, "", &cfg); err != nil {
		return cfg, err
	}
	if cfg.Verifier.KeyDir == "" {
		cfg.Verifier.KeyDir = filepath.Join(cfg.DataDir, "keys")
	}
	if cfg.Gatekeeper.KeyDir == "" {
		cfg.Gatekeeper.KeyDir = cfg.Verifier.KeyDir
	}
	if cfg.Gatekeeper.PolicyFile == "" {
		// One claim policy: the gate reads the verifier's scopes.
		cfg.Gatekeeper.PolicyFile = cfg.Verifier.PolicyFile
	}
	if cfg.Rotator.KeyDir == "" {
		cfg.Rotator.KeyDir = cfg.Verifier.KeyDir
	}
	if cfg.Rotator.ArchiveURL == "" {
		cfg.Rotator.ArchiveURL = archive.DefaultURL(cfg.DataDir)
	}
	// The agent must not write claimcheck's own data.
	cfg.Gatekeeper.ProtectedPaths = append(cfg.Gatekeeper.ProtectedPaths, cfg.DataDir)
	if hd := hookStateDir(a.env.Getenv); hd != "" {
		cfg.Gatekeeper.ProtectedPaths = append(cfg.Gatekeeper.ProtectedPaths, hd)
	}
	// Nor change its binaries, its configuration or the agent's hooks.
	pc := a.protectedConfig()
	cfg.Gatekeeper.HookBinaries = append(cfg.Gatekeeper.HookBinaries, pc.hooks...)
	cfg.Gatekeeper.ConfigPaths = append(cfg.Gatekeeper.ConfigPaths, pc.files...)
	for _, o := range []*stream.Options{&cfg.Ingest.Streams, &cfg.Verifier.Streams, &cfg.Gatekeeper.Streams, &cfg.Rotator.Streams} {
		*o = cfg.Streams
	}
	var errs []error
	seen := map[string]bool{}
	for _, s := range cfg.Services {
		if !slices.Contains(allServices, s) || seen[s] {
			errs = append(errs, fmt.Errorf("services: %q is not one of %s (or is listed twice)", s, strings.Join(allServices, ", ")))
		}
		seen[s] = true
	}
	for _, err := range []error{cfg.Ingest.Validate(), cfg.Verifier.Validate(), cfg.Gatekeeper.Validate(), cfg.Rotator.Validate()} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return cfg, errors.Join(errs...)
}

// allServices is what up runs by default, in start order.
var allServices = []string{"ingest", "verifier", "gatekeeper", "rotator"}

type runnable interface {
	Run(ctx context.Context) error
	Ready() error
}

func (a *app) runUp(cmd *cobra.Command, _ []string) error {
	cfg, err := a.loadUp()
	if err != nil {
		return &exitError{ExitError, err}
	}
	log, err := telemetry.NewLogger(a.env.Stderr, cfg.Log.Level, cfg.Log.Format)
	if err != nil {
		return &exitError{ExitError, err}
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	sec, err := secure(cfg.DataDir, cfg.StoreKeyFile, log)
	if err != nil {
		return &exitError{ExitError, err}
	}
	srv, err := embedded.Start(ctx, embedded.Config{
		StoreDir:      filepath.Join(cfg.DataDir, storeSubdir),
		Listen:        cfg.Listen,
		AllowRemote:   cfg.AllowRemote,
		Auth:          sec.server,
		EncryptionKey: sec.key,
	}, log)
	if err != nil {
		return &exitError{ExitError, err}
	}
	defer srv.Shutdown()
	out := a.env.Stdout
	fmt.Fprintln(out, srv.ClientURL())
	if err := a.prepareUp(ctx, srv, sec, &cfg, log); err != nil {
		return &exitError{ExitError, err}
	}
	host, _ := os.Hostname()
	hookCreds, opCreds, err := sec.writeCreds(cfg.DataDir, host)
	if err != nil {
		return &exitError{ExitError, err}
	}
	fmt.Fprintf(out, "credentials: %s (this host's hook and `claimcheck claim`), %s (the other commands)\n", hookCreds, opCreds)

	reg := telemetry.NewRegistry()
	names, svcs, conns, err := a.startServices(srv, sec, cfg, reg, log)
	defer func() {
		for _, nc := range conns {
			_ = nc.Drain()
		}
	}()
	if err != nil {
		return &exitError{ExitError, err}
	}
	err = a.runServices(ctx, srv, cfg, reg, names, svcs)
	log.Info("claimcheck stopping")
	if err != nil {
		return &exitError{ExitError, err}
	}
	return nil
}

// prepareUp sets up JetStream as an admin (streams, buckets: created or
// brought to this version's configuration), creates the first signing key
// as the rotator (the key registry's writer), and keeps the key set
// claimcheck-hook trusts current.
func (a *app) prepareUp(ctx context.Context, srv *embedded.Server, sec *secured, cfg *upConfig, log *slog.Logger) error {
	admin, err := sec.conn(srv, identity.RoleAdmin)
	if err != nil {
		return err
	}
	defer admin.Close()
	ajs, err := jetstream.New(admin)
	if err != nil {
		return err
	}
	if err := storedStreamsLoaded(ctx, ajs, filepath.Join(cfg.DataDir, storeSubdir), sec); err != nil {
		return err
	}
	if err := stream.Ensure(ctx, ajs, cfg.Streams); err != nil {
		return err
	}
	rot, err := sec.conn(srv, identity.RoleRotator)
	if err != nil {
		return err
	}
	context.AfterFunc(ctx, rot.Close)
	js, err := jetstream.New(rot)
	if err != nil {
		return err
	}
	keys, err := keyring.OpenRegistry(ctx, js)
	if err != nil {
		return err
	}
	if k, created, err := keyring.EnsureFirst(ctx, keys, keyring.Dir{Path: cfg.Verifier.KeyDir}, keyring.ECDSA, time.Now()); err != nil {
		return err
	} else if created {
		log.InfoContext(ctx, "created the first signing key", slog.String("keyid", k.KeyID), slog.String("algorithm", k.Algorithm),
			slog.Any("dir", cfg.Verifier.KeyDir), slog.String("fingerprint", k.Fingerprint))
	}
	if cfg.Witness.Enabled && slices.Contains(cfg.Services, "rotator") {
		w, err := startLocalWitness(ctx, js, keys, *cfg, log)
		if err != nil {
			return err
		}
		cfg.Rotator.Witnesses = append(cfg.Rotator.Witnesses, w)
	}
	// claimcheck-hook on this machine trusts decisions signed by these keys.
	path := hookKeysPath(a.env.Getenv, srv.ClientURL())
	if path == "" {
		return nil
	}
	if n, err := writeHookKeys(ctx, keys, path, 0o600); err != nil {
		log.WarnContext(ctx, "could not write the key set claimcheck-hook trusts; gated hooks will fail closed",
			slog.String("path", path), slog.Any("err", err))
	} else {
		log.InfoContext(ctx, "wrote the key set claimcheck-hook trusts", slog.String("path", path), slog.Any("keys", n))
	}
	// Keep it current: the rotator rotates keys on a schedule, and a hook
	// that does not know the new key fails closed once the old one stops
	// signing.
	if err := keys.Watch(ctx, func() {
		if n, err := writeHookKeys(ctx, keys, path, 0o600); err != nil {
			log.WarnContext(ctx, "could not rewrite the key set claimcheck-hook trusts after a registry change",
				slog.String("path", path), slog.Any("err", err))
		} else {
			log.InfoContext(ctx, "rewrote the key set claimcheck-hook trusts after a registry change",
				slog.String("path", path), slog.Any("keys", n))
		}
	}); err != nil {
		log.WarnContext(ctx, "cannot watch the key registry; rerun `claimcheck hooks install` after key changes", slog.Any("err", err))
	}
	return nil
}

// startServices builds the services up runs, each with a NATS identity of
// its own role (issued in memory for this process): each can do only what
// its role may, here as on a fleet.
func (a *app) startServices(srv *embedded.Server, sec *secured, cfg upConfig, reg *prometheus.Registry, log *slog.Logger) ([]string,
	[]runnable, []*nats.Conn, error) {
	var names []string
	var svcs []runnable
	var conns []*nats.Conn
	for _, name := range allServices {
		if !slices.Contains(cfg.Services, name) {
			continue
		}
		nc, err := sec.conn(srv, name)
		if err != nil {
			return names, svcs, conns, err
		}
		conns = append(conns, nc)
		set := service.Settings{Conn: nc, Logger: log.With(slog.String("service", name)), Metrics: reg, Clock: clock.Real{},
			Name: name, CheckStreams: true}
		var svc runnable
		switch name {
		case "ingest":
			svc, err = ingest.New(cfg.Ingest, set)
		case "verifier":
			svc, err = verifier.New(cfg.Verifier, set)
		case "gatekeeper":
			svc, err = gatekeeper.New(cfg.Gatekeeper, set)
		case "rotator":
			svc, err = rotator.New(cfg.Rotator, set)
		}
		if err != nil {
			return names, svcs, conns, fmt.Errorf("%s: %w", name, err)
		}
		names, svcs = append(names, name), append(svcs, svc)
	}
	return names, svcs, conns, nil
}

// runServices runs the services, the health endpoint and the readiness
// report until a signal or a failure.
func (a *app) runServices(ctx context.Context, srv *embedded.Server, cfg upConfig, reg *prometheus.Registry,
	names []string, svcs []runnable) error {
	health := telemetry.NewHealth()
	for i, s := range svcs {
		health.Add(names[i], s.Ready)
	}
	var g run.Group
	for i, s := range svcs {
		sctx, cancel := context.WithCancel(ctx)
		g.Add(func() error {
			if err := s.Run(sctx); err != nil {
				return fmt.Errorf("%s: %w", names[i], err)
			}
			return nil
		}, func(error) { cancel() })
	}
	httpAddr := make(chan string, 1)
	if cfg.HTTPListen != "" {
		hctx, cancel := context.WithCancel(ctx)
		g.Add(func() error {
			return telemetry.Serve(hctx, cfg.HTTPListen, telemetry.Handler(reg, health), func(addr net.Addr) { httpAddr <- addr.String() })
		}, func(error) { cancel() })
	} else {
		httpAddr <- ""
	}
	{
		rctx, cancel := context.WithCancel(ctx)
		g.Add(func() error {
			if err := waitReady(rctx, health, 60*time.Second); err != nil {
				return err
			}
			addr := <-httpAddr
			a.printReady(srv.ClientURL(), cfg, addr)
			<-rctx.Done()
			return nil
		}, func(error) { cancel() })
	}
	{
		// Stop on a signal (ctx) with a nil error.
		sctx, cancel := context.WithCancel(context.Background())
		g.Add(func() error {
			select {
			case <-ctx.Done():
			case <-sctx.Done():
			}
			return nil
		}, func(error) { cancel() })
	}
	return g.Run()
}

func waitReady(ctx context.Context, h *telemetry.Health, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := h.Ready()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("services not ready after %s: %w", timeout, err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (a *app) printReady(url string, cfg upConfig, httpAddr string) {
	w := a.env.Stdout
	running := "no services (NATS only)"
	if len(cfg.Services) > 0 {
		running = strings.Join(cfg.Services, ", ") + " running"
	}
	fmt.Fprintf(w, "claimcheck is up: %s; data in %s\n", running, cfg.DataDir)
	if httpAddr != "" {
		fmt.Fprintf(w, "health and metrics: http://%s/readyz  http://%s/metrics\n", httpAddr, httpAddr)
	}
	urlFlag := ""
	if url != "nats://127.0.0.1:4222" {
		urlFlag = " --nats-url " + url
	}
	fmt.Fprintf(w, "next: claimcheck hooks install%s     # record every Claude Code event\n", urlFlag)
	fmt.Fprintf(w, "      claimcheck ledger sessions%s    # after a session, list what was recorded\n", strings.TrimSuffix(urlFlag, " "))
	fmt.Fprintf(w,
		"      claimcheck claim --claim done --validator test_pass --args '{\"command_substring\":\"go test\"}'%s  # what the agent runs to back a claim\n", urlFlag)
	fmt.Fprintln(w, "stop with Ctrl-C")
}

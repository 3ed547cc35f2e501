package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/oklog/run"
	"github.com/spf13/cobra"

	"github.com/claimcheck/claimcheck/pkg/archive"
	"github.com/claimcheck/claimcheck/pkg/clock"
	"github.com/claimcheck/claimcheck/pkg/config"
	"github.com/claimcheck/claimcheck/pkg/daemon"
	"github.com/claimcheck/claimcheck/pkg/embedded"
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
}

func (a *app) upCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Run claimcheck on one machine: embedded NATS with JetStream and all four services",
		Long: `up starts an embedded NATS server (JetStream, fsync before every acknowledgement,
loopback only unless --allow-remote) storing under --data-dir, and runs ingest,
verifier, gatekeeper and rotator in this process. It prints the NATS URL on a line
of its own as soon as NATS is ready, then what to do next. SIGINT or SIGTERM
stops it cleanly.`,
		Args: cobra.NoArgs,
		RunE: a.runUp,
	}
	f := cmd.Flags()
	f.String("data-dir", "", "directory for JetStream data (default $XDG_DATA_HOME/claimcheck or ~/.local/share/claimcheck)")
	f.String("listen", "", "NATS client address host:port; port 0 picks a free one (default 127.0.0.1:4222)")
	f.Bool("allow-remote", false, "allow a non-loopback --listen address (the embedded NATS has no authentication)")
	f.String("http-listen", "", "address for /healthz, /readyz and /metrics; empty disables (default 127.0.0.1:0, a free port)")
	f.StringSlice("services", nil, "services to run in this process (default ingest,verifier,gatekeeper,rotator); run the others as their own binaries")
	for flag, key := range map[string]string{"data-dir": "data_dir", "listen": "listen", "allow-remote": "allow_remote", "http-listen": "http_listen", "services": "services"} {
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
	cfg.Ingest.Streams, cfg.Verifier.Streams, cfg.Gatekeeper.Streams, cfg.Rotator.Streams = cfg.Streams, cfg.Streams, cfg.Streams, cfg.Streams
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

	srv, err := embedded.Start(ctx, embedded.Config{
		StoreDir:    filepath.Join(cfg.DataDir, "nats"),
		Listen:      cfg.Listen,
		AllowRemote: cfg.AllowRemote,
	}, log)
	if err != nil {
		return &exitError{ExitError, err}
	}
	defer srv.Shutdown()
	out := a.env.Stdout
	fmt.Fprintln(out, srv.ClientURL())

	nc, err := nats.Connect(srv.ClientURL(), nats.InProcessServer(srv.NATS()), nats.Name("claimcheck-up"), nats.MaxReconnects(-1))
	if err != nil {
		return &exitError{ExitError, fmt.Errorf("connect to the embedded NATS: %w", err)}
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return &exitError{ExitError, err}
	}
	if err := stream.Ensure(ctx, js, cfg.Streams); err != nil {
		return &exitError{ExitError, err}
	}

	// The first signing key, on a fresh data directory.
	keys, err := keyring.OpenRegistry(ctx, js)
	if err != nil {
		return &exitError{ExitError, err}
	}
	if k, created, err := keyring.EnsureFirst(ctx, keys, keyring.Dir{Path: cfg.Verifier.KeyDir}, keyring.ECDSA, time.Now()); err != nil {
		return &exitError{ExitError, err}
	} else if created {
		log.Info("created the first signing key", "keyid", k.KeyID, "algorithm", k.Algorithm, "dir", cfg.Verifier.KeyDir, "fingerprint", k.Fingerprint)
	}
	// claimcheck-hook on this machine trusts decisions signed by these keys.
	if path := hookKeysPath(a.env.Getenv); path != "" {
		if n, err := writeHookKeys(ctx, keys, path); err != nil {
			log.Warn("could not write the key set claimcheck-hook trusts; gated hooks will fail closed", "path", path, "err", err)
		} else {
			log.Info("wrote the key set claimcheck-hook trusts", "path", path, "keys", n)
		}
		// Keep it current: the rotator rotates keys on a schedule, and a
		// hook that does not know the new key fails closed once the old
		// one stops signing.
		if err := keys.Watch(ctx, func() {
			if n, err := writeHookKeys(ctx, keys, path); err != nil {
				log.Warn("could not rewrite the key set claimcheck-hook trusts after a registry change", "path", path, "err", err)
			} else {
				log.Info("rewrote the key set claimcheck-hook trusts after a registry change", "path", path, "keys", n)
			}
		}); err != nil {
			log.Warn("cannot watch the key registry; rerun `claimcheck hooks install` after key changes", "err", err)
		}
	}

	reg := telemetry.NewRegistry()
	set := func(name string) service.Settings {
		return service.Settings{Conn: nc, Logger: log.With("service", name), Metrics: reg, Clock: clock.Real{}}
	}
	var names []string
	var svcs []runnable
	add := func(name string, s runnable, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		names, svcs = append(names, name), append(svcs, s)
		return nil
	}
	for _, name := range allServices {
		if !slices.Contains(cfg.Services, name) {
			continue
		}
		var svc runnable
		var err error
		switch name {
		case "ingest":
			svc, err = ingest.New(cfg.Ingest, set(name))
		case "verifier":
			svc, err = verifier.New(cfg.Verifier, set(name))
		case "gatekeeper":
			svc, err = gatekeeper.New(cfg.Gatekeeper, set(name))
		case "rotator":
			svc, err = rotator.New(cfg.Rotator, set(name))
		}
		if err := add(name, svc, err); err != nil {
			return &exitError{ExitError, err}
		}
	}

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
	err = g.Run()
	log.Info("claimcheck stopping")
	_ = nc.Drain()
	if err != nil {
		return &exitError{ExitError, err}
	}
	return nil
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
	fmt.Fprintf(w, "      claimcheck claim --claim done --validator test_pass --args '{\"command_substring\":\"go test\"}'%s  # what the agent runs to back a claim\n", urlFlag)
	fmt.Fprintln(w, "stop with Ctrl-C")
}

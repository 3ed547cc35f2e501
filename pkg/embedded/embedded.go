// Package embedded runs the NATS server with JetStream inside a claimcheck
// process: the zero-configuration default of `claimcheck up`. It stores under
// one directory, fsyncs every write before acknowledging it
// (sync_interval: always), listens on loopback unless told otherwise, and
// with Auth refuses every client without NATS credentials of the
// installation's operator (decentralised JWT authentication; see package
// identity). With an encryption key, JetStream encrypts everything it
// stores (ChaCha20-Poly1305), so no payload is ever in the clear on disk.
package embedded

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
)

// Config places the embedded server.
type Config struct {
	// StoreDir holds JetStream data (created 0700 if missing).
	StoreDir string
	// Listen is host:port for clients; port 0 picks a free port. The host
	// must be a loopback address unless AllowRemote is set.
	Listen string
	// AllowRemote permits a non-loopback Listen address.
	AllowRemote bool
	// Name of the server (default "claimcheck").
	Name string
	// MaxPayload caps client messages (default 1 MiB).
	MaxPayload int32
	// ReadyTimeout bounds start-up (default 30s).
	ReadyTimeout time.Duration
	// Cluster, when set, joins this server to a cluster (tests, benchmarks).
	Cluster *ClusterConfig
	// Auth, when set, makes the server require NATS credentials.
	Auth *Auth
	// EncryptionKey, when set, encrypts JetStream's store at rest; a store
	// written in the clear is encrypted when it is loaded.
	EncryptionKey string
}

// Auth is decentralised JWT authentication (operator mode): the operator's
// JWT, the system account, and the account JWTs the server starts with. A
// full account resolver keeps them in ResolverDir and takes updates (new
// revocations) pushed through the system account while it runs.
type Auth struct {
	OperatorJWT   string
	SystemAccount string            // public key
	Accounts      map[string]string // public key → JWT
	ResolverDir   string
}

// ClusterConfig joins a server to a static cluster.
type ClusterConfig struct {
	Name   string
	Listen string   // host:port for routes
	Routes []string // nats-route://host:port of the other members
}

// Validate reports every problem with c.
func (c Config) Validate() error {
	var errs []error
	if c.StoreDir == "" {
		errs = append(errs, errors.New("store dir: empty"))
	}
	host, port, err := net.SplitHostPort(c.Listen)
	if err != nil {
		errs = append(errs, fmt.Errorf("listen %q: %w", c.Listen, err))
	} else {
		if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
			errs = append(errs, fmt.Errorf("listen %q: bad port", c.Listen))
		}
		ip := net.ParseIP(host)
		if host != "localhost" && (ip == nil || !ip.IsLoopback()) && !c.AllowRemote {
			errs = append(errs, fmt.Errorf(
				"listen %q: not a loopback address; claimcheck's embedded NATS speaks no TLS, so binding it to a network needs --allow-remote", c.Listen))
		}
	}
	return errors.Join(errs...)
}

// Server is a running embedded NATS server.
type Server struct {
	ns *server.Server
}

// Options returns the nats-server options for c (exported for tests that
// assert the durability settings).
func Options(c Config) (*server.Options, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	host, portStr, _ := net.SplitHostPort(c.Listen)
	port, _ := strconv.Atoi(portStr)
	if port == 0 {
		port = server.RANDOM_PORT
	}
	name := c.Name
	if name == "" {
		name = "claimcheck"
	}
	maxPayload := c.MaxPayload
	if maxPayload == 0 {
		maxPayload = 1 << 20
	}
	o := &server.Options{
		ServerName: name,
		Host:       host,
		Port:       port,
		JetStream:  true,
		StoreDir:   c.StoreDir,
		SyncAlways: true, // sync_interval: always — fsync before every ack
		MaxPayload: maxPayload,
		NoSigs:     true, // the claimcheck process owns signals
	}
	if c.EncryptionKey != "" {
		o.JetStreamKey, o.JetStreamCipher = c.EncryptionKey, server.ChaCha
	}
	if c.Auth != nil {
		opc, err := jwt.DecodeOperatorClaims(c.Auth.OperatorJWT)
		if err != nil {
			return nil, fmt.Errorf("operator jwt: %w", err)
		}
		o.TrustedOperators = []*jwt.OperatorClaims{opc}
		o.SystemAccount = c.Auth.SystemAccount
	}
	if c.Cluster != nil {
		ch, cp, err := net.SplitHostPort(c.Cluster.Listen)
		if err != nil {
			return nil, fmt.Errorf("cluster listen %q: %w", c.Cluster.Listen, err)
		}
		o.Cluster.Name = c.Cluster.Name
		o.Cluster.Host = ch
		o.Cluster.Port, _ = strconv.Atoi(cp)
		for _, r := range c.Cluster.Routes {
			u, err := parseURL(r)
			if err != nil {
				return nil, err
			}
			o.Routes = append(o.Routes, u)
		}
	}
	return o, nil
}

// Start starts the server and waits until it accepts clients and JetStream
// is ready.
func Start(ctx context.Context, c Config, log *slog.Logger) (*Server, error) {
	o, err := Options(c)
	if err != nil {
		return nil, fmt.Errorf("embedded nats: %w", err)
	}
	if err := os.MkdirAll(c.StoreDir, 0o700); err != nil {
		return nil, fmt.Errorf("embedded nats: store dir: %w", err)
	}
	if abs, err := filepath.Abs(c.StoreDir); err == nil {
		o.StoreDir = abs
	}
	if c.Auth != nil {
		if o.AccountResolver, err = resolver(c.Auth); err != nil {
			return nil, fmt.Errorf("embedded nats: %w", err)
		}
	}
	ns, err := server.NewServer(o)
	if err != nil {
		return nil, fmt.Errorf("embedded nats: %w", err)
	}
	if log != nil {
		ns.SetLoggerV2(&logAdapter{log: log.With("component", "nats")}, false, false, false)
	}
	go ns.Start()
	timeout := c.ReadyTimeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	deadline := time.Now().Add(timeout)
	if !ns.ReadyForConnections(timeout) {
		ns.Shutdown()
		return nil, fmt.Errorf("embedded nats: not accepting clients on %s after %s (is the port in use?)", c.Listen, timeout)
	}
	for !ns.JetStreamEnabled() || (c.Cluster != nil && !ns.JetStreamIsClustered()) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			ns.Shutdown()
			return nil, errors.New("embedded nats: JetStream did not become ready")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return &Server{ns: ns}, nil
}

// ClientURL is the nats:// URL clients connect to.
func (s *Server) ClientURL() string { return s.ns.ClientURL() }

// RouteURL is the nats-route:// URL of a clustered server ("" otherwise).
func (s *Server) RouteURL() string {
	if a := s.ns.ClusterAddr(); a != nil {
		return "nats-route://" + a.String()
	}
	return ""
}

// NATS exposes the underlying server (tests, diagnostics).
func (s *Server) NATS() *server.Server { return s.ns }

// Shutdown stops the server and waits until it has released its store.
func (s *Server) Shutdown() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
}

// resolver is a full account resolver in a.ResolverDir holding a.Accounts:
// it stores the account JWTs pushed to it (ClaimsUpdate) and answers
// lookups from its directory.
func resolver(a *Auth) (server.AccountResolver, error) {
	if err := os.MkdirAll(a.ResolverDir, 0o700); err != nil {
		return nil, fmt.Errorf("account resolver dir: %w", err)
	}
	dr, err := server.NewDirAccResolver(a.ResolverDir, 0, 2*time.Minute, server.NoDelete)
	if err != nil {
		return nil, fmt.Errorf("account resolver: %w", err)
	}
	for pub, token := range a.Accounts {
		if err := dr.Store(pub, token); err != nil {
			return nil, fmt.Errorf("account resolver: store %s: %w", pub, err)
		}
	}
	return dr, nil
}

// GlobalAccountDir is where a server without accounts keeps JetStream data
// (the global account, $G), under its store dir.
const GlobalAccountDir = "$G"

// AdoptGlobalAccount moves the JetStream data a server without
// authentication stored (in the global account) to the account named
// account, so that a store written before NATS credentials keeps its
// streams. It does nothing when there is no such data; it refuses when the
// account already has data of its own. The server must not be running.
func AdoptGlobalAccount(storeDir, account string) (moved bool, err error) {
	js := filepath.Join(storeDir, "jetstream")
	from, to := filepath.Join(js, GlobalAccountDir), filepath.Join(js, account)
	if _, err := os.Stat(from); os.IsNotExist(err) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	if _, err := os.Stat(to); err == nil {
		return false, fmt.Errorf(
			"both %s (JetStream data of a server without authentication) and %s (the account's) exist: move one aside", from, to)
	}
	if err := os.Rename(from, to); err != nil {
		return false, fmt.Errorf("move the JetStream data of %s to account %s: %w", from, account, err)
	}
	return true, nil
}

// PrepareEncryption readies a store written without encryption for its
// first start with an encryption key: it removes the message blocks of
// every stream that never held a message (all its blocks are empty and
// none is keyed). nats-server converts such an empty block without keying
// it: messages the stream takes during that run cannot be read back by
// subject (a key-value get answers "not found", so a bucket created but
// never written is useless), and when it takes none the stream fails to
// load at the next start ("corrupt state file") and is gone. Without the
// block the server starts the stream afresh, encrypted, from its state
// file. Streams holding messages, or the tombstones that keep a purged
// stream's sequence, are left as they are. It returns the streams it
// changed (account/stream). The server must not be running.
func PrepareEncryption(storeDir string) ([]string, error) {
	dirs, err := filepath.Glob(filepath.Join(storeDir, "jetstream", "*", "streams", "*", "msgs"))
	if err != nil {
		return nil, err
	}
	var changed []string
	for _, msgs := range dirs {
		if _, err := os.Stat(filepath.Join(filepath.Dir(msgs), "meta.key")); err == nil {
			continue // encrypted already
		}
		entries, err := os.ReadDir(msgs)
		if err != nil {
			return changed, err
		}
		var empty []string
		untouched := false
		for _, e := range entries {
			name := e.Name()
			if strings.HasSuffix(name, ".key") {
				untouched = true
				break
			}
			if !strings.HasSuffix(name, ".blk") {
				continue
			}
			fi, err := e.Info()
			if err != nil {
				return changed, err
			}
			if !fi.Mode().IsRegular() || fi.Size() > 0 {
				untouched = true
				break
			}
			empty = append(empty, filepath.Join(msgs, name))
		}
		if untouched || len(empty) == 0 {
			continue
		}
		for _, b := range empty {
			if err := os.Remove(b); err != nil {
				return changed, fmt.Errorf("prepare %s for encryption: %w", b, err)
			}
		}
		stream := filepath.Dir(msgs)
		changed = append(changed, filepath.Base(filepath.Dir(filepath.Dir(stream)))+"/"+filepath.Base(stream))
	}
	return changed, nil
}

type logAdapter struct{ log *slog.Logger }

func (l *logAdapter) Noticef(format string, v ...any) { l.log.Debug(fmt.Sprintf(format, v...)) }
func (l *logAdapter) Warnf(format string, v ...any)   { l.log.Warn(fmt.Sprintf(format, v...)) }
func (l *logAdapter) Fatalf(format string, v ...any)  { l.log.Error(fmt.Sprintf(format, v...)) }
func (l *logAdapter) Errorf(format string, v ...any)  { l.log.Error(fmt.Sprintf(format, v...)) }
func (l *logAdapter) Debugf(format string, v ...any)  {}
func (l *logAdapter) Tracef(format string, v ...any)  {}

func parseURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("route %q: not a nats-route://host:port URL", s)
	}
	return u, nil
}

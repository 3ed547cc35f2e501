package cli

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/embedded"
	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/identity"
)

// The data directory of `claimcheck up`:
//
//	nats/      JetStream's store, encrypted at rest
//	auth/      the NATS authority (operator, accounts, role signing keys),
//	           the identities issued, the store's encryption key, and the
//	           servers' account resolver: whoever reads it can do anything
//	creds/     hook.creds (this host's hook identity) and operator.creds
//	keys/      the attestation signing keys
//	archive/   the rotator's archive
const (
	storeSubdir    = "nats"
	authSubdir     = "auth"
	credsSubdir    = "creds"
	resolverSubdir = "accounts"
	storeKeyFile   = "store.key"
	hookCredsFile  = "hook.creds"
	operatorCreds  = "operator.creds"
)

// secured is what `up` secures its NATS with.
type secured struct {
	authority *identity.Authority
	server    *embedded.Auth
	key       string // the store's encryption key
	keyFile   string
}

// secure opens (on first start, creates) the authority and the store's
// encryption key, and moves the data of a store written without
// authentication into the claimcheck account.
func secure(dataDir, keyFile string, log *slog.Logger) (*secured, error) {
	authDir := filepath.Join(dataDir, authSubdir)
	a, created, err := identity.Open(authDir)
	if err != nil {
		return nil, fmt.Errorf("nats authority: %w", err)
	}
	if created {
		log.Info("created the NATS authority: every client now needs credentials", slog.String("dir", authDir))
	}
	store := filepath.Join(dataDir, storeSubdir)
	if moved, err := embedded.AdoptGlobalAccount(store, a.AccountKey()); err != nil {
		return nil, err
	} else if moved {
		log.Info("moved the JetStream data of a claimcheck without authentication into the claimcheck account",
			slog.Any("account", a.AccountKey()))
	}
	srv, err := a.Server(filepath.Join(authDir, resolverSubdir))
	if err != nil {
		return nil, err
	}
	if keyFile == "" {
		keyFile = filepath.Join(authDir, storeKeyFile)
	}
	s := &secured{authority: a, server: srv, keyFile: keyFile}
	key, err := readKey(keyFile)
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(filepath.Join(store, "jetstream")); serr == nil {
			// The store was written in the clear; this start encrypts it.
			log.Info("encrypting the existing JetStream store at rest with a new key", slog.String("key", keyFile))
			changed, err := embedded.PrepareEncryption(store)
			if err != nil {
				return nil, err
			}
			if len(changed) > 0 {
				log.Info("prepared the streams that never held a message for encryption", slog.Any("streams", strings.Join(changed, ",")))
			}
		}
		key, err = newKey(keyFile)
	}
	if err != nil {
		return nil, err
	}
	s.key = key
	return s, nil
}

// The store's key is not rotated in place: nats-server 2.15.2 re-encrypts
// a store given its previous key (prev_key), but in our test it then failed
// to load the stream state and consumer stores of claimcheck's streams
// (docs/identity.md, "Encryption at rest").

func readKey(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("store key %s is readable by other users (mode %s): chmod 600 it", path, fi.Mode().Perm())
	}
	k := strings.TrimSpace(string(b))
	if len(k) < 32 {
		return "", fmt.Errorf("store key %s: too short to be a key claimcheck made", path)
	}
	return k, nil
}

func newKey(path string) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	k := base64.RawURLEncoding.EncodeToString(b[:])
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("store key: %w", err)
	}
	if _, err := f.WriteString(k + "\n"); err != nil {
		_ = f.Close()
		return "", err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return "", err
	}
	return k, f.Close()
}

// conn connects to the embedded server in-process as a fresh identity of
// role (never written anywhere: it lives as long as this process).
func (s *secured) conn(srv *embedded.Server, role string) (*nats.Conn, error) {
	c, err := s.authority.Issue(identity.Request{Role: role})
	if err != nil {
		return nil, err
	}
	nc, err := nats.Connect(srv.ClientURL(), nats.InProcessServer(srv.NATS()), c.Option(),
		nats.Name("claimcheck-up-"+role), nats.MaxReconnects(-1))
	if err != nil {
		return nil, fmt.Errorf("connect to the embedded NATS as %s: %w", role, err)
	}
	return nc, nil
}

// writeCreds writes the two credentials files a person at this host
// needs: the hook's (for claimcheck-hook and `claimcheck claim`) and the
// operator's (for the other commands). An existing file for the same host
// is kept; one for another host (a copied data directory) is replaced.
func (s *secured) writeCreds(dataDir, host string) (hookPath, opPath string, err error) {
	dir := filepath.Join(dataDir, credsSubdir)
	hookPath, opPath = filepath.Join(dir, hookCredsFile), filepath.Join(dir, operatorCreds)
	tok, err := id.HostToken(host)
	if err != nil {
		return "", "", fmt.Errorf("this host's name cannot name its hook identity: %w", err)
	}
	for _, f := range []struct {
		path string
		req  identity.Request
	}{
		{hookPath, identity.Request{Role: identity.RoleHook, Host: host, Record: true}},
		{opPath, identity.Request{Role: identity.RoleOperator, Record: true}},
	} {
		if i, err := identity.ReadCreds(f.path); err == nil && i.Role == f.req.Role && (i.Role != identity.RoleHook || i.Name == tok) {
			continue
		}
		c, err := s.authority.Issue(f.req)
		if err != nil {
			return "", "", err
		}
		if err := identity.WriteCreds(f.path, c); err != nil {
			return "", "", fmt.Errorf("write %s: %w", f.path, err)
		}
	}
	return hookPath, opPath, nil
}

// defaultCreds is the credentials file a command uses when none is
// configured: the ones `claimcheck up` wrote in its data directory, for
// the identity the command needs, if they exist.
func (a *app) defaultCreds(role string) string {
	name := operatorCreds
	if role == identity.RoleHook {
		name = hookCredsFile
	}
	p := filepath.Join(a.dataDir(), credsSubdir, name)
	if f, err := os.Open(p); err == nil {
		_ = f.Close()
		return p
	}
	return ""
}

// storedStreamsLoaded refuses to go on when a stream is on disk but the
// server did not load it: with another key than the store's (a wrong
// --store-key-file, a lost store.key), JetStream cannot decrypt it, and
// setting the streams up anew must not build over it.
func storedStreamsLoaded(ctx context.Context, js jetstream.JetStream, storeDir string, s *secured) error {
	dir := filepath.Join(storeDir, "jetstream", s.authority.AccountKey(), "streams")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var lost []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, err := js.Stream(ctx, e.Name()); errors.Is(err, jetstream.ErrStreamNotFound) {
			lost = append(lost, e.Name())
		} else if err != nil {
			return fmt.Errorf("stream %s: %w", e.Name(), err)
		}
	}
	if len(lost) > 0 {
		return fmt.Errorf(
			"streams %s are stored in %s but NATS could not load them: is %s the key the store was encrypted with? Or was a stream's metadata damaged (a storage error while NATS wrote it)? (NATS's warnings above name the file and why; nothing was changed)",
			strings.Join(lost, ", "), dir, s.keyFile)
	}
	return nil
}

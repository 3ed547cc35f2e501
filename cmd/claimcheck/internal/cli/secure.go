package cli

import (
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
	newKeySuffix   = ".new"
)

// secured is what `up` secures its NATS with.
type secured struct {
	authority *identity.Authority
	server    *embedded.Auth
	key, prev string // the store's encryption key, and the one it replaces
	keyFile   string
	rotating  bool
}

// secure opens (on first start, creates) the authority and the store's
// encryption key, and moves the data of a store written without
// authentication into the claimcheck account.
func secure(dataDir, keyFile string, rotate bool, log *slog.Logger) (*secured, error) {
	authDir := filepath.Join(dataDir, authSubdir)
	a, created, err := identity.Open(authDir)
	if err != nil {
		return nil, fmt.Errorf("nats authority: %w", err)
	}
	if created {
		log.Info("created the NATS authority: every client now needs credentials", "dir", authDir)
	}
	store := filepath.Join(dataDir, storeSubdir)
	if moved, err := embedded.AdoptGlobalAccount(store, a.AccountKey()); err != nil {
		return nil, err
	} else if moved {
		log.Info("moved the JetStream data of a claimcheck without authentication into the claimcheck account", "account", a.AccountKey())
	}
	srv, err := a.Server(filepath.Join(authDir, resolverSubdir))
	if err != nil {
		return nil, err
	}
	if keyFile == "" {
		keyFile = filepath.Join(authDir, storeKeyFile)
	}
	s := &secured{authority: a, server: srv, keyFile: keyFile}
	_, serr := os.Stat(filepath.Join(store, "jetstream"))
	if _, kerr := os.Stat(keyFile); serr == nil && errors.Is(kerr, fs.ErrNotExist) {
		// The store was written in the clear; this start encrypts it.
		changed, err := embedded.PrepareEncryption(store)
		if err != nil {
			return nil, err
		}
		if len(changed) > 0 {
			log.Info("prepared the streams that never held a message for encryption", "streams", strings.Join(changed, ","))
		}
	}
	if err := s.loadKey(rotate, serr == nil, log); err != nil {
		return nil, err
	}
	return s, nil
}

// loadKey reads the store key, creating it on first start. A rotation
// writes a new key beside the old one (<file>.new); the server reads with
// the old and writes with the new, and once it has started the new key
// replaces the old (commitKey). A start interrupted in between finds both
// files and does the same again.
func (s *secured) loadKey(rotate, stored bool, log *slog.Logger) error {
	cur, err := readKey(s.keyFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if stored {
			log.Info("encrypting the existing JetStream store at rest with a new key", "key", s.keyFile)
		}
		if cur, err = newKey(s.keyFile); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	next, err := readKey(s.keyFile + newKeySuffix)
	switch {
	case err == nil:
		s.key, s.prev, s.rotating = next, cur, true
	case !errors.Is(err, fs.ErrNotExist):
		return err
	case rotate:
		if next, err = newKey(s.keyFile + newKeySuffix); err != nil {
			return err
		}
		s.key, s.prev, s.rotating = next, cur, true
		log.Info("rotating the store's encryption key", "key", s.keyFile)
	default:
		s.key = cur
	}
	return nil
}

// commitKey finishes a rotation once the server has loaded the store with
// the new key.
func (s *secured) commitKey(log *slog.Logger) error {
	if !s.rotating {
		return nil
	}
	if err := os.Rename(s.keyFile+newKeySuffix, s.keyFile); err != nil {
		return fmt.Errorf("store key rotation: %w", err)
	}
	log.Info("the store is encrypted with the new key; the old one is gone", "key", s.keyFile)
	return nil
}

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
	nc, err := nats.Connect(srv.ClientURL(), nats.InProcessServer(srv.NATS()), c.Option(), nats.Name("claimcheck-up-"+role), nats.MaxReconnects(-1))
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

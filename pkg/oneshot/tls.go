//go:build !oneshot_notls

package oneshot

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net/url"
	"os"

	"github.com/nats-io/nkeys"
)

// TLSSupported reports whether this build can speak TLS to NATS.
const TLSSupported = true

// TLSConfig is crypto/tls's configuration.
type TLSConfig = tls.Config

// startTLS upgrades the connection (after INFO, before CONNECT).
func (c *Conn) startTLS(ctx context.Context, u *url.URL, o Options) error {
	cfg := o.TLS
	if cfg == nil {
		cfg = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	cfg = cfg.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName = u.Hostname()
	}
	tc := tls.Client(c.nc, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		return fmt.Errorf("tls: %w", err)
	}
	c.nc = tc
	c.r = bufio.NewReaderSize(tc, 32<<10)
	c.w = bufio.NewWriterSize(tc, 32<<10)
	return nil
}

// signNonce reads a credentials file (user JWT and nkey seed) or a bare
// nkey seed file and signs the server's nonce: CONNECT then carries the
// JWT, or the nkey's public key, and the signature.
func signNonce(path, nonce string) (jwt, nkey, sig string, err error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", "", "", fmt.Errorf("nats credentials: %w", err)
	}
	defer clear(raw)
	kp, err := nkeys.ParseDecoratedNKey(raw)
	if err != nil {
		return "", "", "", fmt.Errorf("nats credentials %s: no nkey seed: %w", path, err)
	}
	defer kp.Wipe()
	if bytes.Contains(raw, []byte("BEGIN NATS USER JWT")) {
		if jwt, err = nkeys.ParseDecoratedJWT(raw); err != nil {
			return "", "", "", fmt.Errorf("nats credentials %s: %w", path, err)
		}
	} else if nkey, err = kp.PublicKey(); err != nil {
		return "", "", "", fmt.Errorf("nats credentials %s: %w", path, err)
	}
	s, err := kp.Sign([]byte(nonce))
	if err != nil {
		return "", "", "", fmt.Errorf("nats credentials %s: sign: %w", path, err)
	}
	return jwt, nkey, base64.RawURLEncoding.EncodeToString(s), nil
}

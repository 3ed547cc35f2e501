//go:build !oneshot_notls

package oneshot

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net/url"
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

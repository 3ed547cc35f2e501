//go:build oneshot_notls

package oneshot

import (
	"context"
	"net/url"
)

// TLSSupported reports whether this build can speak TLS to NATS. Builds
// with the oneshot_notls tag leave crypto/tls (and crypto/x509) out: their
// package initialisation is a measurable part of a short-lived process's
// start-up.
const TLSSupported = false

// TLSConfig stands in for crypto/tls's configuration; it cannot be used.
type TLSConfig struct{}

// startTLS fails: this build has no TLS.
func (c *Conn) startTLS(context.Context, *url.URL, Options) error {
	return ErrNoTLS
}

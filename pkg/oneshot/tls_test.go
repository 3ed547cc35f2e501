//go:build !oneshot_notls

package oneshot_test

import (
	"crypto/tls"
	"crypto/x509"
	"strings"
	"testing"

	"github.com/claimcheck/claimcheck/pkg/oneshot"
)

func TestAuthAndTLS(t *testing.T) {
	addr, cert := tlsServer(t, "hook", "s3cret")
	pool := x509.NewCertPool()
	pool.AddCert(cert.Leaf)
	tlsCfg := &tls.Config{RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS12}
	c, err := oneshot.Dial(ctx(t), oneshot.Options{URL: "tls://hook:s3cret@" + addr, TLS: tlsCfg})
	if err != nil {
		t.Fatalf("tls+auth: %v", err)
	}
	_ = c.Close()
	_, err = oneshot.Dial(ctx(t), oneshot.Options{URL: "tls://hook:wrong@" + addr, TLS: tlsCfg, Verify: true})
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("bad password, verified dial: %v", err)
	}
	if strings.Contains(err.Error(), "wrong") {
		t.Fatalf("error leaks the password: %v", err)
	}
	// Without Verify the refusal arrives with the first request.
	lazy, err := oneshot.Dial(ctx(t), oneshot.Options{URL: "tls://hook:wrong@" + addr, TLS: tlsCfg})
	if err != nil {
		t.Fatalf("lazy dial: %v", err)
	}
	if _, err := lazy.Request(ctx(t), "x", nil, []byte("y")); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("bad password, first request: %v", err)
	}
	_ = lazy.Close()
	// A plain nats:// URL to a server that requires TLS: nothing secret was
	// sent (no credentials), and the error says what to do.
	plain, err := oneshot.Dial(ctx(t), oneshot.Options{URL: "nats://" + addr})
	if err == nil {
		_, err = plain.Publish(ctx(t), "x", nil, []byte("y"))
		_ = plain.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "tls://") {
		t.Fatalf("plain URL to a TLS server: %v", err)
	}
	// Server certificate not trusted.
	if _, err := oneshot.Dial(ctx(t), oneshot.Options{URL: "tls://hook:s3cret@" + addr}); err == nil || !strings.Contains(err.Error(), "tls") {
		t.Fatalf("untrusted cert: %v", err)
	}
}

//go:build oneshot_notls

package oneshot_test

import (
	"crypto/tls"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/claimcheck/claimcheck/pkg/oneshot"
)

// A build without TLS says so when a URL or a server asks for TLS.
func TestNoTLSBuildRefusesTLS(t *testing.T) {
	if oneshot.TLSSupported {
		t.Fatal("oneshot_notls build reports TLS support")
	}
	cert := selfSigned(t)
	o := &server.Options{Host: "127.0.0.1", Port: -1, NoSigs: true,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, TLS: true}
	srv, err := server.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	defer srv.Shutdown()
	if !srv.ReadyForConnections(5 * time.Second) {
		t.Fatal("server not ready")
	}
	addr := srv.Addr().String()
	if _, err := oneshot.Dial(ctx(t), oneshot.Options{URL: "tls://" + addr}); !errors.Is(err, oneshot.ErrNoTLS) {
		t.Fatalf("tls:// URL: %v, want ErrNoTLS", err)
	}
	// With credentials INFO is read first; the server's tls_required is
	// refused the same way, before anything secret is sent.
	if _, err := oneshot.Dial(ctx(t), oneshot.Options{URL: "nats://u:p@" + addr}); !errors.Is(err, oneshot.ErrNoTLS) {
		t.Fatalf("server requiring TLS: %v, want ErrNoTLS", err)
	}
}

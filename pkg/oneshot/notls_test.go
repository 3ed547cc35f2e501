//go:build oneshot_notls

package oneshot_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/oneshot"
)

// A build without TLS says so when a URL or a server asks for TLS.
func TestNoTLSBuildRefusesTLS(t *testing.T) {
	if oneshot.TLSSupported {
		t.Fatal("oneshot_notls build reports TLS support")
	}
	addr, _ := tlsServer(t, "", "")
	if _, err := oneshot.Dial(ctx(t), oneshot.Options{URL: "tls://" + addr}); !errors.Is(err, oneshot.ErrNoTLS) {
		t.Fatalf("tls:// URL: %v, want ErrNoTLS", err)
	}
	// With credentials INFO is read first; the server's tls_required is
	// refused the same way, before anything secret is sent.
	if _, err := oneshot.Dial(ctx(t), oneshot.Options{URL: "nats://u:p@" + addr}); !errors.Is(err, oneshot.ErrNoTLS) {
		t.Fatalf("server requiring TLS: %v, want ErrNoTLS", err)
	}
}

// The lean build speaks NATS credentials (the creds tests run in both
// builds); a file that holds none is refused naming it.
func TestNoTLSBuildReadsCredentials(t *testing.T) {
	s := natstest.RunServer(t)
	if _, err := oneshot.Dial(ctx(t), oneshot.Options{URL: s.ClientURL(), Creds: "/dev/null"}); err == nil || !strings.Contains(err.Error(), "/dev/null") {
		t.Fatalf("a file without credentials: %v", err)
	}
}

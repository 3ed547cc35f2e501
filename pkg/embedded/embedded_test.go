package embedded

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
)

func TestServerIsDurableAndLoopbackOnly(t *testing.T) {
	dir := t.TempDir()
	s, err := Start(context.Background(), Config{StoreDir: dir, Listen: "127.0.0.1:0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	js := s.NATS().JetStreamConfig()
	if js == nil || !js.SyncAlways {
		t.Fatalf("JetStream config %+v: want sync_always (fsync before every acknowledgement)", js)
	}
	if !strings.HasPrefix(js.StoreDir, dir) {
		t.Fatalf("store dir %s, want under %s", js.StoreDir, dir)
	}
	host, _, _ := net.SplitHostPort(strings.TrimPrefix(s.ClientURL(), "nats://"))
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		t.Fatalf("listening on %s, want loopback", s.ClientURL())
	}
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{StoreDir: "d", Listen: "0.0.0.0:4222"}, "loopback"},
		{Config{StoreDir: "d", Listen: "192.168.1.5:4222"}, "--allow-remote"},
		{Config{StoreDir: "d", Listen: "nonsense"}, "listen"},
		{Config{StoreDir: "d", Listen: "127.0.0.1:99999"}, "port"},
		{Config{Listen: "127.0.0.1:0"}, "store dir"},
	} {
		if err := c.cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
	ok := Config{StoreDir: "d", Listen: "0.0.0.0:0", AllowRemote: true}
	if err := ok.Validate(); err != nil {
		t.Errorf("allow remote: %v", err)
	}
	o, err := Options(Config{StoreDir: "d", Listen: "localhost:0"})
	if err != nil || !o.SyncAlways || !o.JetStream {
		t.Fatalf("options: %+v %v", o, err)
	}
}

func TestPortInUseIsAClearError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = Start(context.Background(), Config{StoreDir: t.TempDir(), Listen: l.Addr().String(), ReadyTimeout: 2e9}, nil)
	if err == nil || !strings.Contains(err.Error(), l.Addr().String()) {
		t.Fatalf("port in use: %v", err)
	}
}

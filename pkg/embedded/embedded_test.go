package embedded

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
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

// A store written in the clear keeps every stream when it is first loaded
// with an encryption key, including streams (buckets) that never held a
// message: one written during the converting run reads back, one left
// idle still loads at the next start.
func TestPrepareEncryptionKeepsStreamsThatNeverHeldAMessage(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	start := func(key string) (*Server, jetstream.JetStream) {
		t.Helper()
		s, err := Start(ctx, Config{StoreDir: dir, Listen: "127.0.0.1:0", EncryptionKey: key}, nil)
		if err != nil {
			t.Fatal(err)
		}
		nc, err := nats.Connect(s.ClientURL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		return s, js
	}
	s, js := start("")
	for _, b := range []string{"used", "written", "idle"} {
		kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: b, Storage: jetstream.FileStorage})
		if err != nil {
			t.Fatal(err)
		}
		if b == "used" {
			if _, err := kv.Put(ctx, "k", []byte("stored-in-clear")); err != nil {
				t.Fatal(err)
			}
		}
	}
	s.Shutdown()

	changed, err := PrepareEncryption(dir)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(changed)
	if want := []string{GlobalAccountDir + "/KV_idle", GlobalAccountDir + "/KV_written"}; !slices.Equal(changed, want) {
		t.Fatalf("PrepareEncryption changed %v, want %v", changed, want)
	}
	const key = "0123456789abcdef0123456789abcdef"
	get := func(js jetstream.JetStream, bucket, k, want string) {
		t.Helper()
		kv, err := js.KeyValue(ctx, bucket)
		if err != nil {
			t.Fatalf("bucket %s: %v", bucket, err)
		}
		e, err := kv.Get(ctx, k)
		if err != nil || string(e.Value()) != want {
			t.Fatalf("bucket %s key %s: %v, want %q", bucket, k, err, want)
		}
	}
	s, js = start(key)
	kv, err := js.KeyValue(ctx, "written")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "k", []byte("written-encrypted")); err != nil {
		t.Fatal(err)
	}
	get(js, "written", "k", "written-encrypted")
	get(js, "used", "k", "stored-in-clear")
	s.Shutdown()

	s, js = start(key)
	get(js, "written", "k", "written-encrypted")
	get(js, "used", "k", "stored-in-clear")
	if _, err := js.KeyValue(ctx, "idle"); err != nil {
		t.Fatalf("the bucket that never held a message is gone after the restart: %v", err)
	}
	s.Shutdown()
	// And nothing is left to do on an encrypted store.
	if changed, err := PrepareEncryption(dir); err != nil || len(changed) != 0 {
		t.Fatalf("PrepareEncryption on an encrypted store: %v %v", changed, err)
	}
}

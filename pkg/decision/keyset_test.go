package decision

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestServerName(t *testing.T) {
	same := [][]string{
		{"nats://127.0.0.1:4222", "127.0.0.1:4222", "NATS://127.0.0.1", " nats://user:pw@127.0.0.1:4222/ "},
		{"nats://a:4222,nats://b:4222", "nats://b:4222, nats://a:4222", "a,b,a"},
		{"tls://nats.example:4222", "TLS://Nats.Example"},
		{"nats://[::1]:4222", "[::1]"},
	}
	for _, group := range same {
		want := ServerName(group[0])
		for _, u := range group[1:] {
			if got := ServerName(u); got != want {
				t.Errorf("ServerName(%q) = %s, want %s (the same server as %q)", u, got, want, group[0])
			}
		}
	}
	different := []string{
		"nats://127.0.0.1:4222", "nats://127.0.0.1:4223", "nats://localhost:4222", "tls://127.0.0.1:4222",
		"nats://a:4222,nats://b:4222", "nats://a:4222", "", "ws://127.0.0.1",
	}
	seen := map[string]string{}
	for _, u := range different {
		n := ServerName(u)
		if prev, ok := seen[n]; ok {
			t.Errorf("ServerName(%q) = ServerName(%q) = %s: different servers share a key set", u, prev, n)
		}
		seen[n] = u
		if strings.ContainsAny(n, "/\\:@ ") || n == "" || len(n) > 64 {
			t.Errorf("ServerName(%q) = %q: not a safe file name", u, n)
		}
	}
	if got := ServerName("nats://127.0.0.1:4222"); !strings.HasPrefix(got, "127.0.0.1_4222-") {
		t.Errorf("ServerName label = %q, want it to start with the host and port", got)
	}
	if got, want := KeySetPath("/s", "nats://h:1"), filepath.Join("/s", "gate-keys", ServerName("nats://h:1")+".json"); got != want {
		t.Errorf("KeySetPath = %s, want %s", got, want)
	}
}

func FuzzServerName(f *testing.F) {
	for _, s := range []string{"nats://127.0.0.1:4222", "a,b", "[::1]", "tls://u:p@h/x?y", "", ",,,", "../../etc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, u string) {
		n := ServerName(u)
		if n == "" || len(n) > 64 || strings.ContainsAny(n, "/\\\x00") || n == "." || n == ".." {
			t.Fatalf("ServerName(%q) = %q: not a safe file name", u, n)
		}
		if filepath.Base(KeySetPath("/s", u)) != n+".json" {
			t.Fatalf("KeySetPath(%q) escapes its directory", u)
		}
	})
}

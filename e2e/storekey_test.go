package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimcheck/claimcheck/pkg/natstest"
)

// TestStoreKeyKeptApart: with --store-key-file the store's key lives
// outside the data directory (created 0600 on the first start), nothing in
// the data directory is a key or holds the events in clear, and a start
// with another key refuses to go on, naming the key file, and changes
// nothing: the right key still opens everything.
func TestStoreKeyKeptApart(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	keyFile := filepath.Join(dir, "secrets", "store.key")
	listen := fmt.Sprintf("127.0.0.1:%d", natstest.FreePort(t))
	env := func(url string) []string {
		return []string{"CLAIMCHECK_NATS_URL=" + url, "CLAIMCHECK_HOOK_STATE_DIR=" + filepath.Join(dir, "hook"), "CLAIMCHECK_HOOK_GATE=false"}
	}

	p, url := up(t, data, listen, "--store-key-file", keyFile)
	for i := range 3 {
		in := fmt.Sprintf(`{"session_id":"keyed","hook_event_name":"Notification","message":"keyed event %d"}`, i)
		if r := runBin(t, env(url), []byte(in), "claimcheck-hook"); r.code != 0 {
			t.Fatalf("hook: %+v", r)
		}
	}
	show(t, url, "keyed", 3)
	p.Stop(t)
	if fi, err := os.Stat(keyFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("store key %s: %v (mode %v), want a 0600 file", keyFile, err, fi)
	}
	if _, err := os.Stat(filepath.Join(data, "auth", "store.key")); !os.IsNotExist(err) {
		t.Fatalf("a store key is in the data directory too: %v", err)
	}
	noCleartext(t, data, "keyed event 1")

	wrong := filepath.Join(dir, "wrong.key")
	if err := os.WriteFile(wrong, []byte("a-key-this-store-was-never-encrypted-with\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runBin(t, nil, nil, "claimcheck", "up", "--data-dir", data, "--listen", listen, "--http-listen", "", "--store-key-file", wrong)
	if r.code != 2 || !strings.Contains(r.stderr, "NATS could not load them: is "+wrong+" the key the store was encrypted with?") {
		t.Fatalf("up with another key: exit %d\n%s", r.code, r.stderr)
	}
	_, url = up(t, data, listen, "--store-key-file", keyFile)
	if entries, _ := show(t, url, "keyed", 3); len(entries) != 3 {
		t.Fatalf("the session has %d entries after the refused start, want 3", len(entries))
	}
	if r := runBin(t, env(url), nil, "claimcheck", "ledger", "verify"); r.code != 0 {
		t.Fatalf("verify: %+v", r)
	}
}

package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
)

// TestRotatorLiveCycleEndToEnd drives a live `claimcheck up` through a
// whole rotator cycle in seconds (durations are Go syntax): archive, trim
// behind verified copies with a protected active session, archive
// retention with ledgered deletions, scheduled key rotation; then the CLI
// verifies the archive, the hot stream from its anchors and every session
// across both.
func TestRotatorLiveCycleEndToEnd(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	upEnvs := []string{
		"CLAIMCHECK_ROTATOR_INTERVAL=500ms", "CLAIMCHECK_ROTATOR_HOT_WINDOW=2s", "CLAIMCHECK_ROTATOR_PROTECT_WINDOW=1500ms",
		"CLAIMCHECK_ROTATOR_ARCHIVE_RETENTION=6s", "CLAIMCHECK_ROTATOR_KEY_ROTATION_PERIOD=3s", "CLAIMCHECK_ROTATOR_KEY_OVERLAP=1s",
		"CLAIMCHECK_HOOK_STATE_DIR=" + filepath.Join(dir, "hook"),
	}
	_, url := upEnv(t, upEnvs, data, "127.0.0.1:0")
	// The CLI reads the same rotator settings (archive verify judges
	// deletions against rotator.archive_retention).
	env := append([]string{"CLAIMCHECK_NATS_URL=" + url, "CLAIMCHECK_HOOK_GATE=false", "CLAIMCHECK_DATA_DIR=" + data}, upEnvs...)
	cli := func(args ...string) result {
		t.Helper()
		return runBin(t, env, nil, "claimcheck", args...)
	}
	old, busy := newAgent(t, env, "rot-old"), newAgent(t, env, "rot-busy")
	for range 4 {
		old.bash("go test ./...", "ok")
		busy.bash("make", "ok")
	}
	// rot-old goes quiet; rot-busy keeps working.
	deadline := time.Now().Add(60 * time.Second)
	var status string
	for {
		busy.bash("go vet ./...", "ok")
		tombs, _ := os.ReadDir(filepath.Join(data, "archive", "LEDGER", "deleted"))
		var entries []map[string]any
		r := cli("ledger", "show", "--session", "rot-old", "--json")
		for line := range strings.SplitSeq(strings.TrimSpace(r.stdout), "\n") {
			var e map[string]any
			if json.Unmarshal([]byte(line), &e) == nil {
				entries = append(entries, e)
			}
		}
		keys := cli("keys", "list")
		nKeys := strings.Count(keys.stdout, "\nv")
		status = "tombstones " + itoa(len(tombs)) + ", rot-old hot entries " + itoa(len(entries)) + ", keys " + itoa(nKeys)
		if len(tombs) > 0 && len(entries) == 1 && nKeys >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the rotator did not complete a cycle within 60s: %s", status)
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Log(status)
	// The busy session was protected: its hot chain still starts at n=1 or
	// holds its recent window, and everything verifies.
	for _, args := range [][]string{
		{"archive", "verify"},
		{"ledger", "verify"},
		{"ledger", "verify", "--archive"},
	} {
		if r := cli(args...); r.code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
	// The rotator's own chain holds the key rotations and the deletions.
	r := cli("ledger", "show", "--session", "_rotator", "--json")
	for _, want := range []string{`"hook_event":"KeyRotated"`, `"hook_event":"ArchiveSegmentDeleted"`, `"hook_event":"KeyRetired"`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("_rotator chain lacks %s:\n%s", want, r.stdout)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

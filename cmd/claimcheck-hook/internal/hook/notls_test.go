//go:build oneshot_notls

package hook

import (
	"path/filepath"
	"strings"
	"testing"
)

// The lean build (no TLS) given a tls:// URL keeps the event in its spool
// and says which binary speaks TLS; a gated event fails closed.
func TestLeanBuildSpoolsAndNamesTheTLSBinary(t *testing.T) {
	f := setup(t, true)
	f.env["CLAIMCHECK_NATS_URL"] = strings.Replace(f.env["CLAIMCHECK_NATS_URL"], "nats://", "tls://", 1)
	r := runHook(t, f.env, hookJSON("s-tls", "PostToolUse", ""))
	if r.code != 0 || !strings.Contains(r.stderr, "claimcheck-hook-tls") {
		t.Fatalf("code=%d stderr=%q, want the event spooled and claimcheck-hook-tls named", r.code, r.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(f.env["CLAIMCHECK_HOOK_STATE_DIR"], "spool", "*.evt"))
	if len(files) != 1 {
		t.Fatalf("%d spooled, want 1", len(files))
	}
	v := runHook(t, f.env, "", "--version")
	if !strings.Contains(v.stdout, "without TLS") {
		t.Fatalf("--version of the lean build: %q", v.stdout)
	}
}

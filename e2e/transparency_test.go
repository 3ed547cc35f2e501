package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claimcheck/claimcheck/pkg/natstest"
)

// TestTransparencyEndToEnd: `claimcheck up` logs the ledger in a Merkle
// tree whose checkpoints its local witness cosigns; an entry's inclusion
// proof and an attestation's bundle check offline and fail when a byte of
// them changes; and the NATS
// store restored from an older copy (the witness's state kept, as a
// witness on another host keeps it) is caught: the log refuses to issue a
// checkpoint and `ledger verify` exits 1 naming the rollback.
func TestTransparencyEndToEnd(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	listen := fmt.Sprintf("127.0.0.1:%d", natstest.FreePort(t))
	upEnvVars := []string{"CLAIMCHECK_ROTATOR_CHECKPOINT_INTERVAL=200ms"}
	p, url := upEnv(t, upEnvVars, data, listen)
	env := []string{"CLAIMCHECK_NATS_URL=" + url, "CLAIMCHECK_HOOK_STATE_DIR=" + filepath.Join(dir, "hook"), "CLAIMCHECK_HOOK_GATE=false"}
	const session = "00893aaf-19fa-41d2-8238-13269b9b3ca0"
	names, bodies := readFixtures(t)
	send := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			if r := runBin(t, env, bodies[i], "claimcheck-hook"); r.code != 0 {
				t.Fatalf("hook for %s: exit %d %s", names[i], r.code, r.stderr)
			}
		}
	}
	// verified waits until `ledger verify` passes with a checkpoint of at
	// least n messages cosigned by the local witness, and returns its
	// output.
	verified := func(n int) string {
		t.Helper()
		var out string
		natstest.Eventually(t, 30*time.Second, func() error {
			r := runBin(t, nil, nil, "claimcheck", "ledger", "verify", "--nats-url", url, "--data-dir", data)
			out = r.stdout + r.stderr
			var got int
			if i := strings.Index(out, "match the checkpoint of "); i >= 0 {
				_, _ = fmt.Sscanf(out[i+len("match the checkpoint of "):], "%d", &got)
			}
			if r.code != 0 || got < n || !strings.Contains(out, "cosigned by 1 witness(es); 1 checkpoint(s) held elsewhere are consistent") {
				return fmt.Errorf("ledger verify: exit %d (want a cosigned checkpoint of %d or more):\n%s", r.code, n, out)
			}
			return nil
		})
		return out
	}
	send(0, 4)
	verified(4)

	// The proof of the session's first entry checks offline.
	proof := runBin(t, nil, nil, "claimcheck", "ledger", "prove", "--session", session, "--n", "1", "--nats-url", url, "--data-dir", data)
	keys := runBin(t, nil, nil, "claimcheck", "ledger", "checkpoint", "--keys", "--nats-url", url, "--data-dir", data)
	wkey := runBin(t, nil, nil, "claimcheck", "witness", "key", "--dir", filepath.Join(data, "witness"))
	if proof.code != 0 || keys.code != 0 || wkey.code != 0 {
		t.Fatalf("prove %d %s / checkpoint --keys %d %s / witness key %d %s", proof.code, proof.stderr, keys.code, keys.stderr,
			wkey.code, wkey.stderr)
	}
	proofFile, keysFile := filepath.Join(dir, "proof"), filepath.Join(dir, "keys")
	if err := os.WriteFile(proofFile, []byte(proof.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keysFile, []byte(keys.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	check := func(file string) result {
		return runBin(t, nil, nil, "claimcheck", "ledger", "check-proof", file, "--keys", keysFile,
			"--witness-key", strings.TrimSpace(wkey.stdout), "--min-witnesses", "1")
	}
	if r := check(proofFile); r.code != 0 || !strings.Contains(r.stdout, "session "+session+" n=1 ") {
		t.Fatalf("check-proof: exit %d %q %s, want ok naming entry 1", r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(proof.stdout, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "index ") && i > 0 && len(l) > 10 && !strings.HasPrefix(l, "— ") && !strings.HasPrefix(l, "claimcheck.") {
			// A hash line or the extra data: flip one base64 character.
			flipped := append([]string(nil), lines...)
			b := []byte(l)
			if m := len(b) / 2; b[m] == 'A' {
				b[m] = 'B'
			} else {
				b[m] = 'A'
			}
			flipped[i] = string(b)
			f := filepath.Join(dir, fmt.Sprintf("proof.%d", i))
			if err := os.WriteFile(f, []byte(strings.Join(flipped, "\n")), 0o600); err != nil {
				t.Fatal(err)
			}
			if r := check(f); r.code != 1 || !strings.HasPrefix(r.stdout, "FAIL ") {
				t.Errorf("proof with line %d changed: exit %d %q, want 1 with a reason", i, r.code, r.stdout)
			}
		}
	}

	// An attestation's bundle checks offline, and not with a byte changed.
	a := newAgent(t, append(env, "CLAIMCHECK_DATA_DIR="+data), "bundled")
	a.prompt(matrixPrompt)
	a.bash("go test ./...", goTestPass)
	v, r := a.claim("done", "test_pass", `{"command_substring":"go test ./..."}`)
	if r.code != 0 || v.AttestationID == "" {
		t.Fatalf("claim: %+v", r)
	}
	var bundled result
	natstest.Eventually(t, 30*time.Second, func() error {
		bundled = runBin(t, nil, nil, "claimcheck", "attest", "bundle", v.AttestationID, "--nats-url", url, "--data-dir", data)
		if bundled.code != 0 {
			return fmt.Errorf("attest bundle: exit %d %s", bundled.code, bundled.stderr)
		}
		return nil
	})
	bundleFile := filepath.Join(dir, "bundle.json")
	if err := os.WriteFile(bundleFile, []byte(bundled.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	verifyBundle := func(file string) result {
		return runBin(t, nil, nil, "claimcheck", "attest", "verify-bundle", file, "--witness-key", strings.TrimSpace(wkey.stdout),
			"--min-witnesses", "1")
	}
	if r := verifyBundle(bundleFile); r.code != 0 || !strings.Contains(r.stdout, "ok: attestation "+v.AttestationID) {
		t.Fatalf("verify-bundle: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	for _, at := range []int{len(bundled.stdout) / 3, len(bundled.stdout) / 2, len(bundled.stdout) * 4 / 5} {
		b := []byte(bundled.stdout)
		for b[at] == ' ' || b[at] == '\n' {
			at++
		}
		b[at] ^= 0x01
		f := filepath.Join(dir, fmt.Sprintf("bundle.%d", at))
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if r := verifyBundle(f); r.code != 1 || !strings.HasPrefix(r.stdout, "FAIL ") {
			t.Errorf("bundle with byte %d changed: exit %d %q, want 1 with a reason", at, r.code, r.stdout)
		}
	}

	// Keep a copy of the store as it is now, go on, then restore it.
	p.Stop(t)
	store, backup := filepath.Join(data, "nats"), filepath.Join(dir, "nats-backup")
	if out, err := exec.Command("cp", "-a", store, backup).CombinedOutput(); err != nil {
		t.Fatalf("copy the store: %v %s", err, out)
	}
	p, url = upEnv(t, upEnvVars, data, listen)
	env[0] = "CLAIMCHECK_NATS_URL=" + url
	send(4, len(bodies))
	verified(len(bodies))
	p.Stop(t)
	if err := os.RemoveAll(store); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", backup, store).CombinedOutput(); err != nil {
		t.Fatalf("restore the store: %v %s", err, out)
	}
	p, url = upEnv(t, upEnvVars, data, listen)
	env[0] = "CLAIMCHECK_NATS_URL=" + url
	send(0, 1)
	p.WaitStderr(t, 30*time.Second, "a witness holds a larger tree than the log")
	r = runBin(t, nil, nil, "claimcheck", "ledger", "verify", "--nats-url", url, "--data-dir", data)
	if r.code != 1 || !strings.Contains(r.stdout, "rolled back") {
		t.Fatalf("ledger verify after the rollback: exit %d\n%s%s\nwant 1 naming the rollback", r.code, r.stdout, r.stderr)
	}
	if bytes.Contains([]byte(p.Stderr()), []byte("panic:")) {
		t.Fatalf("up panicked:\n%s", p.Stderr())
	}
}

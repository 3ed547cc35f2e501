package cli

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimcheck/claimcheck/pkg/config"
)

// TestSystemdUnitRunsUpAsItsOwnUser: the unit under deploy/systemd runs
// `claimcheck up` with flags up accepts, as a user that is not root, with
// its data private (StateDirectoryMode 0700, UMask 0077) and the process
// confined; systemd-analyze, where the machine has it, finds nothing to say.
func TestSystemdUnitRunsUpAsItsOwnUser(t *testing.T) {
	const unit = "../../../../deploy/systemd/claimcheck.service"
	raw, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			keys[k] = v
		}
	}
	for k, want := range map[string]string{
		"StateDirectory": "claimcheck", "StateDirectoryMode": "0700", "UMask": "0077", "NoNewPrivileges": "yes",
		"ProtectHome": "yes", "ProtectSystem": "strict", "CapabilityBoundingSet": "", "PrivateTmp": "yes",
	} {
		if got, ok := keys[k]; !ok || got != want {
			t.Errorf("%s=%q, want %q", k, got, want)
		}
	}
	if u := keys["User"]; u == "" || u == "root" {
		t.Errorf("User=%q: claimcheck must run as a user of its own", u)
	}
	exe := strings.Fields(keys["ExecStart"])
	if len(exe) < 2 || filepath.Base(exe[0]) != "claimcheck" || exe[1] != "up" {
		t.Fatalf("ExecStart %q does not run claimcheck up", keys["ExecStart"])
	}
	a := &app{env: Env{Getenv: func(string) string { return "" }, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}, v: config.New()}
	up, rest, err := a.rootCommand().Find(exe[1:])
	if err != nil || up.Name() != "up" {
		t.Fatalf("ExecStart: %v", err)
	}
	if err := up.ParseFlags(rest); err != nil {
		t.Fatalf("ExecStart's flags are not up's: %v", err)
	}
	if d := up.Flag("data-dir").Value.String(); d != "/var/lib/"+keys["StateDirectory"] {
		t.Errorf("--data-dir %s is not the StateDirectory", d)
	}
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Log("systemd-analyze is not on this machine; the unit's syntax is not checked by systemd")
		return
	}
	dir := t.TempDir()
	fake := filepath.Join(dir, "claimcheck")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	local := filepath.Join(dir, "claimcheck.service")
	if err := os.WriteFile(local, bytes.ReplaceAll(raw, []byte(exe[0]), []byte(fake)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("systemd-analyze", "verify", "--man=no", local).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}

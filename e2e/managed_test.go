package e2e

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A user without the rights to write Claude Code's managed settings gets a
// clear error from `hooks install --managed`, and nothing is written: the
// managed layer is exactly what the developer's user (and so the agent)
// cannot change. Run as a user other than root (root drops to nobody).
func TestManagedInstallRefusedWithoutRights(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run claimcheck as another user; cmd/claimcheck TestManagedInstallNeedsRights covers a non-root run")
	}
	// Everything nobody must reach: a world-readable copy of the binary.
	pub, err := os.MkdirTemp("", "claimcheck-managed-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(pub) })
	if err := os.Chmod(pub, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(pub, "claimcheck")
	copyFile(t, bin("claimcheck"), exe, 0o755)
	hook := filepath.Join(pub, "claimcheck-hook")
	copyFile(t, bin("claimcheck-hook"), hook, 0o755)
	settingsDir := filepath.Join(pub, "etc", "claude-code")
	if err := os.MkdirAll(settingsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(settingsDir, "managed-settings.json")
	policy := []byte(`{"permissions": {"deny": ["Bash(curl *)"]}}` + "\n")
	if err := os.WriteFile(settings, policy, 0o644); err != nil {
		t.Fatal(err)
	}
	systemDir := filepath.Join(pub, "etc", "claimcheck")
	for _, args := range [][]string{
		{"hooks", "install", "--managed", "--settings", settings, "--system-dir", systemDir, "--hook-command", hook},
		{"hooks", "uninstall", "--managed", "--settings", settings, "--system-dir", systemDir},
	} {
		cmd := exec.Command(exe, args...)
		cmd.Env = []string{"HOME=" + pub, "PATH=/usr/bin:/bin"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if err == nil || !strings.Contains(errb.String(), settings) || !strings.Contains(errb.String(), "sudo claimcheck hooks "+args[1]+" --managed") {
			t.Fatalf("claimcheck %s as nobody: err %v\nstdout %s\nstderr %s\nwant a refusal naming %s and how to run it", strings.Join(args[:3], " "),
				err, out.String(), errb.String(), settings)
		}
	}
	if b, _ := os.ReadFile(settings); !bytes.Equal(b, policy) {
		t.Fatalf("the managed settings changed:\n%s", b)
	}
	if _, err := os.Stat(systemDir); !os.IsNotExist(err) {
		t.Fatalf("%s created without the rights", systemDir)
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = in.Close() }()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

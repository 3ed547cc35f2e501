package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// goFloorSource is the smallest Go program that does what every hook run
// does at the end: write a line and exit.
const goFloorSource = `package main

import "os"

func main() { _, _ = os.Stdout.WriteString("ok\n") }
`

// buildGoFloor builds goFloorSource the way the Makefile builds the hook
// (static, no cgo, stripped, trimmed paths) and returns the binary's path:
// the exec + Go runtime start-up floor under every claimcheck-hook figure.
func buildGoFloor(tmp string) (string, error) {
	dir := filepath.Join(tmp, "gofloor")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(goFloorSource), 0o600); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module gofloor\n\ngo 1.26\n"), 0o600); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "gofloor")
	c := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, ".")
	c.Dir = dir
	c.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=")
	if out, err := c.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the Go start-up floor: %w: %s", err, out)
	}
	return bin, nil
}

// goFloorName labels the floor's row in the hook tables.
const goFloorName = "static Go binary writing one line (Go start-up floor)"

package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// client is one pinned agent CLI (clients.json).
type client struct {
	Name    string `json:"name"`
	Package string `json:"package"`
	Version string `json:"version"`
	// Executable is the native binary's name in the platform package.
	Executable string `json:"executable"`
}

func (c client) String() string { return c.Name + " " + c.Version }

func readClients() ([]client, error) {
	b, err := os.ReadFile("clients.json")
	if err != nil {
		return nil, err
	}
	var f struct {
		Clients []client `json:"clients"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("clients.json: %w", err)
	}
	return f.Clients, nil
}

func clientNamed(name string) (client, error) {
	cs, err := readClients()
	if err != nil {
		return client{}, err
	}
	for _, c := range cs {
		if c.Name == name {
			return c, nil
		}
	}
	return client{}, fmt.Errorf("clients.json pins no %s", name)
}

// cacheRoot is where the clients are installed, one directory per
// package and version, reused across runs: $CLAIMCHECK_AGENT_CACHE, else
// the user's cache directory's claimcheck-e2e.
func cacheRoot() string {
	if d := os.Getenv("CLAIMCHECK_AGENT_CACHE"); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	return filepath.Join(d, "claimcheck-e2e")
}

func installDir(c client) string {
	return filepath.Join(cacheRoot(), c.Package+"@"+c.Version)
}

// install installs the client with npm unless its cache directory already
// holds it, and returns its executable. It needs the npm registry: call it
// on the host network only. A failed install leaves nothing behind.
func install(c client) (string, error) {
	dir := installDir(c)
	if exe, err := executable(c, dir); err == nil {
		return exe, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", errors.New("npm is not installed (apt-get install nodejs npm)")
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".partial-")
	if err != nil {
		return "", err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "install", "--prefix", tmp, "--include=optional", "--no-save", "--no-package-lock", "--no-audit", "--no-fund",
		"--loglevel=error", c.Package+"@"+c.Version)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("npm install %s@%s: %w\n%s", c.Package, c.Version, err, out.String())
	}
	if _, err := executable(c, tmp); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another run may have installed it meanwhile.
		if exe, err2 := executable(c, dir); err2 == nil {
			return exe, nil
		}
		return "", err
	}
	return executable(c, dir)
}

// executable finds the client's executable under an npm prefix. Claude
// Code and Codex ship a native one in a platform package named in their
// optionalDependencies: @anthropic-ai/claude-code-linux-x64/claude, and
// @openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex (an
// npm alias of @openai/codex@VERSION-linux-x64); the glibc build is
// preferred to the musl one. Gemini CLI has no native executable (its
// platform packages are node-pty's): it is node, the script its
// package.json names as its bin (bundle/gemini.js, `#!/usr/bin/env node`).
func executable(c client, prefix string) (string, error) {
	mod := filepath.Join(prefix, "node_modules", filepath.FromSlash(c.Package))
	b, err := os.ReadFile(filepath.Join(mod, "package.json"))
	if err != nil {
		return "", err
	}
	var pj struct {
		Version  string            `json:"version"`
		Optional map[string]string `json:"optionalDependencies"`
		Bin      map[string]string `json:"bin"`
	}
	if err := json.Unmarshal(b, &pj); err != nil {
		return "", fmt.Errorf("%s/package.json: %w", mod, err)
	}
	if pj.Version != c.Version {
		return "", fmt.Errorf("%s is version %s, not %s", mod, pj.Version, c.Version)
	}
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	var cands []string
	for name := range pj.Optional {
		if strings.HasSuffix(name, "-"+runtime.GOOS+"-"+arch) || strings.HasSuffix(name, "-"+runtime.GOOS+"-"+arch+"-musl") {
			cands = append(cands, name)
		}
	}
	sort.Strings(cands) // …-linux-x64 before …-linux-x64-musl
	for _, name := range cands {
		pkg := filepath.Join(prefix, "node_modules", filepath.FromSlash(name))
		// Codex's platform package keeps it under vendor/<target triple>/bin.
		vendored, _ := filepath.Glob(filepath.Join(pkg, "vendor", "*", "bin", c.Executable))
		for _, exe := range append([]string{filepath.Join(pkg, c.Executable)}, vendored...) {
			if fi, err := os.Stat(exe); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				return exe, nil
			}
		}
	}
	if script, ok := pj.Bin[c.Executable]; ok && strings.HasSuffix(script, ".js") {
		// No native executable: a node client.
		exe := filepath.Join(mod, filepath.FromSlash(script))
		if fi, err := os.Stat(exe); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return exe, nil
		}
	}
	return "", fmt.Errorf("no native executable of %s@%s for %s/%s under %s (looked in %v)", c.Package, c.Version, runtime.GOOS, arch, prefix, cands)
}

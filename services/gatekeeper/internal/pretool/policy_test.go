package pretool

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimcheck/claimcheck/schemas"
)

func TestDefaultPolicy(t *testing.T) {
	p := defaultPolicy(t)
	if p.Version == "" || !strings.HasPrefix(p.Digest, "sha256:") || p.Source != "built-in "+schemas.DefaultPretoolPolicy {
		t.Fatalf("version %q digest %q source %q", p.Version, p.Digest, p.Source)
	}
	// The digest is of the canonical form: formatting does not change it.
	again, err := Load("x", append([]byte("\n  "), p.Canonical...), validator(t))
	if err != nil {
		t.Fatal(err)
	}
	if again.Digest != p.Digest || string(again.Canonical) != string(p.Canonical) {
		t.Error("digest depends on formatting")
	}
	raw, _ := schemas.Policies.ReadFile(schemas.DefaultPretoolPolicy)
	if string(raw) == string(p.Canonical) {
		t.Error("the built-in file is already canonical; the formatting test above proves nothing")
	}
}

func TestLoadFile(t *testing.T) {
	v := validator(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "pretool.json")
	if err := os.WriteFile(path, defaultPolicy(t).Canonical, 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := LoadFile(path, v)
	if err != nil || p.Source != path {
		t.Fatalf("LoadFile: %v (source %q)", err, p.Source)
	}
	if _, err := LoadFile(filepath.Join(dir, "missing.json"), v); err == nil || !strings.Contains(err.Error(), "pretool policy file") {
		t.Fatalf("missing file: %v", err)
	}
}

func TestLoadRejectsBadPolicies(t *testing.T) {
	v := validator(t)
	good := string(defaultPolicy(t).Canonical)
	tests := []struct{ name, from, to, want string }{
		{"unknown top-level field", `"v":1`, `"v":1,"surprise":true`, "surprise"},
		{"unknown nested field", `"max_shell_depth":6`, `"max_shell_depth":6,"bogus":1`, "bogus"},
		{"unknown tool rule field", `"otherwise":"deny"`, `"otherwise":"deny","sometimes":"ask"`, "sometimes"},
		{"wrong type", `"max_command_bytes":65536`, `"max_command_bytes":"big"`, "/limits/max_command_bytes"},
		{"out of range", `"max_shell_depth":6`, `"max_shell_depth":0`, "/limits/max_shell_depth"},
		{"action allow", `"destructive":"deny"`, `"destructive":"allow"`, "/actions/destructive"},
		{"missing action", `"dynamic":"ask",`, ``, "dynamic"},
		{"missing section", `"urls":`, `"urlz":`, "urls"},
		{"wrong array type", `"hook_programs":["claimcheck-hook","claimcheck-hook-tls"]`, `"hook_programs":"claimcheck-hook"`, "/shell/hook_programs"},
		{"bad scheme", `"schemes":["http","https"]`, `"schemes":["http","file"]`, "/urls/schemes"},
		{"bad domain", `"*.internal"`, `"*.inter nal"`, "/urls/denied_domains"},
		{"bad tool name", `"Bash","PowerShell"`, `"Bash","Power Shell"`, "/tools/default/allow/1"},
		{"bad tool glob", `"mcp__*"]`, `"mcp__["]`, "/tools/default/allow"},
		{"bad path glob", `".env",".env.*"`, `".env","[.env"`, "paths.sensitive[1]"},
		{"empty pattern", `".env",".env.*"`, `".env",""`, "/paths/sensitive/1"},
		{"escaping pattern", `".env",".env.*"`, `".env","../.env"`, "paths.sensitive[1]"},
		{"bad version", `"version":"`, `"version":"../`, "version"},
		{"wrong v", `"v":1`, `"v":2`, "/v"},
		{"not JSON", good, `{`, "pretool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := strings.Replace(good, tt.from, tt.to, 1)
			if tt.from == good {
				doc = tt.to
			}
			if doc == good {
				t.Fatalf("mutation %q did not apply", tt.from)
			}
			_, err := Load("policies/pretool.json", []byte(doc), v)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "policies/pretool.json") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrInvalid naming the file and %q", err, tt.want)
			}
		})
	}
}

func TestCompilePattern(t *testing.T) {
	for _, tt := range []struct {
		pattern, path string
		beneath, ok   bool
	}{
		{"/etc", "/etc", false, true},
		{"/etc", "/etc/hosts", true, true},
		{"/etc", "/etc/hosts", false, false},
		{"/etc", "/etcetera", true, false},
		{"~/.ssh", "/home/dev/.ssh/authorized_keys", true, true},
		{".env", "/a/b/.env", false, true},
		{".env", "/a/.env/b", false, false},
		{".env.*", "/a/.env.local", false, true},
		{".aws/credentials", "/home/dev/.aws/credentials", false, true},
		{".aws/credentials", "/home/dev/aws/credentials", false, false},
		{".ssh/", "/home/dev/.ssh/github", false, true},
		{"/home/*", "/home/dev", false, true},
		{"/home/*", "/home/dev/x", false, false},
	} {
		p, err := compilePattern(tt.pattern)
		if err != nil {
			t.Fatalf("%s: %v", tt.pattern, err)
		}
		ctx := &context{home: "/home/dev", homeSet: true}
		f := ctx.resolve(tt.path, "")
		if got := ctx.match(p, f, tt.beneath); got != tt.ok {
			t.Errorf("match(%q, %q, beneath=%v) = %v", tt.pattern, tt.path, tt.beneath, got)
		}
	}
	for _, bad := range []string{"", "..", "../x", "a/../../b", "[", "x\x00"} {
		if _, err := compilePattern(bad); err == nil {
			t.Errorf("compilePattern(%q) accepted", bad)
		}
	}
}

package policy

import (
	"errors"
	"strings"
	"testing"
)

func TestCovers(t *testing.T) {
	p, err := Default(val(t))
	if err != nil {
		t.Fatal(err)
	}
	cmd := func(c string) []byte { return []byte(`{"command_substring":` + quoteJSON(c) + `}`) }
	tests := []struct {
		scope, validator string
		args             []byte
		want             bool
	}{
		{"tests", "test_pass", cmd("go test ./..."), true},
		{"tests", "command_zero_exit", cmd("go test ./..."), false},
		{"tests", "file_diff_present", []byte(`{"path":"add.go"}`), false},
		{"work", "file_diff_present", []byte(`{"path":"add.go"}`), true},
		{"work", "http_2xx", []byte(`{"url":"https://x.example/"}`), true},
		{"change", "file_diff_present", []byte(`{"path":"add.go"}`), true},
		{"change", "test_pass", cmd("go test ./..."), false},
		{"build", "test_pass", cmd("pytest -q"), true},
		{"build", "command_zero_exit", cmd("go build ./..."), true},
		{"build", "command_zero_exit", cmd("CGO_ENABLED=0 go build -o bin/x ./cmd/x"), true},
		{"build", "command_zero_exit", cmd("echo go build"), false},
		{"deploy", "test_pass", cmd("go test ./..."), false},
		{"deploy", "command_zero_exit", cmd("kubectl rollout status deploy/web"), true},
		{"deploy", "command_zero_exit", cmd("kubectl get pods"), false},
		{"deploy", "http_2xx", []byte(`{"url":"https://x.example/"}`), false},
		{"merge", "command_zero_exit", cmd("git push origin main"), true},
		{"merge", "command_zero_exit", cmd("git status"), false},
		{"fetch", "http_2xx", []byte(`{"url":"https://x.example/health"}`), true},
		{"lint", "command_zero_exit", cmd("golangci-lint run ./..."), true},
		{"lint", "command_zero_exit", cmd("npm run lint"), true},
		{"lint", "command_zero_exit", cmd("npm run build"), false},
		{"security", "command_zero_exit", cmd("govulncheck ./..."), true},
		{"migration", "command_zero_exit", cmd("alembic upgrade head"), true},
		{"deps", "command_zero_exit", cmd("go get golang.org/x/text@v0.31.0"), true},
		{"perf", "command_zero_exit", cmd("go test -bench . ./..."), false},
		{"perf", "test_pass", cmd("go test -bench . ./..."), false},
		{"coverage", "test_pass", cmd("go test -cover ./..."), false},
		{"nonsense", "test_pass", cmd("go test ./..."), false},
		{"lint", "command_zero_exit", []byte(`{"command_substring":1}`), false},
		{"lint", "command_zero_exit", []byte(`not json`), false},
	}
	for _, tt := range tests {
		t.Run(tt.scope+"/"+tt.validator+"/"+string(tt.args), func(t *testing.T) {
			if got := p.Covers(tt.scope, tt.validator, tt.args); got != tt.want {
				t.Fatalf("Covers = %v, want %v", got, tt.want)
			}
		})
	}
}

func quoteJSON(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

func TestEveryScopeOfTheGateIsInTheDefaultPolicy(t *testing.T) {
	p, err := Default(val(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"work", "tests", "build", "change", "deploy", "merge", "fetch", "lint", "perf", "coverage",
		"security", "deps", "migration"} {
		if _, ok := p.Scope(s); !ok {
			t.Errorf("scope %s missing", s)
		}
	}
	if r, _ := p.Scope("perf"); len(r.BackedBy) != 0 {
		t.Errorf("perf is backed by %v; no validator measures performance", r.BackedBy)
	}
}

func TestLoadRejectsBadScopes(t *testing.T) {
	v := val(t)
	base, _ := Default(v)
	good := string(base.Canonical)
	tests := []struct{ name, doc, want string }{
		{"undefined validator", strings.Replace(good, `"tests":{"backed_by":[{"validator":"test_pass"}]`,
			`"tests":{"backed_by":[{"validator":"crystal_ball"}]`, 1), "scopes.tests.backed_by[0].validator"},
		{"empty program", strings.Replace(good, `"programs":["git push"`, `"programs":["   "`, 1), "scopes.merge.backed_by[0].programs[0]"},
		{"unknown scope", strings.Replace(good, `"scopes":{`, `"scopes":{"vibes":{"backed_by":[]},`, 1), "vibes"},
		{"unknown member", strings.Replace(good, `"backed_by":[{"validator":"test_pass"}]`,
			`"backed_by":[{"validator":"test_pass","strict":true}]`, 1), "strict"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.doc == good {
				t.Fatal("mutation did not apply")
			}
			_, err := Load("policies/test.json", []byte(tt.doc), v)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrInvalid naming %q", err, tt.want)
			}
		})
	}
}

func TestChangeTask(t *testing.T) {
	p, _ := Default(val(t))
	for _, tt := range []struct {
		verbs []string
		want  bool
	}{
		{[]string{"fix"}, true},
		{[]string{"run", "update"}, true},
		{[]string{"run", "test"}, false},
		{[]string{"deploy"}, false},
		{nil, false},
	} {
		if got := p.ChangeTask(tt.verbs); got != tt.want {
			t.Errorf("ChangeTask(%v) = %v, want %v", tt.verbs, got, tt.want)
		}
	}
}

package policy

import (
	"errors"
	"strings"
	"testing"

	"github.com/claimcheck/claimcheck/schemas/validation"
)

func val(t testing.TB) *validation.Validator {
	v, err := validation.New()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestDefaultPolicy(t *testing.T) {
	p, err := Default(val(t))
	if err != nil {
		t.Fatal(err)
	}
	if p.Version == "" || !strings.HasPrefix(p.Digest, "sha256:") {
		t.Fatalf("version %q digest %q", p.Version, p.Digest)
	}
	for claim, want := range map[string]string{Done: "test_pass", Blocked: "ladder_exhaustion_proof", Delegation: "fetch_attempt_proof", Partial: "file_diff_present"} {
		if ok, _ := p.Allowed(claim, want); !ok {
			t.Errorf("%s does not allow %s", claim, want)
		}
	}
	if ok, allowed := p.Allowed(Done, "ladder_exhaustion_proof"); ok || len(allowed) == 0 {
		t.Error("done allows ladder_exhaustion_proof")
	}
	// The digest is of the canonical form: formatting does not change it.
	again, _ := Load("x", append([]byte("\n  "), p.Canonical...), val(t))
	if again.Digest != p.Digest {
		t.Error("digest depends on formatting")
	}
}

func TestLoadRejectsBadPolicies(t *testing.T) {
	v := val(t)
	base, _ := Default(v)
	good := string(base.Canonical)
	tests := []struct{ name, doc, want string }{
		{"unknown field", strings.Replace(good, `"v":1`, `"v":1,"surprise":true`, 1), "surprise"},
		{"unknown validator field", strings.Replace(good, `"binds":["paths"]`, `"binds":["paths"],"bogus":1`, 1), "bogus"},
		{"bad bind", strings.Replace(good, `"binds":["paths"]`, `"binds":["everything"]`, 1), "binds"},
		{"undefined validator", strings.Replace(good, `"validators":["ladder_exhaustion_proof"]`, `"validators":["telepathy"]`, 1), "telepathy"},
		{"missing claim", strings.Replace(good, `"blocked":`, `"blockedx":`, 1), "blocked"},
		{"not json", `{`, "policy"},
		{"bad version", strings.Replace(good, `"version":"`, `"version":"../`, 1), "version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.doc == good {
				t.Fatal("mutation did not apply")
			}
			_, err := Load("policies/test.json", []byte(tt.doc), v)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "policies/test.json") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrInvalid naming the file and %q", err, tt.want)
			}
		})
	}
}

func TestDecodeArgs(t *testing.T) {
	p, _ := Default(val(t))
	tp := p.Validators["test_pass"]
	a, err := tp.DecodeArgs([]byte(`{"command_substring":"  go test ./... ","extra":"ignored"}`))
	if err != nil || a.String("command_substring") != "go test ./..." || a.Int("min_runs") != 1 {
		t.Fatalf("args %+v err %v", a, err)
	}
	for raw, want := range map[string]string{
		`{"command_substring":"go"}`: "too weak",
		`{}`:                         "required",
		`{"command_substring":5}`:    "must be a string",
		`{"command_substring":"go test","min_runs":0}`:            "at least 1",
		`{"command_substring":"go test","min_runs":"two"}`:        "integer",
		`{"command_substring":"go test","command_substring":"x"}`: "not a JSON object",
		`[1]`:                                 "not a JSON object",
		`null`:                                "not null",
		"{\"command_substring\":\"go \xff\"}": "not a JSON object",
		`{"command_substring":"` + strings.Repeat("a", 9000) + `"}`: "limit",
	} {
		if _, err := tp.DecodeArgs([]byte(raw)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("DecodeArgs(%.60s) = %v, want %q", raw, err, want)
		}
	}
}

func FuzzDecodeArgs(f *testing.F) {
	p, err := Default(val(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(`{"command_substring":"go test ./...","min_runs":2}`))
	f.Add([]byte(`{"url":"https://example.com","path":"a/b"}`))
	f.Add([]byte(`{"min_runs":1e400}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, rule := range p.Validators {
			a, err := rule.DecodeArgs(raw)
			if err != nil {
				var ae *ArgError
				if !errors.As(err, &ae) {
					t.Fatalf("unclassified error %v", err)
				}
				continue
			}
			for name, spec := range rule.Args {
				if spec.Required && spec.Type == "string" && a.String(name) == "" {
					t.Fatalf("required %s empty after success", name)
				}
			}
		}
	})
}

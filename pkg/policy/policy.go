// Package policy loads claimcheck's claim policy: which validators may back
// each claim type, the arguments each validator takes, and the contract
// fields its arguments bind to. Policies are data (JSON, policy.v1 schema),
// validated on load with errors that name the file, the field and the
// reason; each is identified by its version and the SHA-256 of its RFC 8785
// form, which every verdict and attestation records.
package policy

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/claimcheck/claimcheck/pkg/canon"
	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/schemas/validation"
)

// Claim types.
const (
	Done       = "done"
	Blocked    = "blocked"
	Delegation = "delegation"
	Partial    = "partial"
)

// Validators known to this release.
var Validators = []string{"command_zero_exit", "test_pass", "file_diff_present", "http_2xx", "fetch_attempt_proof",
	"ladder_exhaustion_proof"}

// Policy is a loaded, validated policy.
type Policy struct {
	V           int                      `json:"v"`
	Version     string                   `json:"version"`
	Description string                   `json:"description,omitempty"`
	Claims      map[string]ClaimRule     `json:"claims"`
	Validators  map[string]ValidatorRule `json:"validators"`
	// Scopes map each kind of claim the Stop gate reads in prose to the
	// attestations that back it (see Covers); nil in policies that predate
	// them.
	Scopes map[string]ScopeRule `json:"scopes,omitempty"`
	// ChangeVerbs: a done for a task whose prompt uses one of these verbs
	// and names files needs the change scope (see ChangeTask).
	ChangeVerbs []string `json:"change_verbs,omitempty"`

	// Digest is "sha256:<hex>" of the policy's canonical form; Source names
	// where it was loaded from.
	Digest string `json:"-"`
	Source string `json:"-"`
	// Canonical is the policy document in RFC 8785 form.
	Canonical []byte `json:"-"`
}

// ClaimRule lists the validators allowed for a claim type.
type ClaimRule struct {
	Description string   `json:"description,omitempty"`
	Validators  []string `json:"validators"`
}

// ScopeRule lists what backs one scope of claim.
type ScopeRule struct {
	Description string    `json:"description,omitempty"`
	BackedBy    []Backing `json:"backed_by"`
}

// Backing is one way to back a scope: an attestation of Validator and, when
// Programs is set, of a command that runs one of them (as command.Runs
// reads a line: `go test -cover ./...` runs "go test").
type Backing struct {
	Validator string   `json:"validator"`
	Programs  []string `json:"programs,omitempty"`
}

// ValidatorRule describes a validator's arguments and bindings.
type ValidatorRule struct {
	Description string             `json:"description,omitempty"`
	Binds       []string           `json:"binds"`
	Args        map[string]ArgSpec `json:"args"`
	Params      Params             `json:"params,omitzero"`
}

// ArgSpec constrains one argument.
type ArgSpec struct {
	Type      string         `json:"type"`
	Required  bool           `json:"required,omitempty"`
	MinLength *int           `json:"min_length,omitempty"`
	MaxLength *int           `json:"max_length,omitempty"`
	Min       *int64         `json:"min,omitempty"`
	Max       *int64         `json:"max,omitempty"`
	Default   jsontext.Value `json:"default,omitempty"`
}

// Params are validator parameters that are not arguments.
type Params struct {
	MinDistinctTools int `json:"min_distinct_tools,omitempty"`
}

// ErrInvalid is wrapped by every load failure.
var ErrInvalid = errors.New("invalid policy")

// Load parses and validates a policy document. source names it in errors.
func Load(source string, raw []byte, v *validation.Validator) (*Policy, error) {
	if err := v.Validate(schemas.PolicyV1, raw); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, source, err)
	}
	var p Policy
	if err := json.Unmarshal(raw, &p, json.RejectUnknownMembers(true)); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, source, err)
	}
	var errs []error
	for _, claim := range []string{Done, Blocked, Delegation, Partial} {
		for _, name := range p.Claims[claim].Validators {
			if _, ok := p.Validators[name]; !ok {
				errs = append(errs, fmt.Errorf("claims.%s.validators: %q is not defined under validators", claim, name))
			}
		}
	}
	for name, rule := range p.Validators {
		for arg, spec := range rule.Args {
			if spec.MinLength != nil && spec.MaxLength != nil && *spec.MinLength > *spec.MaxLength {
				errs = append(errs,
					fmt.Errorf("validators.%s.args.%s: min_length %d exceeds max_length %d", name, arg, *spec.MinLength, *spec.MaxLength))
			}
			if spec.Min != nil && spec.Max != nil && *spec.Min > *spec.Max {
				errs = append(errs, fmt.Errorf("validators.%s.args.%s: min %d exceeds max %d", name, arg, *spec.Min, *spec.Max))
			}
		}
		if name == "fetch_attempt_proof" && rule.Params.MinDistinctTools == 0 {
			errs = append(errs, fmt.Errorf("validators.fetch_attempt_proof.params.min_distinct_tools: required"))
		}
	}
	errs = append(errs, p.checkScopes()...)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, source, err)
	}
	c, err := canon.Canonicalize(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, source, err)
	}
	p.Canonical, p.Digest, p.Source = c, digest.SHA256(c), source
	return &p, nil
}

// LoadFile loads a policy from a file.
func LoadFile(path string, v *validation.Validator) (*Policy, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("policy file: %w", err)
	}
	return Load(path, raw, v)
}

// Default loads the built-in policy.
func Default(v *validation.Validator) (*Policy, error) {
	raw, err := schemas.Policies.ReadFile(schemas.DefaultPolicy)
	if err != nil {
		return nil, err
	}
	return Load("built-in "+schemas.DefaultPolicy, raw, v)
}

// Allowed reports whether validator may back claim, and lists the allowed
// validators for the message.
func (p *Policy) Allowed(claim, validator string) (bool, []string) {
	rule, ok := p.Claims[claim]
	if !ok {
		return false, nil
	}
	return slices.Contains(rule.Validators, validator), rule.Validators
}

// ClaimTypes lists the claim types, sorted.
func (p *Policy) ClaimTypes() []string {
	out := make([]string, 0, len(p.Claims))
	for k := range p.Claims {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// MaxArgsBytes bounds a claim's encoded arguments.
const MaxArgsBytes = 8 << 10

// Args are decoded, checked arguments.
type Args struct {
	strs map[string]string
	ints map[string]int64
}

// String returns a string argument ("" when absent).
func (a Args) String(name string) string { return a.strs[name] }

// Int returns an integer argument (0 when absent).
func (a Args) Int(name string) int64 { return a.ints[name] }

// ArgError explains why arguments were refused.
type ArgError struct{ Reason string }

func (e *ArgError) Error() string { return e.Reason }

// DecodeArgs checks raw (a JSON object) against the validator's argument
// specs: size, strict JSON (no duplicate names, valid UTF-8), declared types,
// required arguments, lengths and ranges; defaults fill absent optional
// arguments. Extra arguments the policy does not declare are allowed and
// ignored.
func (r ValidatorRule) DecodeArgs(raw []byte) (Args, error) {
	args := Args{strs: map[string]string{}, ints: map[string]int64{}}
	if len(raw) > MaxArgsBytes {
		return args, &ArgError{fmt.Sprintf("arguments are %d bytes; the limit is %d", len(raw), MaxArgsBytes)}
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = []byte("{}")
	}
	var m map[string]jsontext.Value
	if err := json.Unmarshal(raw, &m); err != nil {
		return args, &ArgError{"arguments are not a JSON object: " + strings.TrimPrefix(err.Error(), "json: ")}
	}
	if m == nil {
		return args, &ArgError{"arguments must be a JSON object, not null"}
	}
	names := make([]string, 0, len(r.Args))
	for n := range r.Args {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		spec := r.Args[name]
		v, present := m[name]
		if !present || string(v) == "null" {
			if spec.Required {
				return args, &ArgError{fmt.Sprintf("argument %q is required", name)}
			}
			if len(spec.Default) == 0 {
				continue
			}
			v = spec.Default
		}
		switch spec.Type {
		case "string":
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return args, &ArgError{fmt.Sprintf("argument %q must be a string", name)}
			}
			s = strings.TrimSpace(s)
			n := utf8.RuneCountInString(s)
			if spec.MinLength != nil && n < *spec.MinLength {
				return args, &ArgError{fmt.Sprintf("argument %q is too weak: %d characters, at least %d needed", name, n, *spec.MinLength)}
			}
			if spec.MaxLength != nil && n > *spec.MaxLength {
				return args, &ArgError{fmt.Sprintf("argument %q is %d characters; at most %d allowed", name, n, *spec.MaxLength)}
			}
			if strings.ContainsAny(s, "\x00\r") {
				return args, &ArgError{fmt.Sprintf("argument %q contains control characters", name)}
			}
			args.strs[name] = s
		case "integer":
			var i int64
			if err := json.Unmarshal(v, &i); err != nil {
				return args, &ArgError{fmt.Sprintf("argument %q must be an integer", name)}
			}
			if spec.Min != nil && i < *spec.Min {
				return args, &ArgError{fmt.Sprintf("argument %q is %d; at least %d", name, i, *spec.Min)}
			}
			if spec.Max != nil && i > *spec.Max {
				return args, &ArgError{fmt.Sprintf("argument %q is %d; at most %d", name, i, *spec.Max)}
			}
			args.ints[name] = i
		}
	}
	return args, nil
}

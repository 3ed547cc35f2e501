package policy

import (
	"fmt"
	"slices"
	"sort"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/command"
)

// checkScopes reports scope rules that name an undefined validator or a
// program that is not a command.
func (p *Policy) checkScopes() []error {
	var errs []error
	for _, scope := range sortedKeys(p.Scopes) {
		for i, b := range p.Scopes[scope].BackedBy {
			at := fmt.Sprintf("scopes.%s.backed_by[%d]", scope, i)
			if _, ok := p.Validators[b.Validator]; !ok {
				errs = append(errs, fmt.Errorf("%s.validator: %q is not defined under validators", at, b.Validator))
			}
			for j, prog := range b.Programs {
				if _, ok := command.Want(prog); !ok {
					errs = append(errs, fmt.Errorf("%s.programs[%d]: %q is not a command", at, j, prog))
				}
			}
		}
	}
	return errs
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Scope returns the rule of a scope; ok is false when the policy does not
// name it (policies before scopes name none).
func (p *Policy) Scope(scope string) (ScopeRule, bool) {
	r, ok := p.Scopes[scope]
	return r, ok
}

// Covers reports whether an attestation of validator with args (its
// canonical JSON arguments) backs claims of scope. A scope the policy does
// not name is covered by no attestation.
func (p *Policy) Covers(scope, validator string, args []byte) bool {
	rule, ok := p.Scopes[scope]
	if !ok {
		return false
	}
	var line string
	for _, b := range rule.BackedBy {
		if b.Validator != validator {
			continue
		}
		if len(b.Programs) == 0 {
			return true
		}
		if line == "" {
			var a struct {
				Command string `json:"command_substring"`
			}
			if json.Unmarshal(args, &a, json.RejectUnknownMembers(false)) != nil || a.Command == "" {
				return false
			}
			line = a.Command
		}
		calls := command.Parse(line)
		for _, prog := range b.Programs {
			if want, ok := command.Want(prog); ok && command.RunsParsed(calls, want) {
				return true
			}
		}
	}
	return false
}

// ChangeTask reports whether a task with these action verbs that names
// files must change one of them before it is done.
func (p *Policy) ChangeTask(verbs []string) bool {
	for _, v := range verbs {
		if slices.Contains(p.ChangeVerbs, v) {
			return true
		}
	}
	return false
}

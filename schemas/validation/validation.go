// Package validation checks documents against claimcheck's embedded JSON
// Schemas (draft 2020-12) with format assertions on. Schemas are loaded only
// from the embedded files: the compiler's loader refuses every URL, so a $ref
// can never reach the network or the file system.
package validation

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/claimcheck/claimcheck/schemas"
)

// ErrInvalid is wrapped by every validation failure. Callers record the
// document as invalid; retrying cannot help.
var ErrInvalid = errors.New("invalid document")

// Validator holds the compiled schemas. It is safe for concurrent use.
type Validator struct {
	byName map[string]*jsonschema.Schema
}

type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema %q is not embedded; remote and file loading is disabled", url)
}

// New compiles every embedded schema.
func New() (*Validator, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(refuseLoader{})
	names, err := fs.Glob(schemas.Files, "*.schema.json")
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		raw, err := schemas.Files.ReadFile(name)
		if err != nil {
			return nil, err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		if err := c.AddResource(schemas.BaseURL+name, doc); err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
	}
	v := &Validator{byName: make(map[string]*jsonschema.Schema, len(names))}
	for _, name := range names {
		s, err := c.Compile(schemas.BaseURL + name)
		if err != nil {
			return nil, fmt.Errorf("compile schema %s: %w", name, err)
		}
		v.byName[name] = s
	}
	return v, nil
}

// Validate checks raw (one JSON document) against the named schema file, e.g.
// schemas.EventV1. The error wraps ErrInvalid and lists each failing location.
func (v *Validator) Validate(name string, raw []byte) error {
	s, ok := v.byName[name]
	if !ok {
		return fmt.Errorf("no embedded schema named %q", name)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("%w: %s: not JSON: %w", ErrInvalid, name, err)
	}
	return validate(name, s, doc)
}

// ValidateValue is Validate for a document already decoded by
// jsonschema.UnmarshalJSON (numbers as json.Number).
func (v *Validator) ValidateValue(name string, doc any) error {
	s, ok := v.byName[name]
	if !ok {
		return fmt.Errorf("no embedded schema named %q", name)
	}
	return validate(name, s, doc)
}

func validate(name string, s *jsonschema.Schema, doc any) error {
	err := s.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return fmt.Errorf("%w: %s: %w", ErrInvalid, name, err)
	}
	return fmt.Errorf("%w: %s: %s", ErrInvalid, strings.TrimSuffix(name, ".schema.json"), summarize(ve))
}

// summarize flattens a validation error tree into "at <pointer>: <message>"
// items, one per leaf cause, sorted and de-duplicated, on one line.
func summarize(ve *jsonschema.ValidationError) string {
	var leaves []*jsonschema.ValidationError
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, e)
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	seen := map[string]bool{}
	var items []string
	for _, leaf := range leaves {
		u := leaf.BasicOutput()
		if u.Error == nil {
			continue
		}
		loc := u.InstanceLocation
		if loc == "" {
			loc = "/"
		}
		item := "at " + loc + ": " + u.Error.String()
		if !seen[item] {
			seen[item] = true
			items = append(items, item)
		}
	}
	if len(items) == 0 {
		return ve.Error()
	}
	sort.Strings(items)
	return strings.Join(items, "; ")
}

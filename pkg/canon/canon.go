// Package canon produces the RFC 8785 JSON Canonicalization Scheme (JCS) form
// of JSON documents, the form every claimcheck hash is computed over. It uses
// the canonicalizer of github.com/go-json-experiment/json (the prototype of
// encoding/json/v2), which also rejects duplicate member names and invalid
// UTF-8 (RFC 7493 I-JSON).
package canon

import (
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
)

// Canonicalize returns the JCS form of the JSON document raw. raw is not
// modified. Numbers are treated as IEEE 754 doubles, as RFC 8785 requires;
// claimcheck never puts integers beyond 2^53 into hashed documents (agent
// payloads are carried as strings).
func Canonicalize(raw []byte) ([]byte, error) {
	v := jsontext.Value(append([]byte(nil), raw...))
	if err := v.Canonicalize(); err != nil {
		return nil, fmt.Errorf("canonicalize: %w", err)
	}
	return v, nil
}

// IsCanonical reports whether raw is already in JCS form.
func IsCanonical(raw []byte) bool {
	c, err := Canonicalize(raw)
	return err == nil && string(c) == string(raw)
}

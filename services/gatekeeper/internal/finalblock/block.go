package finalblock

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// maxProblems bounds how many problems one error lists.
const maxProblems = 8

// parseBlock decodes the JSON between the fences of a final block. The JSON
// must be exactly one object, valid UTF-8, without duplicate member names;
// members other than the six known ones are allowed and ignored. Field
// problems are collected so the agent can fix them in one go.
func parseBlock(name string, raw []byte, size int) (*Block, error) {
	if size > MaxBlockBytes {
		return nil, fmt.Errorf("%d bytes of JSON, at most %d allowed", size, MaxBlockBytes)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, errors.New("empty; want one JSON object")
	}
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	val, err := dec.ReadValue()
	if err != nil {
		return nil, fmt.Errorf("invalid JSON: %s", jsonErr(err))
	}
	val = val.Clone() // ReadValue's result is only valid until the next read
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return nil, errors.New("invalid JSON: more data after the object (give exactly one JSON object)")
	}
	if val.Kind() != '{' {
		return nil, fmt.Errorf("got a JSON %s; want one JSON object", kindName(val.Kind()))
	}
	var top map[string]jsontext.Value
	if err := json.Unmarshal(val, &top); err != nil {
		return nil, fmt.Errorf("invalid JSON: %s", jsonErr(err))
	}

	var p problems
	blk := &Block{Name: name}
	typ, ok := top["type"]
	switch {
	case !ok:
		p.addf("type: missing (want one of %s)", typeList)
	default:
		blk.Type = p.str("type", typ)
		if blk.Type != "" && !oneOf(blk.Type, TypeDone, TypePartial, TypeBlocked, TypeDelegation) {
			p.addf("type: %s is not one of %s", quote(blk.Type), typeList)
			blk.Type = ""
		}
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{
		{"summary", &blk.Summary},
		{"what_succeeded", &blk.WhatSucceeded},
		{"what_remains", &blk.WhatRemains},
		{"next_route_or_question", &blk.NextRouteOrQuestion},
	} {
		if v, ok := top[f.name]; ok {
			*f.dst = p.str(f.name, v)
		}
	}
	if v, ok := top["claims"]; ok {
		blk.Claims = p.claims(v)
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	return blk, nil
}

var typeList = strings.Join([]string{TypeDone, TypePartial, TypeBlocked, TypeDelegation}, ", ")

// problems collects what is wrong with a block.
type problems struct {
	list []string
	more int
}

func (p *problems) addf(format string, args ...any) {
	if len(p.list) == maxProblems {
		p.more++
		return
	}
	p.list = append(p.list, fmt.Sprintf(format, args...))
}

func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	msg := strings.Join(p.list, "; ")
	if p.more > 0 {
		msg += fmt.Sprintf("; and %d more", p.more)
	}
	return errors.New(msg)
}

// str decodes a member that must be a JSON string.
func (p *problems) str(field string, v jsontext.Value) string {
	if k := v.Kind(); k != '"' {
		p.addf("%s: got %s, want a string", field, kindName(k))
		return ""
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		p.addf("%s: %s", field, jsonErr(err))
		return ""
	}
	return s
}

// claims decodes the claims array.
func (p *problems) claims(v jsontext.Value) []Claim {
	if k := v.Kind(); k != '[' {
		p.addf("claims: got %s, want an array of {\"claim_type\", \"attestation_id\"} objects", kindName(k))
		return nil
	}
	var items []jsontext.Value
	if err := json.Unmarshal(v, &items); err != nil {
		p.addf("claims: %s", jsonErr(err))
		return nil
	}
	if len(items) > MaxClaims {
		p.addf("claims: %d entries, at most %d allowed", len(items), MaxClaims)
		return nil
	}
	var out []Claim
	for i, item := range items {
		at := fmt.Sprintf("claims[%d]", i)
		if k := item.Kind(); k != '{' {
			p.addf("%s: got %s, want an object with claim_type and attestation_id", at, kindName(k))
			continue
		}
		var members map[string]jsontext.Value
		if err := json.Unmarshal(item, &members); err != nil {
			p.addf("%s: %s", at, jsonErr(err))
			continue
		}
		var c Claim
		if ct, ok := members["claim_type"]; !ok {
			p.addf("%s.claim_type: missing (want one of %s)", at, typeList)
		} else if c.ClaimType = p.str(at+".claim_type", ct); c.ClaimType == "" && ct.Kind() == '"' {
			p.addf("%s.claim_type: empty (want one of %s)", at, typeList)
		} else if c.ClaimType != "" && !oneOf(c.ClaimType, ClaimDone, ClaimPartial, ClaimBlocked, ClaimDelegation) {
			p.addf("%s.claim_type: %s is not one of %s", at, quote(c.ClaimType), typeList)
		}
		if id, ok := members["attestation_id"]; !ok {
			p.addf("%s.attestation_id: missing (cite the id `claimcheck claim` printed with PASS)", at)
		} else if c.AttestationID = p.str(at+".attestation_id", id); c.AttestationID == "" && id.Kind() == '"' {
			p.addf("%s.attestation_id: empty (cite the id `claimcheck claim` printed with PASS)", at)
		} else if c.AttestationID != "" {
			if reason := ulidProblem(c.AttestationID); reason != "" {
				p.addf("%s.attestation_id: %s is not an attestation id (%s)", at, quote(c.AttestationID), reason)
			}
		}
		out = append(out, c)
	}
	return out
}

// ulidProblem says why s is not a canonical ULID (26 characters of Crockford
// base32, upper case, at most 128 bits), "" when it is one.
func ulidProblem(s string) string {
	const example = "e.g. 01KAB0F0000000000000000001"
	if n := utf8.RuneCountInString(s); n != 26 {
		return fmt.Sprintf("%d characters, a ULID has 26, %s", n, example)
	}
	if s[0] < '0' || s[0] > '7' {
		return "a ULID starts with a digit 0-7, " + example
	}
	lower := false
	for i, c := range s {
		switch {
		case i == 0:
		case c >= '0' && c <= '9':
		case c >= 'A' && c <= 'Z' && c != 'I' && c != 'L' && c != 'O' && c != 'U':
		case c >= 'a' && c <= 'z' && c != 'i' && c != 'l' && c != 'o' && c != 'u':
			lower = true
		default:
			return fmt.Sprintf("character %d is %s, a ULID uses Crockford base32 (0-9 and A-Z without I, L, O, U)",
				utf8.RuneCountInString(s[:i])+1, quote(string(c)))
		}
	}
	if lower {
		return "write it in upper case, as `claimcheck claim` printed it"
	}
	return ""
}

func oneOf(s string, set ...string) bool {
	for _, x := range set {
		if s == x {
			return true
		}
	}
	return false
}

func kindName(k jsontext.Kind) string {
	switch k {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "nothing"
}

// quote quotes a value from the block for an error message, clipped so a
// huge value does not flood the reason.
func quote(s string) string {
	const max = 40
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return fmt.Sprintf("%q…", s[:cut])
	}
	return fmt.Sprintf("%q", s)
}

// jsonErr renders a json/jsontext error without the package prefix, clipped
// (the error may quote a member name of any length).
func jsonErr(err error) string {
	const max = 200
	s := err.Error()
	for _, prefix := range []string{"jsontext: ", "json: "} {
		s = strings.TrimPrefix(s, prefix)
	}
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// Package entryschema validates ledger entries against entry.v1 quickly:
// what `claimcheck ledger verify` checks of every entry.
//
// The schema is compiled from the embedded entry.v1.schema.json into a
// checker that reads an entry as canon.ScanObject scanned it (members as
// stored, nothing decoded) and answers yes, no or "cannot tell" for each
// keyword it knows: type, const, enum, pattern, minLength, maxLength,
// minimum, maximum, format date-time, properties, required,
// additionalProperties, items, local $refs and allOf of if/then. Only a
// yes is taken: an entry it cannot prove valid (a keyword it does not know
// on a member the entry has, such as the $ref to another schema file of
// hook_config, contract and verdict; a string with escapes where its value
// matters; an entry ScanObject cannot prove canonical; or an invalid
// entry) is validated by the full JSON Schema validator, whose verdict and
// message are final. FuzzValidateMatchesFullValidator holds the fast
// answers to the full validator's.
package entryschema

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/canon"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/schemas/validation"
)

// Validator validates entries against entry.v1. It is safe for concurrent
// use.
type Validator struct {
	full *validation.Validator
	root *node // nil: every entry goes to the full validator
}

// New compiles entry.v1 for full, the validator of last resort.
func New(full *validation.Validator) (*Validator, error) {
	raw, err := schemas.Files.ReadFile(schemas.EntryV1)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", schemas.EntryV1, err)
	}
	c := compiler{root: doc, refs: map[string]*node{}}
	root := c.node(doc)
	if root.unknown || root.typ != "object" {
		root = nil
	}
	return &Validator{full: full, root: root}, nil
}

// Validate checks one stored entry against entry.v1: nil when valid, else
// the full validator's error (wrapping validation.ErrInvalid).
func (v *Validator) Validate(raw []byte) error {
	if v.Fast(raw) {
		return nil
	}
	return v.full.Validate(schemas.EntryV1, raw)
}

// ValidateScanned is Validate for an entry whose top-level members
// canon.ScanObject returned (ms; nil when it did not prove raw canonical):
// the entry is not scanned again.
func (v *Validator) ValidateScanned(raw []byte, ms []canon.Member) error {
	if ms != nil && v.root != nil && v.root.members(ms) == yes {
		return nil
	}
	return v.Validate(raw)
}

// Fast reports whether raw is proved valid without the full validator.
func (v *Validator) Fast(raw []byte) bool {
	return v.root != nil && v.root.eval(raw) == yes
}

// tri is a keyword's answer.
type tri int8

const (
	no tri = iota
	yes
	unknown // cannot tell: the full validator decides
)

// and combines the answers of keywords that all apply.
func and(a, b tri) tri {
	switch {
	case a == no || b == no:
		return no
	case a == unknown || b == unknown:
		return unknown
	}
	return yes
}

// node is a compiled schema.
type node struct {
	unknown bool // a keyword this package does not know
	ref     *node
	typ     string // "" for any
	// const and enum: the JSON values as canonical text.
	consts   []string
	match    func([]byte) bool // pattern
	minLen   int
	maxLen   int // -1 for none
	min, max *int64
	dateTime bool
	// objects
	props      map[string]*node
	propList   []prop // props, for an open object: looked up in its members
	required   []string
	closed     bool // additionalProperties: false
	conditions []condition
	// arrays
	items *node
}

type condition struct{ cond, then *node }

type prop struct {
	name string
	n    *node
}

type compiler struct {
	root map[string]any
	refs map[string]*node
}

// annotations are keywords that do not validate.
var annotations = map[string]bool{"$schema": true, "$id": true, "$comment": true, "title": true, "description": true,
	"$defs": true, "examples": true, "default": true}

func (c *compiler) node(s map[string]any) *node {
	n := &node{maxLen: -1}
	for k, v := range s {
		if annotations[k] {
			continue
		}
		var ok bool
		switch k {
		case "$ref":
			ok = c.ref(n, v)
		case "type":
			n.typ, ok = v.(string)
			ok = ok && (n.typ == "string" || n.typ == "integer" || n.typ == "boolean" || n.typ == "object" || n.typ == "array" ||
				n.typ == "null")
		case "const":
			ok = c.constant(n, v)
		case "enum":
			vs, isList := v.([]any)
			ok = isList
			for _, e := range vs {
				ok = ok && c.constant(n, e)
			}
			if ok && len(vs) == 0 {
				n.consts = []string{} // matches nothing
			}
		case "pattern":
			ok = c.pattern(n, v)
		case "minLength", "maxLength", "minimum", "maximum":
			f, isNum := v.(float64)
			ok = isNum && f == float64(int64(f)) && f >= -(1<<53) && f <= 1<<53
			i := int64(f)
			switch k {
			case "minLength":
				n.minLen = int(i)
			case "maxLength":
				n.maxLen = int(i)
			case "minimum":
				n.min = &i
			case "maximum":
				n.max = &i
			}
		case "format":
			n.dateTime = v == "date-time"
			ok = n.dateTime
		case "properties":
			m, isMap := v.(map[string]any)
			ok = isMap
			n.props = map[string]*node{}
			for name, p := range m {
				ps, isMap := p.(map[string]any)
				if !isMap {
					ok = false
					break
				}
				n.props[name] = c.node(ps) // an unknown property is checked slowly when present
				n.propList = append(n.propList, prop{name, n.props[name]})
			}
		case "required":
			vs, isList := v.([]any)
			ok = isList
			for _, e := range vs {
				name, isString := e.(string)
				ok = ok && isString
				n.required = append(n.required, name)
			}
		case "additionalProperties":
			n.closed, ok = v == false, v == false
		case "items":
			is, isMap := v.(map[string]any)
			if ok = isMap; ok {
				n.items = c.node(is)
			}
		case "allOf":
			vs, isList := v.([]any)
			ok = isList
			for _, e := range vs {
				ok = ok && c.condition(n, e)
			}
		default:
			ok = false
		}
		if !ok {
			n.unknown = true
		}
	}
	return n
}

// ref resolves "#/$defs/<name>"; other references are unknown.
func (c *compiler) ref(n *node, v any) bool {
	r, ok := v.(string)
	name, local := "", false
	if ok {
		name, local = cutPrefix(r, "#/$defs/")
	}
	if !local {
		return false
	}
	if t, seen := c.refs[name]; seen {
		n.ref = t
		return t != nil
	}
	c.refs[name] = nil // a cycle stays unknown
	defs, _ := c.root["$defs"].(map[string]any)
	d, ok := defs[name].(map[string]any)
	if !ok {
		return false
	}
	t := c.node(d)
	c.refs[name], n.ref = t, t
	return true
}

func cutPrefix(s, p string) (string, bool) {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):], true
	}
	return s, false
}

// constant adds a const or enum value: strings and integers.
func (c *compiler) constant(n *node, v any) bool {
	switch x := v.(type) {
	case string:
		b, err := json.Marshal(x)
		if err != nil {
			return false
		}
		cb, err := canon.Canonicalize(b)
		if err != nil {
			return false
		}
		n.consts = append(n.consts, string(cb))
	case float64:
		if x != float64(int64(x)) || x < -(1<<53) || x > 1<<53 {
			return false
		}
		n.consts = append(n.consts, strconv.FormatInt(int64(x), 10))
	default:
		return false
	}
	return true
}

// condition adds an allOf item of the form {"if": …, "then": …}.
func (c *compiler) condition(n *node, v any) bool {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 2 {
		return false
	}
	is, ok1 := m["if"].(map[string]any)
	ts, ok2 := m["then"].(map[string]any)
	if !ok1 || !ok2 {
		return false
	}
	cond, then := c.node(is), c.node(ts)
	if !objectOnly(cond) || !objectOnly(then) {
		return false
	}
	n.conditions = append(n.conditions, condition{cond, then})
	return true
}

// objectOnly reports whether n has only the keywords members applies:
// properties, required, additionalProperties, allOf of if/then.
func objectOnly(n *node) bool {
	return !n.unknown && n.ref == nil && (n.typ == "" || n.typ == "object") && n.consts == nil && n.match == nil &&
		n.minLen == 0 && n.maxLen < 0 && n.min == nil && n.max == nil && !n.dateTime && n.items == nil
}

func (c *compiler) pattern(n *node, v any) bool {
	p, ok := v.(string)
	if !ok {
		return false
	}
	switch p {
	case digestPattern:
		n.match = isDigest
		return true
	case ulidPattern:
		n.match = isULID
		return true
	}
	re, err := regexp.Compile(p) // the full validator's engine: Go's regexp
	if err != nil {
		return false
	}
	n.match = (&memo{re: re, seen: map[string]bool{}}).match
	return true
}

// memo remembers a regexp's answers for the first maxMemo strings it is
// asked about: entries repeat their chain, origin and host.
type memo struct {
	re   *regexp.Regexp
	mu   sync.Mutex
	seen map[string]bool
}

const maxMemo = 4096

func (m *memo) match(b []byte) bool {
	m.mu.Lock()
	r, ok := m.seen[string(b)]
	m.mu.Unlock()
	if ok {
		return r
	}
	r = m.re.Match(b)
	m.mu.Lock()
	if len(m.seen) < maxMemo {
		m.seen[string(b)] = r
	}
	m.mu.Unlock()
	return r
}

// The two patterns most entry members have, matched without a regexp
// (TestPatternMatchersMatchTheirRegexps).
const (
	digestPattern = `^sha256:[0-9a-f]{64}$`
	ulidPattern   = `^[0-7][0-9A-HJKMNP-TV-Z]{25}$`
)

func isDigest(s []byte) bool {
	if len(s) != 71 || string(s[:7]) != "sha256:" {
		return false
	}
	for i := 7; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func isULID(s []byte) bool {
	if len(s) != 26 || s[0] < '0' || s[0] > '7' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
		case c >= 'A' && c <= 'Z' && c != 'I' && c != 'L' && c != 'O' && c != 'U':
		default:
			return false
		}
	}
	return true
}

// eval answers whether the JSON value raw, a part of an entry ScanObject
// proved canonical (or the entry itself), is valid against n.
func (n *node) eval(raw []byte) tri {
	if n.unknown || len(raw) == 0 {
		return unknown
	}
	r := yes
	if n.ref != nil {
		if r = n.ref.eval(raw); r == no {
			return no
		}
	}
	kind := kindOf(raw[0])
	if n.typ != "" && n.typ != kind {
		return no
	}
	if n.consts != nil {
		r = and(r, n.constant(raw, kind))
	}
	switch kind {
	case "string":
		r = and(r, n.str(raw))
	case "integer":
		if n.min != nil || n.max != nil {
			i, err := strconv.ParseInt(string(raw), 10, 64)
			switch {
			case err != nil:
				r = and(r, unknown)
			case n.min != nil && i < *n.min, n.max != nil && i > *n.max:
				return no
			}
		}
	case "object":
		r = and(r, n.object(raw))
	case "array":
		if n.items != nil {
			vs, ok := canon.ScanArray(raw, nil)
			if !ok {
				return unknown
			}
			for _, e := range vs {
				if r = and(r, n.items.eval(e)); r == no {
					return no
				}
			}
		}
	}
	return r
}

func kindOf(c byte) string {
	switch c {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "integer" // ScanObject proves only integers
}

// constant: raw among n.consts. Both are canonical JSON text, equal
// exactly when the values are.
func (n *node) constant(raw []byte, kind string) tri {
	if kind == "object" || kind == "array" {
		return no // the consts are strings and integers
	}
	for _, c := range n.consts {
		if string(raw) == c {
			return yes
		}
	}
	return no // canonical text is equal exactly when the values are
}

// str applies the string keywords.
func (n *node) str(raw []byte) tri {
	if n.minLen == 0 && n.maxLen < 0 && n.match == nil && !n.dateTime {
		return yes
	}
	s := raw[1 : len(raw)-1]
	escaped := bytes.IndexByte(s, '\\') >= 0
	r := yes
	if n.minLen > 0 || n.maxLen >= 0 {
		// Without escapes the stored bytes are the value; with them, the
		// value has fewer code points than the stored bytes.
		runes := utf8.RuneCount(s)
		switch {
		case !escaped && (runes < n.minLen || n.maxLen >= 0 && runes > n.maxLen):
			return no
		case escaped && (n.maxLen >= 0 && runes > n.maxLen || n.minLen > 1):
			r = unknown
		}
	}
	if n.match != nil || n.dateTime {
		if escaped {
			return and(r, unknown)
		}
		if n.match != nil && !n.match(s) {
			return no
		}
		if n.dateTime {
			r = and(r, dateTime(string(s)))
		}
	}
	return r
}

// dateTime is yes for the RFC 3339 date-times whose every part the full
// validator's date-time check accepts (no leap seconds), unknown for any
// other string.
func dateTime(s string) tri {
	if len(s) < 20 || s[10] != 'T' {
		return unknown
	}
	if _, err := time.Parse("2006-01-02", s[:10]); err != nil {
		return unknown
	}
	t := s[11:]
	if t[2] != ':' || t[5] != ':' || !digits(t[0:2], 23) || !digits(t[3:5], 59) || !digits(t[6:8], 59) {
		return unknown
	}
	t = t[8:]
	if len(t) > 0 && t[0] == '.' {
		i := 1
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i++
		}
		if i == 1 {
			return unknown
		}
		t = t[i:]
	}
	switch {
	case t == "Z":
		return yes
	case len(t) == 6 && (t[0] == '+' || t[0] == '-') && t[3] == ':' && digits(t[1:3], 23) && digits(t[4:6], 59):
		return yes
	}
	return unknown
}

// digits: two ASCII digits, at most max.
func digits(s string, max int) bool {
	return len(s) == 2 && s[0] >= '0' && s[0] <= '9' && s[1] >= '0' && s[1] <= '9' && int(s[0]-'0')*10+int(s[1]-'0') <= max
}

// object applies the object keywords.
func (n *node) object(raw []byte) tri {
	if n.props == nil && n.required == nil && !n.closed && n.conditions == nil {
		return yes
	}
	sc := scratchPool.Get().(*[]canon.Member)
	defer scratchPool.Put(sc)
	ms, ok := canon.ScanObject(raw, (*sc)[:0])
	*sc = ms
	if !ok {
		return unknown
	}
	return n.members(ms)
}

var scratchPool = sync.Pool{New: func() any { return new([]canon.Member) }}

// members applies the object keywords to an object's members; it is
// also how an if or then (object keywords only) applies to the object
// whose schema holds it.
func (n *node) members(ms []canon.Member) tri {
	r := yes
	for _, name := range n.required {
		if find(ms, name) < 0 {
			return no
		}
	}
	if n.closed {
		for _, m := range ms {
			p, ok := n.props[string(m.Name)]
			if !ok {
				return no
			}
			if r = and(r, p.eval(m.Value)); r == no {
				return no
			}
		}
	} else {
		for _, p := range n.propList {
			if i := find(ms, p.name); i >= 0 {
				if r = and(r, p.n.eval(ms[i].Value)); r == no {
					return no
				}
			}
		}
	}
	for _, c := range n.conditions {
		switch c.cond.members(ms) {
		case yes:
			r = and(r, c.then.members(ms))
		case unknown:
			r = and(r, unknown)
		}
		if r == no {
			return no
		}
	}
	return r
}

// find is the index of the member name, or -1: ms are in ScanObject's
// order, strictly increasing bytes.
func find(ms []canon.Member, name string) int {
	i := sort.Search(len(ms), func(i int) bool { return string(ms[i].Name) >= name })
	if i < len(ms) && string(ms[i].Name) == name {
		return i
	}
	return -1
}

// HasFastPath reports whether the schema compiled to a fast checker
// (it does not when a keyword at its top is one this package does not
// know: then every entry goes to the full validator).
func (v *Validator) HasFastPath() bool { return v.root != nil }

package schemas

import (
	"reflect"
	"sort"
	"strings"
	"testing"
)

// TestEntryFieldsInCanonicalOrder: Entry (and the structs inside it) declare
// their fields in the byte order of their JSON names (all ASCII, so the same
// as RFC 8785's UTF-16 order).
func TestEntryFieldsInCanonicalOrder(t *testing.T) {
	for _, v := range []any{Entry{}, Artifact{}, Redaction{}, Contract{}, TargetFields{}, Hop{}, Claim{}, Verdict{}, Position{}, Range{}, PolicyRef{}, Predicate{}, Key{}, HookConfig{}, HookLayer{}} {
		typ := reflect.TypeOf(v)
		var names []string
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			names = append(names, name)
		}
		if !sort.StringsAreSorted(names) {
			t.Errorf("%s fields are not in JSON-name order: %v", typ.Name(), names)
		}
	}
}

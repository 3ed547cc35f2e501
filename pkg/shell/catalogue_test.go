package shell

import "testing"

// Each name is in one entry, and each entry has what its kind needs.
func TestCatalogue(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range catalogue {
		if len(p.Names) == 0 {
			t.Errorf("an entry without names: %+v", p)
		}
		for _, n := range p.Names {
			if seen[n] {
				t.Errorf("%q is in two entries", n)
			}
			seen[n] = true
		}
		if (p.Kind == Wrapper) != (p.Wrap != nil) {
			t.Errorf("%v: kind %d with Wrap %v", p.Names, p.Kind, p.Wrap)
		}
		if (p.Kind == Interpreter) != (p.Lang != nil) {
			t.Errorf("%v: kind %d with Lang %v", p.Names, p.Kind, p.Lang)
		}
		if p.Tool != "" && !p.RunsTool {
			t.Errorf("%v: a Tool without RunsTool", p.Names)
		}
	}
}

func TestLookup(t *testing.T) {
	for _, tt := range []struct {
		name string
		kind Kind
		ok   bool
	}{
		{"sudo", Wrapper, true},
		{"python3", Interpreter, true},
		{"python3.12", Interpreter, true},
		{"python3x", Reader, false},
		{"pypy.", Interpreter, true},
		{"perl5", Reader, false},
		{"mkfs.ext4", Formatter, true},
		{"mkfs", Formatter, true},
		{"cat", Cat, true},
		{"npx", Reader, true},
		{"frobnicate", Reader, false},
		{"", Reader, false},
	} {
		p, ok := Lookup(tt.name)
		if p.Kind != tt.kind || ok != tt.ok {
			t.Errorf("Lookup(%q) = kind %d, %v; want %d, %v", tt.name, p.Kind, ok, tt.kind, tt.ok)
		}
	}
}

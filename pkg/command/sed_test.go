package command

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSedEdits(t *testing.T) {
	for _, tt := range []struct {
		line string
		want map[string][]Edit
	}{
		{"sed -i 's/t.Errorf/t.Logf/g' add_test.go", map[string][]Edit{"add_test.go": {{Old: "t.Errorf", New: "t.Logf"}}}},
		{`sed -i '/t\.Skip/d' a_test.go b_test.go`, map[string][]Edit{"a_test.go": {{Old: "t.Skip"}}, "b_test.go": {{Old: "t.Skip"}}}},
		{`sed -i -e 's|^func TestAdd|func testAdd|' -e 's/x/y/' add_test.go`,
			map[string][]Edit{"add_test.go": {{Old: "func TestAdd", New: "func testAdd"}, {Old: "x", New: "y"}}}},
		{`sed -i '/func TestAdd/a\	t.Skip("flaky")' add_test.go`, map[string][]Edit{"add_test.go": {{New: `t.Skip("flaky")`}}}},
		{"sed -i 's/a/b/; 3d' x_test.go", map[string][]Edit{}},
		{"sed -i -f script.sed x_test.go", map[string][]Edit{}},
		{`sed -i "s/$A/b/" x_test.go`, map[string][]Edit{}},
		{"sed 's/a/b/' x_test.go", map[string][]Edit{}},
		{"sed -i.bak 's/a/b/' x.go && go test", map[string][]Edit{"x.go": {{Old: "a", New: "b"}}}},
	} {
		t.Run(tt.line, func(t *testing.T) {
			if d := cmp.Diff(tt.want, SedEdits(tt.line)); d != "" {
				t.Errorf("edits (-want +got):\n%s", d)
			}
		})
	}
}

func FuzzSedEdits(f *testing.F) {
	for _, s := range []string{"sed -i 's/a/b/g' x", `sed -i '/re/d;s|x|y|' f`, `sed -i -e '1,/x/c\text' f`, `sed -i 'y/ab/cd/' f`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		for file, edits := range SedEdits(line) {
			if file == "" {
				t.Fatal("an edit of no file")
			}
			_ = edits
		}
	})
}

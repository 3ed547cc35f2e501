package command

import (
	"slices"
	"testing"
)

var writesTests = []struct {
	line    string
	want    []string
	unknown bool
}{
	{"go test ./...", nil, false},
	{"echo x > src/app.py", []string{"src/app.py"}, false},
	{"cat <<EOF >> notes.md\nhi\nEOF", []string{"notes.md"}, false},
	{"go test ./... > out.txt 2>&1", []string{"out.txt"}, false},
	{"go test ./... 2>/dev/null", nil, false},
	{"printf x | tee -a a.txt b.txt", []string{"a.txt", "b.txt"}, false},
	{"sed -i 's/a/b/' src/app.py", []string{"src/app.py"}, false},
	{"sed -i.bak -e 's/a/b/' -e 's/c/d/' x.go y.go", []string{"x.go", "y.go"}, false},
	{"sed 's/a/b/' src/app.py", nil, false},
	{"sed -n 1,5p src/app.py", nil, false},
	{"perl -pi -e 's/a/b/' src/app.py", []string{"src/app.py"}, false},
	{"perl -i.bak -pe 's/a/b/' a.pl", []string{"a.pl"}, false},
	{"perl -ne 'print' a.pl", nil, false},
	{"perl -Mstrict -e 'print 1' src/app.py", nil, false},
	{"cp /tmp/fixed.py src/app.py", []string{"src/app.py", "src/app.py/fixed.py"}, false},
	{"mv new.go internal/", []string{"internal/", "internal/new.go"}, false},
	{"cp -t src a.py b.py", []string{"src/a.py", "src/b.py", "src"}, false},
	{"touch src/app.py", []string{"src/app.py"}, false},
	{"rm -f src/app.py", []string{"src/app.py"}, false},
	{"truncate -s 0 log.txt", []string{"log.txt"}, false},
	{"dd if=/dev/zero of=disk.img bs=1M count=1", []string{"disk.img"}, false},
	{"git checkout -- src/app.py", []string{"src/app.py"}, false},
	{"git restore src/app.py", []string{"src/app.py"}, false},
	{"git checkout main", nil, true},
	{"git checkout -b fix-tests", nil, false},
	{"git checkout -b fix origin/main", nil, true},
	{"git apply fix.patch", nil, true},
	{"patch -p1 < fix.patch", nil, true},
	{"git reset --hard HEAD~1", nil, true},
	{"git reset HEAD~1", nil, false},
	{"git stash pop", nil, true},
	{"git status && git diff", nil, false},
	{`echo x > "$OUT"`, nil, true},
	{"sudo tee /etc/hosts < h", []string{"/etc/hosts"}, false},
	{"cd web && npm run build > build.log", []string{"build.log"}, false},
	{"echo 'rm x' | cat", nil, false},
}

func TestWrites(t *testing.T) {
	for _, tt := range writesTests {
		got, unknown := Writes(tt.line)
		if !slices.Equal(got, tt.want) || unknown != tt.unknown {
			t.Errorf("Writes(%q) = %q, %v; want %q, %v", tt.line, got, unknown, tt.want, tt.unknown)
		}
	}
}

var writesSeeds = []string{"sed -i -e x a b", "perl -pie x f", "cp -t", "git", "git checkout --", "dd of=", "tee", "x > $(y)"}

func FuzzWrites(f *testing.F) {
	for _, s := range writesSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		paths, _ := Writes(line)
		for _, p := range paths {
			if p == "" {
				t.Fatalf("%q: an empty path", line)
			}
		}
	})
}

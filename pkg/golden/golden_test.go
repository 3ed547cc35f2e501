package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps what a comparison reports.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) { r.errs = append(r.errs, format) }
func (r *recorder) Helper()                           {}

func TestCompare(t *testing.T) {
	name := filepath.Join(t.TempDir(), "x.golden")
	Compare(t, name, []byte("a\nb\n"), true)
	Compare(t, name, []byte("a\nb\n"), false)
	r := &recorder{TB: t}
	Compare(r, name, []byte("a\nc\n"), false)
	if len(r.errs) != 1 || !strings.Contains(r.errs[0], "got") {
		t.Fatalf("a changed line: %v", r.errs)
	}
	if b, _ := os.ReadFile(name); string(b) != "a\nb\n" {
		t.Fatal("a comparison wrote the file")
	}
}

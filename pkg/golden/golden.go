// Package golden compares a test's output with a file kept in testdata
// (a golden file), reporting the first differing lines, and rewrites the
// file when asked (a test's -update flag). Tests of decision tables use it
// to show any change of answer or wording.
package golden

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// Compare compares got with the file name, or writes got to it when update
// is set.
func Compare(tb testing.TB, name string, got []byte, update bool) {
	tb.Helper()
	if update {
		if err := os.WriteFile(name, got, 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(name)
	if err != nil {
		tb.Fatalf("%v (run with -update to create it)", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	shown := 0
	for i := 0; i < max(len(gl), len(wl)) && shown < 20; i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			tb.Errorf("%s:%d:\n  got  %s\n  want %s", name, i+1, g, w)
			shown++
		}
	}
	if shown == 0 {
		tb.Errorf("%s differs", name)
	}
}

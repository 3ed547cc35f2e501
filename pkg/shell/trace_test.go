package shell

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTrace(t *testing.T) {
	for _, tt := range []struct {
		name, src string
		want      []string // "argv @ cwd (moved)"
	}{
		{"plain", "go test ./...", []string{"go test ./... @ /repo ()"}},
		{"cd", "cd sub && go test ./...", []string{"cd sub @ /repo ()", "go test ./... @ /repo/sub (cd sub)"}},
		{"cd out", "cd ../other; go test", []string{"cd ../other @ /repo ()", "go test @ /other (cd ../other)"}},
		{"subshell", "(cd /tmp && make) && make", []string{"cd /tmp @ /repo ()", "make @ /tmp (cd /tmp)", "make @ /repo ()"}},
		{"unknown", `cd "$D" && go test`, []string{"cd $… @ /repo ()", "go test @  (cd $…)"}},
		{"popd", "pushd /x && popd && go test", []string{"pushd /x @ /repo ()", "popd @ /x (pushd /x)", "go test @  (popd)"}},
		{"env -C", "env -C /tmp go test", []string{"env -C /tmp go test @ /tmp (env /tmp)"}},
		{"pipeline", "cd a && go test | tee log", []string{"cd a @ /repo ()", "go test @ /repo/a (a cd earlier in the line)",
			"tee log @ /repo/a (a cd earlier in the line)"}},
		{"bash -c", "bash -c 'cd /tmp && go test'", []string{"bash -c cd /tmp && go test @ /repo ()", "cd /tmp @ /repo ()",
			"go test @ /tmp (cd /tmp)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, c := range Trace(tt.src, "/repo").Calls {
				var words []string
				for _, f := range c.Argv {
					words = append(words, Display(f.S))
				}
				got = append(got, strings.Join(words, " ")+" @ "+c.Cwd+" ("+c.Moved+")")
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("calls (-want +got):\n%s", d)
			}
		})
	}
}

func TestTraceWritten(t *testing.T) {
	tr := Trace("cat > a_test.go <<'EOF'\npackage a\nEOF\necho hi > b.txt", "/repo")
	want := map[string]string{"/repo/a_test.go": "package a\n", "/repo/b.txt": "hi\n"}
	if d := cmp.Diff(want, tr.Written); d != "" {
		t.Errorf("written (-want +got):\n%s", d)
	}
}

func FuzzTrace(f *testing.F) {
	for _, s := range []string{"cd a && go test ./...", "(cd /x; make -C y) | tee z", "pushd $D; popd", "env -C / sh -c 'cd ..'",
		"cat > f <<EOF\nx\nEOF"} {
		f.Add(s, "/repo")
	}
	f.Fuzz(func(t *testing.T, src, cwd string) {
		tr := Trace(src, cwd)
		for _, c := range tr.Calls {
			if len(c.Argv) == 0 {
				t.Fatal("a call without words")
			}
			if c.Cwd != "" && !strings.HasPrefix(c.Cwd, "/") {
				t.Fatalf("relative cwd %q", c.Cwd)
			}
		}
	})
}

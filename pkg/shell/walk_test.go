package shell

import (
	"strings"
	"testing"
)

// recorder is a Host that notes what the walker hands it.
type recorder struct {
	empty     bool // Run was handed no words
	runs      []string
	redirects []string
	troubles  []TroubleKind
	bombs     []string
}

func (r *recorder) Run(argv []Field, st *State, depth int) Stream {
	r.empty = r.empty || len(argv) == 0
	var words []string
	for _, f := range argv {
		words = append(words, Display(f.S))
	}
	r.runs = append(r.runs, strings.Join(words, " "))
	return st.Stdin.Taint()
}

func (r *recorder) Redirect(rd Redirect, st *State) {
	r.redirects = append(r.redirects, rd.Op+" "+rd.Path.String())
}
func (r *recorder) Trouble(t Trouble)    { r.troubles = append(r.troubles, t.Kind) }
func (r *recorder) ForkBomb(name string) { r.bombs = append(r.bombs, name) }
func (r *recorder) Decided() bool        { return false }

func walk(src, home string) *recorder {
	r := &recorder{}
	NewWalker(r, Config{Home: home, MaxDepth: 3}).Script(src, NewState("/work"), 0)
	return r
}

func TestWalk(t *testing.T) {
	for _, tt := range []struct {
		src, runs string
	}{
		{"x=rm; $x -rf /", "rm -rf /"},
		{`r""m -rf ~`, "rm -rf /home/dev"},
		{"rm${IFS}-rf${IFS}/", "rm -rf /"},
		{"$'\\x72\\x6d' -rf /", "rm -rf /"},
		{"echo {a,b}", "echo a b"},
		{"cd /tmp && cat $PWD/x", "cd /tmp | cat /work/x"},
		{"for d in / /etc; do rm -rf \"$d\"; done", "rm -rf $… | rm -rf / | rm -rf /etc"},
		{"ls $(cat x)", "cat x | ls $…"},
	} {
		if got := strings.Join(walk(tt.src, "/home/dev").runs, " | "); got != tt.runs {
			t.Errorf("%q: ran %q, want %q", tt.src, got, tt.runs)
		}
	}
	if r := walk("rm -rf ~", ""); r.runs[0] != "rm -rf ~" {
		t.Errorf("home unknown: ran %q", r.runs)
	}
	if r := walk("echo x > out.txt 2>&1 < in", ""); strings.Join(r.redirects, ",") != "> /work/out.txt,>& /work/1,< /work/in" {
		t.Errorf("redirects %q", r.redirects)
	}
	if r := walk("f() { f | f & }; f", ""); len(r.bombs) != 1 || r.bombs[0] != "f" {
		t.Errorf("fork bomb: %q", r.bombs)
	}
	if r := walk("'unterminated", ""); len(r.troubles) != 1 || r.troubles[0] != Unparsable {
		t.Errorf("troubles %v", r.troubles)
	}
	if r := walk("echo {1..100}{1..100}", ""); len(r.troubles) != 1 || r.troubles[0] != TooManyWords {
		t.Errorf("troubles %v", r.troubles)
	}
}

func FuzzWalk(f *testing.F) {
	for _, s := range []string{"x=rm; $x -rf /", "a=${b:-${c:?}}; ${a%/*}", "f() { f | f & }; f", "cat <<EOF | sh\nrm -rf /\nEOF",
		"for i in $(seq 3); do echo $i; done", "$'\\x72\\x6d' -rf $'\\57'", "echo {a,b}{c,d}", "exec 3<>/etc/passwd"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if strings.ContainsAny(src, markers) {
			return // callers refuse these
		}
		r := &recorder{}
		NewWalker(r, Config{MaxDepth: 3}).Script(src, NewState(""), 0)
		if r.empty {
			t.Fatalf("%q: a command without words ran", src)
		}
	})
}

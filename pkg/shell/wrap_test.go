package shell

import (
	"slices"
	"strings"
	"testing"
)

func words(line string) []Field { return fields(strings.Fields(line)) }

func texts(fs []Field) string {
	var s []string
	for _, f := range fs {
		s = append(s, f.S)
	}
	return strings.Join(s, " ")
}

func TestUnwrap(t *testing.T) {
	tests := []struct {
		line, command, script, via, edits, chdir string
		items                                    bool
	}{
		{line: "sudo make test", command: "make test"},
		{line: "sudo -u root -g wheel -- make test", command: "make test"},
		{line: "sudo FOO=1 make test", command: "make test"},
		{line: "sudo -e /etc/hosts", edits: "/etc/hosts"},
		{line: "sudoedit -u root a b", edits: "a b"},
		{line: "env -i PATH=/bin make", command: "make"},
		{line: "env -C web make", command: "make", chdir: "web"},
		{line: "env -S make x", script: "make 'x'", via: "env -S"},
		{line: "env FOO=1"},
		{line: "command -v make"},
		{line: "command make", command: "make"},
		{line: "nice -n 10 make", command: "make"},
		{line: "nice -10 make", command: "make"},
		{line: "timeout -s KILL 10s make", command: "make"},
		{line: "timeout 5"},
		{line: "chrt -p 5 1234"},
		{line: "taskset 0x3 make", command: "make"},
		{line: "taskset -c 0 make", command: "make"},
		{line: "flock /tmp/l make", command: "make"},
		{line: "flock -c make /tmp/l", script: "make", via: "flock -c"},
		{line: "flock /tmp/l -c make", script: "make", via: "flock -c"},
		{line: "watch make test", script: "make test", via: "watch"},
		{line: "watch -x make test", command: "make test"},
		{line: "su -c make root", script: "make", via: "su -c"},
		{line: "su root"},
		{line: "runuser -u dev -- make test", command: "make test"},
		{line: "sg wheel make test", script: "make test", via: "sg"},
		{line: "script -c make log", script: "make", via: "script -c"},
		{line: "xargs -I {} rm {}", command: "rm {}", items: true},
		{line: "xargs", items: true},
	}
	for _, tt := range tests {
		w, ok := Unwrap(words(tt.line))
		if !ok {
			t.Errorf("%q: not a wrapper", tt.line)
			continue
		}
		var script, chdir string
		if w.Script != nil {
			script = w.Script.S
		}
		if w.Chdir != nil {
			chdir = w.Chdir.S
		}
		if texts(w.Command) != tt.command || script != tt.script || w.Via != tt.via || texts(w.Edits) != tt.edits || chdir != tt.chdir || w.Items != tt.items {
			t.Errorf("%q: command %q script %q via %q edits %q chdir %q items %v", tt.line, texts(w.Command), script, w.Via, texts(w.Edits), chdir, w.Items)
		}
	}
	if _, ok := Unwrap(words("make test")); ok {
		t.Error("make is not a wrapper")
	}
	if _, ok := Unwrap(nil); ok {
		t.Error("an empty command is not a wrapper")
	}
}

func TestPrograms(t *testing.T) {
	for _, tt := range []struct {
		line string
		want []string
	}{
		{"make test", []string{"make test"}},
		{"sudo -u root timeout 5 nice -n 1 env FOO=1 make test", []string{"sudo -u root timeout 5 nice -n 1 env FOO=1 make test", "timeout 5 nice -n 1 env FOO=1 make test", "nice -n 1 env FOO=1 make test", "env FOO=1 make test", "make test"}},
		{"python -m pytest -q", []string{"python -m pytest -q", "pytest -q"}},
		{"python3.12 -m pytest", []string{"python3.12 -m pytest", "pytest"}},
		{"uv run pytest", []string{"uv run pytest", "pytest"}},
		{"npx jest", []string{"npx jest", "jest"}},
		{"npx", []string{"npx"}},
		{"uv sync", []string{"uv sync"}},
		{"command -v make", []string{"command -v make"}},
		{"watch make", []string{"watch make"}},
		{"sudo", []string{"sudo"}},
		{"", nil},
	} {
		var got []string
		for _, p := range Programs(strings.Fields(tt.line)) {
			got = append(got, strings.Join(p, " "))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Programs(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

func FuzzUnwrap(f *testing.F) {
	for _, s := range []string{"sudo -u", "env -S", "flock x -c", "timeout", "xargs -I", "sg g", "runuser -- -c x", "nice -", "python -m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		argv := strings.Fields(line)
		Unwrap(fields(argv))
		progs := Programs(argv)
		if len(argv) > 0 && (len(progs) == 0 || !slices.Equal(progs[0], argv)) {
			t.Fatalf("%q: Programs does not start with the command itself: %q", line, progs)
		}
		for _, p := range progs {
			if len(p) == 0 {
				t.Fatalf("%q: an empty program in %q", line, progs)
			}
		}
	})
}

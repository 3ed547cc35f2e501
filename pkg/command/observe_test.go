package command

import (
	"strings"
	"testing"
)

var observeTests = []struct {
	line, want     string
	output, status bool
	why            string // in OutputWhy or StatusWhy
}{
	{"go test ./...", "go test ./...", true, true, ""},
	{"cd api && go test ./...", "go test ./...", true, true, ""},
	{"go test ./... && echo done", "go test ./...", true, true, ""},
	{"go test ./... 2>&1", "go test ./...", true, true, ""},
	{"go test ./... 2>&1 | tee test.log", "go test ./...", true, false, "pipefail"},
	{"set -o pipefail; go test ./... 2>&1 | tee test.log", "go test ./...", true, true, ""},
	{"set -euo pipefail; go test ./... | tail -5", "go test ./...", false, true, "tail -5"},
	{"go test ./... | tail -3", "go test ./...", false, false, "tail -3"},
	{"go test ./... 2>&1 | grep -v '^ok'", "go test ./...", false, false, "grep -v ^ok"},
	{"go test ./... | head", "go test ./...", false, false, "head"},
	{"go test ./... > /dev/null", "go test ./...", false, true, "redirected"},
	{"go test ./... &> out.txt", "go test ./...", false, true, "redirected"},
	{"go test ./... >&2", "go test ./...", true, true, ""},
	{"go test ./... || true", "go test ./...", true, false, "||"},
	{"go test ./...; echo done", "go test ./...", true, false, "later command"},
	{"! go test ./...", "go test ./...", true, false, "negated"},
	{"go test ./... &", "go test ./...", true, false, "background"},
	{"(cd api && go test ./...) | tail", "go test ./...", false, false, "tail"},
	{"{ go test ./...; } > log", "go test ./...", false, true, "redirected"},
	{"echo $(go test ./...)", "go test ./...", false, false, "$(…)"},
	{"if go test ./...; then echo ok; fi", "go test ./...", true, false, "compound"},
	{"time go test ./...", "go test ./...", true, true, ""},
	{"timeout 300 go test ./...", "go test ./...", true, true, ""},
	// The best run counts: one filtered, one not.
	{"go test ./... | tail -1; go test ./...", "go test ./...", true, true, ""},
	{"npm test", "go test ./...", false, false, ""},
}

func TestObserve(t *testing.T) {
	for _, tt := range observeTests {
		want, ok := Want(tt.want)
		if !ok {
			t.Fatal(tt.want)
		}
		o := Observe(tt.line, want)
		if o.Ran != (tt.output || tt.status || tt.why != "") {
			t.Errorf("%q: Ran = %v", tt.line, o.Ran)
			continue
		}
		if o.Output != tt.output || o.Status != tt.status {
			t.Errorf("%q: output %v status %v, want %v %v (%q / %q)", tt.line, o.Output, o.Status, tt.output, tt.status, o.OutputWhy, o.StatusWhy)
		}
		if tt.why != "" && !strings.Contains(o.OutputWhy+" "+o.StatusWhy, tt.why) {
			t.Errorf("%q: reasons %q / %q do not mention %q", tt.line, o.OutputWhy, o.StatusWhy, tt.why)
		}
	}
}

var observeSeeds = []string{"go test ./... | tail", "set -o pipefail; go test | tee x", "echo $(go test) || true", "if go test; then :; fi &"}

func FuzzObserve(f *testing.F) {
	for _, s := range observeSeeds {
		f.Add(s)
	}
	want, _ := Want("go test")
	f.Fuzz(func(t *testing.T, line string) {
		o := Observe(line, want)
		if (o.Output || o.Status) && !o.Ran {
			t.Fatalf("%q: observed without a run", line)
		}
		if o.Ran != RunsParsed(Parse(line), want) {
			t.Fatalf("%q: Observe says ran=%v, Runs disagrees", line, o.Ran)
		}
	})
}

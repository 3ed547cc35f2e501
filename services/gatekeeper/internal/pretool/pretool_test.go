package pretool

import (
	"bufio"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/claimcheck/claimcheck/schemas/validation"
)

var (
	valOnce sync.Once
	val     *validation.Validator
	valErr  error
)

func validator(t testing.TB) *validation.Validator {
	t.Helper()
	valOnce.Do(func() { val, valErr = validation.New() })
	if valErr != nil {
		t.Fatal(valErr)
	}
	return val
}

func defaultPolicy(t testing.TB) *Policy {
	t.Helper()
	p, err := Default(validator(t))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// corpusRuntime is the machine the corpora are decided on.
var corpusRuntime = Runtime{
	ProtectedPaths: []string{"/home/dev/.local/share/claimcheck", "/home/dev/.local/state/claimcheck/hook", "/var/lib/claimcheck/nats"},
	HookBinaries:   []string{"/usr/local/bin/claimcheck-hook", "/usr/local/bin/claimcheck-hook-tls"},
	Home:           "/home/dev",
}

const corpusCwd = "/home/dev/project"

// bash builds a Bash call.
func bash(cmd string) Input {
	raw, _ := json.Marshal(map[string]any{"command": cmd, "description": "test"})
	return Input{ToolName: "Bash", ToolInput: raw, Cwd: corpusCwd}
}

func tool(name string, input map[string]any) Input {
	raw, _ := json.Marshal(input)
	return Input{ToolName: name, ToolInput: raw, Cwd: corpusCwd}
}

type corpusCase struct {
	line           int
	decision, rule string
	input          string
}

// readCorpus reads "<decision> <rule> <input>" lines; an input starting
// with go: is a Go-quoted string.
func readCorpus(t *testing.T, name string) []corpusCase {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusCase
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		decision, rest, _ := strings.Cut(line, " ")
		rule, input, ok := strings.Cut(rest, " ")
		if !ok {
			t.Fatalf("%s:%d: want <decision> <rule> <input>", name, n)
		}
		if q, ok := strings.CutPrefix(input, "go:"); ok {
			if input, err = strconv.Unquote(q); err != nil {
				t.Fatalf("%s:%d: %v", name, n, err)
			}
		}
		switch decision {
		case Allow, Deny, Ask:
		default:
			t.Fatalf("%s:%d: decision %q", name, n, decision)
		}
		out = append(out, corpusCase{n, decision, rule, input})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestShellCorpus(t *testing.T) {
	p := defaultPolicy(t)
	cases := readCorpus(t, "testdata/commands.txt")
	if len(cases) < 60 {
		t.Fatalf("corpus has %d commands, want at least 60", len(cases))
	}
	counts := map[string]int{}
	for _, c := range cases {
		counts[c.decision]++
		got := p.Decide(bash(c.input), corpusRuntime)
		if got.Decision != c.decision || got.Rule != c.rule {
			t.Errorf("commands.txt:%d: %s\n  got  %s %s (%s)\n  want %s %s", c.line, c.input, got.Decision, got.Rule, got.Reason, c.decision, c.rule)
			continue
		}
		if got.Decision != Allow && got.Reason == "" {
			t.Errorf("commands.txt:%d: %s: %s without a reason", c.line, c.input, got.Decision)
		}
	}
	t.Logf("%d commands: %d deny, %d ask, %d allow", len(cases), counts[Deny], counts[Ask], counts[Allow])
}

func fetch(url string) Input {
	return tool("WebFetch", map[string]any{"url": url, "prompt": "summarise"})
}

func TestURLCorpus(t *testing.T) {
	p := defaultPolicy(t)
	cases := readCorpus(t, "testdata/urls.txt")
	if len(cases) < 20 {
		t.Fatalf("corpus has %d URLs, want at least 20", len(cases))
	}
	for _, c := range cases {
		got := p.Decide(fetch(c.input), corpusRuntime)
		if got.Decision != c.decision || got.Rule != c.rule {
			t.Errorf("urls.txt:%d: %q\n  got  %s %s (%s)\n  want %s %s", c.line, c.input, got.Decision, got.Rule, got.Reason, c.decision, c.rule)
		}
	}
	t.Logf("%d URLs", len(cases))
}

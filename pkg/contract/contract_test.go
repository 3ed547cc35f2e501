package contract

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"

	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/schemas/validation"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestGolden derives a contract for every prompt in testdata/golden/*.txt and
// compares it with the .golden.json next to it (-update rewrites them).
func TestGolden(t *testing.T) {
	v, err := validation.New()
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("testdata/golden/*.txt")
	if len(files) < 12 {
		t.Fatalf("only %d golden prompts", len(files))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txt")
		t.Run(name, func(t *testing.T) {
			text, _ := os.ReadFile(f)
			c, ok := Derive(Prompt{SessionID: "s1", EventID: "01JDB3H5KX0000000000000000", PromptID: "p-1", Text: string(text)})
			var got []byte
			if ok {
				got, err = json.Marshal(c, json.Deterministic(true))
				if err != nil {
					t.Fatal(err)
				}
				if err := v.Validate(schemas.ContractV1, got); err != nil {
					t.Fatalf("contract invalid: %v", err)
				}
			} else {
				got = []byte(`null`)
			}
			pretty := jsontext.Value(got)
			_ = pretty.Indent(jsontext.WithIndent("  "))
			golden := strings.TrimSuffix(f, ".txt") + ".golden.json"
			if *update {
				if err := os.WriteFile(golden, append(pretty, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./contract -update)", err)
			}
			if diff := cmp.Diff(strings.TrimSpace(string(want)), strings.TrimSpace(string(pretty))); diff != "" {
				t.Errorf("contract differs from %s (-want +got):\n%s", golden, diff)
			}
			// Deterministic: deriving again gives the same bytes.
			again, _ := Derive(Prompt{SessionID: "s1", EventID: "01JDB3H5KX0000000000000000", PromptID: "p-1", Text: string(text)})
			b, _ := json.Marshal(again, json.Deterministic(true))
			if ok && string(b) != string(got) {
				t.Error("derivation is not deterministic")
			}
		})
	}
}

func TestActionable(t *testing.T) {
	for text, want := range map[string]bool{
		"fix the build":                 true,
		"Run the tests please":          true,
		"what is this repo?":            false,
		"explain the tests":             false,
		"I wrote a prefix function":     false, // "prefix" is not "fix"
		"Deploy!":                       true,
		"":                              false,
		"Could you update README.md?":   true,
		"how do I set the timeout":      true,
		"tell me about the testing lib": false,
	} {
		if _, got := Actionable(text); got != want {
			t.Errorf("Actionable(%q) = %v, want %v", text, got, want)
		}
	}
}

func FuzzDerive(f *testing.F) {
	files, _ := filepath.Glob("testdata/golden/*.txt")
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(string(b))
	}
	v, err := validation.New()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		c, ok := Derive(Prompt{SessionID: "s1", EventID: "01JDB3H5KX0000000000000000", Text: text})
		if !ok {
			return
		}
		b, err := json.Marshal(c)
		if err != nil {
			return // invalid UTF-8 in the prompt: the encoder refuses, ingest records the event as is
		}
		if err := v.Validate(schemas.ContractV1, b); err != nil {
			t.Fatalf("contract for %q invalid: %v", text, err)
		}
	})
}

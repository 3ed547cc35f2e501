package pretool

import (
	"strings"
	"testing"
)

// Every message has a rule and a text whose placeholders all name a
// detail, so that no reason shows a raw {placeholder}.
func TestMessages(t *testing.T) {
	for m, e := range messages {
		if e.rule == "" || e.text == "" {
			t.Errorf("message %d has no rule or no text", m)
			continue
		}
		text := e.text
		for {
			i := strings.IndexByte(text, '{')
			if i < 0 {
				break
			}
			j := strings.IndexByte(text[i:], '}')
			if j < 0 {
				break
			}
			name, _ := strings.CutSuffix(text[i+1:i+j], ":q")
			if _, ok := (detail{}).value(name); !ok && name != "VAR:?" {
				t.Errorf("message %d (%s): unknown placeholder {%s}", m, e.rule, name)
			}
			text = text[i+j+1:]
		}
	}
	if got := msgForkBomb.text(detail{name: `a"b`}); !strings.Contains(got, `function "a\"b" calls`) {
		t.Errorf("quoted placeholder: %s", got)
	}
	if got := msgRmEmptyVariable.text(detail{cmd: "x", path: "/"}); !strings.Contains(got, "Use ${VAR:?} so") {
		t.Errorf("a brace that is not a placeholder: %s", got)
	}
}

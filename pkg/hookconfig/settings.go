package hookconfig

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Settings is what claimcheck reads of a Claude Code settings file: the
// hooks and the two switches that turn hooks off.
type Settings struct {
	AllowManagedHooksOnly bool               `json:"allowManagedHooksOnly"`
	DisableAllHooks       bool               `json:"disableAllHooks"`
	Hooks                 map[string][]Group `json:"hooks"`
}

// Group is one matcher group of an event's hooks.
type Group struct {
	Matcher string    `json:"matcher"`
	Hooks   []Handler `json:"hooks"`
}

// Handler is one hook handler.
type Handler struct {
	Type    string `json:"type"`
	Command string `json:"command"`
}

// ErrSettings is wrapped by Parse's errors: the file is not settings
// Claude Code can read, so none of its hooks run.
var ErrSettings = errors.New("not a settings file Claude Code can read")

// Parse reads a settings file. Members claimcheck does not read are
// ignored, whatever their type. Errors name a byte offset or a JSON
// pointer, never the file's contents (they are recorded in the ledger).
func Parse(data []byte) (Settings, error) {
	var s Settings
	if err := json.Unmarshal(data, &s, json.RejectUnknownMembers(false)); err != nil {
		return Settings{}, fmt.Errorf("%w: %s", ErrSettings, describe(err))
	}
	return s, nil
}

// describe words a decoding error without quoting the input.
func describe(err error) string {
	var syn *jsontext.SyntacticError
	var sem *json.SemanticError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("invalid JSON at byte %d", syn.ByteOffset)
	case errors.As(err, &sem):
		where := string(sem.JSONPointer)
		if len(where) > 256 {
			where = where[:256]
		}
		if where == "" {
			return "not a JSON object"
		}
		return fmt.Sprintf("unexpected value at %s", strings.ToValidUTF8(where, "\uFFFD"))
	}
	return "unreadable"
}

// claimcheck-hook's two builds: the lean one and the one with TLS.
var hookNames = map[string]bool{"claimcheck-hook": true, "claimcheck-hook-tls": true}

// IsClaimcheckHook reports whether a command line runs claimcheck-hook:
// its first shell word (quotes removed) is a path whose last element is
// claimcheck-hook or claimcheck-hook-tls. A look-alike (not-claimcheck-hook,
// claimcheck-hook.sh, `sh -c claimcheck-hook`) is not claimcheck-hook.
func IsClaimcheckHook(command string) bool {
	word, ok := firstWord(command)
	return ok && hookNames[filepath.Base(word)]
}

// firstWord returns the first word of a POSIX shell command line with its
// quoting removed; ok is false when the line is empty or its quotes do not
// close within the word.
func firstWord(s string) (string, bool) {
	s = strings.TrimLeft(s, " \t\n")
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case ' ', '\t', '\n', ';', '&', '|', '<', '>', '(', ')':
			return b.String(), b.Len() > 0
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return "", false
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case '"':
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' && j+1 < len(s) {
					j++
				}
				b.WriteByte(s[j])
			}
			if j >= len(s) {
				return "", false
			}
			i = j
		case '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), b.Len() > 0
}

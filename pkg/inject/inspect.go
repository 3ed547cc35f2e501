package inject

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/claimcheck/claimcheck/pkg/digest"
)

// PostTool is what Inspect reads of a PostToolUse or PostToolUseFailure
// payload (Claude Code's and Codex's as sent; Gemini CLI's AfterTool as
// pkg/dialect maps it).
type PostTool struct {
	ToolName     string         `json:"tool_name"`
	ToolInput    jsontext.Value `json:"tool_input"`
	ToolResponse jsontext.Value `json:"tool_response"`
	Error        string         `json:"error"`
	ToolUseID    string         `json:"tool_use_id"`
	Cwd          string         `json:"cwd"`
}

// An Inspection is the firewall's reading of one tool result.
type Inspection struct {
	Tool      string
	ToolUseID string
	Source    Tag
	// TextSHA256 is the digest of the scanned text: the result's string
	// values (tool_response, then error) in document order, joined by
	// newlines; the findings' offsets are into that text.
	TextSHA256 string
	Result     Result
}

// ErrNotPostTool is returned for a payload that is not a tool result.
var ErrNotPostTool = errors.New("not a tool result payload")

// Inspect tags and scans the result of a PostToolUse or
// PostToolUseFailure payload.
func Inspect(payload []byte) (Inspection, error) {
	in, text, err := Read(payload)
	if err != nil {
		return Inspection{}, err
	}
	in.Result = Scan(text)
	return in, nil
}

// Read is Inspect without the scan: the Inspection's tool, call id, source
// tag and text digest, and the text itself (ResultText), for a caller that
// scans it (with Scan, and with other scanners beside it). The payload is
// read in one pass: the text is gathered from tool_response as it is
// decoded.
func Read(payload []byte) (Inspection, string, error) {
	in, text, err := ReadUndigested(payload)
	if err == nil {
		in.TextSHA256 = digest.SHA256([]byte(text))
	}
	return in, text, err
}

// ReadUndigested is Read without the text's digest (TextSHA256 is left
// empty), for a caller that needs it only when it records a finding:
// hashing 64 KiB costs about as much as a tenth of its scans.
func ReadUndigested(payload []byte) (Inspection, string, error) {
	dec := jsontext.NewDecoder(bytes.NewBuffer(payload)) // parsed in place, not copied
	in, text, err := ReadValue(dec)
	if err == nil {
		if _, err = dec.ReadToken(); !errors.Is(err, io.EOF) {
			err = fmt.Errorf("data after the payload's object: %w", err)
		} else {
			err = nil
		}
	}
	if err != nil && !errors.Is(err, ErrNotPostTool) {
		err = fmt.Errorf("%w: %w", ErrNotPostTool, err)
	}
	return in, text, err
}

// ReadValue is ReadUndigested of the payload that is dec's next value, for
// a caller that decodes it inside a larger document (the gatekeeper's
// request, whose payload is then read in the same pass as the rest). It
// reads the whole value whenever it is valid JSON: an error that wraps
// ErrNotPostTool leaves dec after it, any other is dec's own (the input is
// not JSON) and leaves dec where it failed.
func ReadValue(dec *jsontext.Decoder) (Inspection, string, error) {
	var p PostTool
	var text strings.Builder
	depth := dec.StackDepth()
	if err := readPostTool(dec, &p, &text); err != nil {
		if errors.Is(err, ErrNotPostTool) {
			if derr := drain(dec, depth); derr != nil {
				return Inspection{}, "", derr
			}
		}
		return Inspection{}, "", err
	}
	if p.ToolName == "" {
		return Inspection{}, "", fmt.Errorf("%w: no tool_name", ErrNotPostTool)
	}
	if p.Error != "" {
		if text.Len() > 0 {
			text.WriteByte('\n')
		}
		text.WriteString(p.Error)
	}
	return Inspection{Tool: p.ToolName, ToolUseID: p.ToolUseID, Source: Source(p.ToolName, p.ToolInput, p.Cwd)}, text.String(), nil
}

// drain reads dec's tokens until it is back at depth: the rest of a value
// readPostTool stopped inside.
func drain(dec *jsontext.Decoder, depth int) error {
	for dec.StackDepth() > depth {
		if _, err := dec.ReadToken(); err != nil {
			return err
		}
	}
	return nil
}

// readPostTool decodes what Read needs of a payload, dec's next value (a
// JSON object; other members are skipped), and writes the non-empty
// strings of tool_response that are not member names to text, in document
// order, one line break between two. A value of the wrong kind is an error
// that wraps ErrNotPostTool.
func readPostTool(dec *jsontext.Decoder, p *PostTool, text *strings.Builder) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != '{' {
		return fmt.Errorf("%w: a payload is a JSON object, not %v", ErrNotPostTool, tok.Kind())
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		name := tok.String() // the token is void after the next read
		var field *string
		switch name {
		case "tool_name":
			field = &p.ToolName
		case "tool_use_id":
			field = &p.ToolUseID
		case "cwd":
			field = &p.Cwd
		case "error":
			field = &p.Error
		case "tool_input":
			v, err := dec.ReadValue()
			if err != nil {
				return err
			}
			p.ToolInput = bytes.Clone(v)
			continue
		case "tool_response":
			if err := responseStrings(dec, text); err != nil {
				return err
			}
			continue
		default:
			if err := dec.SkipValue(); err != nil {
				return err
			}
			continue
		}
		v, err := dec.ReadToken()
		if err != nil {
			return err
		}
		switch v.Kind() {
		case '"':
			*field = v.String()
		case 'n':
		default:
			return fmt.Errorf("%w: %s: a string, not %v", ErrNotPostTool, name, v.Kind())
		}
	}
	_, err = dec.ReadToken() // the closing brace
	return err
}

// responseStrings reads one value (tool_response) and writes its non-empty
// strings that are not member names to text. A string value is read raw
// (the decoder has validated it) and unquoted straight into text.
func responseStrings(dec *jsontext.Decoder, text *strings.Builder) error {
	depth := dec.StackDepth()
	for {
		if dec.PeekKind() == '"' && !nextIsName(dec) {
			raw, err := dec.ReadValue()
			if err != nil {
				return err
			}
			if len(raw) > 2 { // not ""
				if text.Len() > 0 {
					text.WriteByte('\n')
				}
				unquote(text, raw)
			}
		} else if _, err := dec.ReadToken(); err != nil {
			return err
		}
		if dec.StackDepth() == depth {
			return nil
		}
	}
}

// nextIsName reports whether the next token is an object member's name.
func nextIsName(dec *jsontext.Decoder) bool {
	kind, n := dec.StackIndex(dec.StackDepth())
	return kind == '{' && n%2 == 0
}

// unquote writes the string a JSON string literal holds. raw has been
// validated by a jsontext.Decoder: quoted, no control bytes, valid UTF-8,
// every escape well formed. Runs without a backslash are copied whole
// (found with bytes.IndexByte, which reads many bytes a step); escapes are
// decoded as jsontext decodes them, a lone surrogate as U+FFFD.
func unquote(text *strings.Builder, raw []byte) {
	s := raw[1 : len(raw)-1]
	text.Grow(len(s))
	for len(s) > 0 {
		i := bytes.IndexByte(s, '\\')
		if i < 0 {
			text.Write(s)
			return
		}
		text.Write(s[:i])
		s = s[i:]
		switch c := s[1]; c {
		case 'b':
			text.WriteByte('\b')
		case 'f':
			text.WriteByte('\f')
		case 'n':
			text.WriteByte('\n')
		case 'r':
			text.WriteByte('\r')
		case 't':
			text.WriteByte('\t')
		case 'u':
			r, n := unicodeEscape(s)
			text.WriteRune(r)
			s = s[n:]
			continue
		default: // '"', '\\', '/'
			text.WriteByte(c)
		}
		s = s[2:]
	}
}

// unicodeEscape decodes the \uXXXX escape s starts with, and the low
// surrogate's escape after it when it is a high surrogate; n is the bytes
// read.
func unicodeEscape(s []byte) (r rune, n int) {
	r = hex4(s[2:6])
	if !utf16.IsSurrogate(r) {
		return r, 6
	}
	if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
		if r2 := utf16.DecodeRune(r, hex4(s[8:12])); r2 != utf8.RuneError {
			return r2, 12
		}
	}
	return utf8.RuneError, 6
}

// hex4 is the value of four hexadecimal digits.
func hex4(h []byte) rune {
	var r rune
	for _, c := range h[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// ResultText is the text a tool result puts before the model: every string
// value of response (a string, or an object or array of them, such as
// Read's {file:{content}}, Bash's {stdout, stderr} or an MCP tool's content
// blocks) in document order, then errText, joined by newlines. Member
// names are not part of it.
func ResultText(response jsontext.Value, errText string) string {
	var parts []string
	if len(response) > 0 {
		dec := jsontext.NewDecoder(bytes.NewBuffer(response))
		for {
			tok, err := dec.ReadToken()
			if err != nil {
				if !errors.Is(err, io.EOF) && len(parts) == 0 {
					parts = append(parts, string(response)) // not JSON: the bytes as they are
				}
				break
			}
			if tok.Kind() != '"' {
				continue
			}
			// A string in an object's name position is a member name.
			if isName(dec) {
				continue
			}
			if s := tok.String(); s != "" {
				parts = append(parts, s)
			}
		}
	}
	if errText != "" {
		parts = append(parts, errText)
	}
	return strings.Join(parts, "\n")
}

// isName reports whether the token just read was an object member's name.
func isName(dec *jsontext.Decoder) bool {
	kind, n := dec.StackIndex(dec.StackDepth())
	return kind == '{' && n%2 == 1
}

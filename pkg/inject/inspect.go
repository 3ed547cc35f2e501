package inject

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

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
	var p PostTool
	var parts []string
	if err := readPostTool(payload, &p, &parts); err != nil {
		return Inspection{}, "", fmt.Errorf("%w: %w", ErrNotPostTool, err)
	}
	if p.ToolName == "" {
		return Inspection{}, "", fmt.Errorf("%w: no tool_name", ErrNotPostTool)
	}
	if p.Error != "" {
		parts = append(parts, p.Error)
	}
	text := strings.Join(parts, "\n")
	return Inspection{Tool: p.ToolName, ToolUseID: p.ToolUseID, Source: Source(p.ToolName, p.ToolInput, p.Cwd)}, text, nil
}

// readPostTool decodes what Read needs of a payload (a JSON object; other
// members are skipped) and appends the non-empty strings of tool_response
// that are not member names to parts, in document order.
func readPostTool(payload []byte, p *PostTool, parts *[]string) error {
	dec := jsontext.NewDecoder(bytes.NewBuffer(payload)) // parsed in place, not copied
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != '{' {
		return fmt.Errorf("a payload is a JSON object, not %v", tok.Kind())
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
			if err := responseStrings(dec, parts); err != nil {
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
			return fmt.Errorf("%s: a string, not %v", name, v.Kind())
		}
	}
	if _, err := dec.ReadToken(); err != nil { // the closing brace
		return err
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("data after the payload's object: %w", err)
	}
	return nil
}

// responseStrings reads one value (tool_response) and appends its
// non-empty strings that are not member names to parts.
func responseStrings(dec *jsontext.Decoder, parts *[]string) error {
	depth := dec.StackDepth()
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		if tok.Kind() == '"' && !isName(dec) {
			if s := tok.String(); s != "" {
				*parts = append(*parts, s)
			}
		}
		if dec.StackDepth() == depth {
			return nil
		}
	}
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

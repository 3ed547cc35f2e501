package dialect

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// MaxTranscriptBytes bounds the Gemini CLI session file ReadTranscript
// reads: a larger one is not read, and the Stop falls back to
// prompt_response.
const MaxTranscriptBytes = 32 << 20

// ErrTranscript marks a session file that was not read or not understood;
// the error says which and why.
var ErrTranscript = errors.New("transcript")

// ReadTranscript reads the session file a Gemini CLI payload's
// transcript_path names, for Options.Transcript. The path must be
// absolute, clean (no "." or ".." elements) and end in ".jsonl", the
// name Gemini CLI gives the files it writes; its last element must not be
// a symbolic link (it is opened with O_NOFOLLOW; the directories above it
// are resolved as the system does); it must be a regular file of at most
// MaxTranscriptBytes. Errors wrap ErrTranscript.
func ReadTranscript(path string) ([]byte, error) {
	switch {
	case path == "":
		return nil, fmt.Errorf("%w: no path", ErrTranscript)
	case !filepath.IsAbs(path):
		return nil, fmt.Errorf("%w %q: not an absolute path", ErrTranscript, path)
	case filepath.Clean(path) != path:
		return nil, fmt.Errorf("%w %q: not a clean path", ErrTranscript, path)
	case !strings.HasSuffix(path, ".jsonl"):
		return nil, fmt.Errorf("%w %q: not a .jsonl file", ErrTranscript, path)
	}
	// O_NONBLOCK: a FIFO put in the file's place must not hang the hook;
	// it is refused below as not a regular file.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%w %q: a symbolic link, not followed", ErrTranscript, path)
		}
		return nil, fmt.Errorf("%w: %w", ErrTranscript, err)
	}
	defer func() { _ = f.Close() }() // read only
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTranscript, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w %q: not a regular file (%s)", ErrTranscript, path, st.Mode().Type())
	}
	if st.Size() > MaxTranscriptBytes {
		return nil, fmt.Errorf("%w %q: %d bytes, the limit is %d", ErrTranscript, path, st.Size(), MaxTranscriptBytes)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxTranscriptBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w %q: %w", ErrTranscript, path, err)
	}
	if len(b) > MaxTranscriptBytes {
		return nil, fmt.Errorf("%w %q: more than %d bytes", ErrTranscript, path, MaxTranscriptBytes)
	}
	return b, nil
}

// geminiRecord is a line of Gemini CLI's session file (gemini-cli
// 0.61.0's ChatRecordingService and loadConversationRecord): a message
// ({id, type, content, toolCalls, …}; a message written again under its
// id replaces the earlier one in place), a rewind ({$rewindTo: id}: that
// message and every later one are dropped, all of them when the id is
// unknown), a metadata update ({$set: {…}}, whose messages, when an
// array, replace the conversation) or metadata ({sessionId, projectHash,
// …, messages?}). Other lines are ignored, as Gemini CLI ignores them.
type geminiRecord struct {
	ID          jsontext.Value `json:"id"`
	Type        jsontext.Value `json:"type"`
	Content     jsontext.Value `json:"content"`
	ToolCalls   jsontext.Value `json:"toolCalls"`
	RewindTo    jsontext.Value `json:"$rewindTo"`
	Set         jsontext.Value `json:"$set"`
	SessionID   jsontext.Value `json:"sessionId"`
	ProjectHash jsontext.Value `json:"projectHash"`
	Messages    jsontext.Value `json:"messages"`
}

// geminiMessage is what GeminiFinalMessage keeps of a message.
type geminiMessage struct {
	typ       string
	content   jsontext.Value
	toolCalls bool
}

// geminiConversation replays a session file's records in order.
type geminiConversation struct {
	order     []string
	messages  map[string]geminiMessage
	sessionID string
}

func jsonString(v jsontext.Value) (string, bool) {
	var s string
	if v.Kind() != '"' || json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

func (c *geminiConversation) set(r *geminiRecord) {
	id, _ := jsonString(r.ID)
	typ, _ := jsonString(r.Type)
	calls := r.ToolCalls.Kind() == '[' && !bytes.Equal(bytes.Join(bytes.Fields(r.ToolCalls), nil), []byte("[]"))
	if _, ok := c.messages[id]; !ok {
		c.order = append(c.order, id)
	}
	c.messages[id] = geminiMessage{typ, r.Content, calls}
}

// setAll sets each message record of a messages array.
func (c *geminiConversation) setAll(v jsontext.Value) error {
	var rs []jsontext.Value
	if err := json.Unmarshal(v, &rs); err != nil {
		return err
	}
	for _, m := range rs {
		var r geminiRecord
		if m.Kind() != '{' {
			continue
		}
		if err := json.Unmarshal(m, &r, json.RejectUnknownMembers(false)); err != nil {
			return err
		}
		if _, ok := jsonString(r.ID); ok {
			c.set(&r)
		}
	}
	return nil
}

func (c *geminiConversation) rewind(id string) {
	for i, o := range c.order {
		if o == id {
			for _, d := range c.order[i:] {
				delete(c.messages, d)
			}
			c.order = c.order[:i]
			return
		}
	}
	c.order, c.messages = nil, map[string]geminiMessage{}
}

// GeminiFinalMessage returns the final message of the turn Gemini CLI's
// session file data records: the text of its last model ("gemini")
// message, which must come after the last user message, call no tools and
// hold a non-empty string. The file must be session's (its metadata's
// sessionId). Gemini CLI writes each model response there once its stream
// has ended, before AfterAgent fires, as the text it shows: the stream's
// text parts joined, zero-width characters and HTML comments removed,
// trimmed. Every non-blank line must be a JSON object; errors wrap
// ErrTranscript and name the line.
func GeminiFinalMessage(data []byte, session string) (string, error) {
	c := geminiConversation{messages: map[string]geminiMessage{}}
	sawSession := false
	for n, line := 1, data; len(line) > 0; n++ {
		var l []byte
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			l, line = line[:i], line[i+1:]
		} else {
			l, line = line, nil
		}
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		var r geminiRecord
		if err := json.Unmarshal(l, &r, json.RejectUnknownMembers(false)); err != nil {
			return "", fmt.Errorf("%w: line %d: %s", ErrTranscript, n, memberError(err))
		}
		// The kinds in the order Gemini CLI tells them apart.
		if id, ok := jsonString(r.RewindTo); ok {
			c.rewind(id)
			continue
		}
		if _, ok := jsonString(r.ID); ok {
			c.set(&r)
			continue
		}
		meta := r.SessionID
		messages := r.Messages
		if r.Set.Kind() == '{' {
			var s geminiRecord
			if err := json.Unmarshal(r.Set, &s, json.RejectUnknownMembers(false)); err != nil {
				return "", fmt.Errorf("%w: line %d: $set: %s", ErrTranscript, n, memberError(err))
			}
			meta, messages = s.SessionID, s.Messages
			if messages.Kind() == '[' {
				c.order, c.messages = nil, map[string]geminiMessage{}
			}
		} else if _, ok := jsonString(r.ProjectHash); !ok || r.SessionID.Kind() != '"' {
			continue
		}
		if s, ok := jsonString(meta); ok {
			c.sessionID, sawSession = s, true
		}
		if messages.Kind() == '[' {
			if err := c.setAll(messages); err != nil {
				return "", fmt.Errorf("%w: line %d: messages: %s", ErrTranscript, n, memberError(err))
			}
		}
	}
	switch {
	case !sawSession:
		return "", fmt.Errorf("%w: names no sessionId", ErrTranscript)
	case c.sessionID != session:
		return "", fmt.Errorf("%w: it is session %q's, not %q's", ErrTranscript, c.sessionID, session)
	}
	for i := len(c.order) - 1; i >= 0; i-- {
		m := c.messages[c.order[i]]
		switch m.typ {
		case "user":
			return "", fmt.Errorf("%w: no model message after the last user message", ErrTranscript)
		case "gemini":
			text, ok := jsonString(m.content)
			switch {
			case m.toolCalls:
				return "", fmt.Errorf("%w: the last model message calls tools", ErrTranscript)
			case !ok:
				return "", fmt.Errorf("%w: the last model message's content is not a string", ErrTranscript)
			case strings.TrimSpace(text) == "":
				return "", fmt.Errorf("%w: the last model message has no text", ErrTranscript)
			}
			return text, nil
		}
	}
	return "", fmt.Errorf("%w: no model message", ErrTranscript)
}

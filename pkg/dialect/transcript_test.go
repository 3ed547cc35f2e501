package dialect_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/dialect"
)

// Lines of a Gemini CLI session file as gemini-cli 0.61.0 writes them
// (ChatRecordingService): the metadata first, then each message as it is
// recorded, a message written again under its id when it changes,
// metadata updates ($set) and rewinds ($rewindTo).
const (
	tSession = "e849aea9-2b9f-40db-a376-c106011fb0e1"
	tMeta    = `{"sessionId":"` + tSession + `","projectHash":"3f1c","startTime":"2026-11-25T06:05:48.766Z","lastUpdated":"2026-11-25T06:05:48.766Z","kind":"main"}`
	tUser    = `{"id":"u1","timestamp":"2026-11-25T06:05:49.000Z","type":"user","content":[{"text":"Run the tests."}]}`
	tSet     = `{"$set":{"lastUpdated":"2026-11-25T06:05:49.001Z"}}`
	tCall    = `{"id":"g1","timestamp":"2026-11-25T06:05:50.000Z","type":"gemini","content":"","thoughts":[],"model":"gemini-2.5-flash","toolCalls":[{"id":"c1","name":"run_shell_command","args":{"command":"go test ./..."}}]}`
	tFinal   = `{"id":"g2","timestamp":"2026-11-25T06:05:52.000Z","type":"gemini","content":"Done, all tests pass.","thoughts":[],"tokens":null,"model":"gemini-2.5-flash"}`
	tTokens  = `{"id":"g2","timestamp":"2026-11-25T06:05:52.000Z","type":"gemini","content":"Done, all tests pass.","thoughts":[],"tokens":{"input":100,"output":20,"cached":0,"thoughts":0,"tool":0,"total":120},"model":"gemini-2.5-flash"}`
	tFed     = `{"id":"u2","timestamp":"2026-11-25T06:05:53.000Z","type":"user","content":[{"text":"claimcheck blocked this stop: no evidence."}]}`
	tAgain   = `{"id":"g3","timestamp":"2026-11-25T06:05:54.000Z","type":"gemini","content":"Ran it: ok.","thoughts":[],"tokens":null,"model":"gemini-2.5-flash"}`
	tInfo    = `{"id":"i1","timestamp":"2026-11-25T06:05:55.000Z","type":"info","content":"Request cancelled."}`
)

func lines(ls ...string) []byte { return []byte(strings.Join(ls, "\n") + "\n") }

// TestGeminiFinalMessage replays session files as Gemini CLI does and
// takes the turn's last model message; each file it cannot vouch for is
// an error naming why.
func TestGeminiFinalMessage(t *testing.T) {
	tests := []struct {
		name    string
		data    []byte
		want    string
		wantErr string
	}{
		{"a text answer", lines(tMeta, tUser, tSet, tFinal, tSet), "Done, all tests pass.", ""},
		{"after tool calls, rewritten with its tokens", lines(tMeta, tUser, tCall, tSet, tFinal, tSet, tTokens, tSet), "Done, all tests pass.", ""},
		{"after a blocked stop", lines(tMeta, tUser, tFinal, tFed, tAgain), "Ran it: ok.", ""},
		{"an info message after it", lines(tMeta, tUser, tFinal, tInfo), "Done, all tests pass.", ""},
		{"blank and CRLF lines", []byte(tMeta + "\r\n\r\n" + tUser + "\n  \n" + tFinal), "Done, all tests pass.", ""},
		{"rewound to before the fed-back prompt", lines(tMeta, tUser, tFinal, tFed, tAgain, `{"$rewindTo":"u2"}`), "Done, all tests pass.", ""},
		{"$set messages replace the conversation", lines(tMeta, tUser, tAgain, `{"$set":{"messages":[`+tUser+`,`+tFinal+`]}}`), "Done, all tests pass.", ""},
		{"metadata carrying messages", lines(`{"sessionId":"` + tSession + `","projectHash":"3f1c","messages":[` + tUser + `,` + tFinal + `]}`), "Done, all tests pass.", ""},
		{"the session from a $set", lines(`{"sessionId":"other","projectHash":"3f1c"}`, `{"$set":{"sessionId":"`+tSession+`"}}`, tUser, tFinal), "Done, all tests pass.", ""},

		{"no model message after the user's", lines(tMeta, tUser, tFinal, tFed), "", "no model message after the last user message"},
		{"the last model message calls tools", lines(tMeta, tUser, tCall), "", "the last model message calls tools"},
		{"content not a string", lines(tMeta, tUser, `{"id":"g9","type":"gemini","content":[{"text":"hi"}]}`), "", "content is not a string"},
		{"empty text", lines(tMeta, tUser, `{"id":"g9","type":"gemini","content":"  \n"}`), "", "has no text"},
		{"rewound to an unknown id", lines(tMeta, tUser, tFinal, `{"$rewindTo":"nope"}`), "", "no model message"},
		{"no messages", lines(tMeta), "", "no model message"},
		{"another session's file", lines(strings.Replace(tMeta, tSession, "a823d0ed-0c4b-42b5-9f4d-483d38c9a92c", 1), tUser, tFinal), "",
			`it is session "a823d0ed-0c4b-42b5-9f4d-483d38c9a92c"'s`},
		{"no session", lines(tUser, tFinal), "", "names no sessionId"},
		{"metadata without projectHash", lines(`{"sessionId":"`+tSession+`"}`, tUser, tFinal), "", "names no sessionId"},
		{"empty", nil, "", "names no sessionId"},
		{"truncated last line", append(lines(tMeta, tUser), tFinal[:len(tFinal)/2]...), "", "line 3:"},
		{"not an object", lines(tMeta, `["x"]`, tFinal), "", "line 2:"},
		{"a duplicate member", lines(tMeta, tUser, `{"id":"g9","type":"gemini","content":"a","content":"b"}`), "", "line 3:"},
		{"invalid UTF-8", lines(tMeta, tUser, "{\"id\":\"g9\",\"type\":\"gemini\",\"content\":\"\xff\"}"), "", "line 3:"},
		{"a bad $set", lines(tMeta, `{"$set":{"messages":[{"id":"x","type":"gemini","content":"a","content":"b"}]}}`), "", "line 2: jsontext: duplicate object member name \"content\" within \"/$set/messages/0\""},
		{"a bad messages member", lines(`{"sessionId":"` + tSession + `","projectHash":"3f1c","messages":[{"id":"x","id":"y"}]}`), "", `line 1: jsontext: duplicate object member name "id" within "/messages/0"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := dialect.GeminiFinalMessage(tc.data, tSession)
			if tc.wantErr == "" {
				if err != nil || got != tc.want {
					t.Fatalf("= %q, %v; want %q", got, err, tc.want)
				}
				return
			}
			if err == nil || !errors.Is(err, dialect.ErrTranscript) || !strings.Contains(err.Error(), tc.wantErr) || got != "" {
				t.Fatalf("= %q, %v; want an ErrTranscript saying %q", got, err, tc.wantErr)
			}
		})
	}
}

// TestGeminiFinalMessageCaptured reads session files the real client
// wrote (testdata/gemini-cli-0.61.0-chats, README.md there): its final
// message is the text as streamed, where AfterAgent's prompt_response
// repeats the chunks after it.
func TestGeminiFinalMessageCaptured(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "gemini-cli-0.61.0-chats", "*.jsonl"))
	if len(files) == 0 {
		t.Fatal("no captured session files")
	}
	for _, p := range files {
		t.Run(filepath.Base(p), func(t *testing.T) {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			var want struct {
				Session, Message, PromptResponse string
			}
			b, err := os.ReadFile(strings.TrimSuffix(p, ".jsonl") + ".want.json")
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			got, err := dialect.GeminiFinalMessage(data, want.Session)
			if err != nil || got != want.Message {
				t.Fatalf("= %q, %v; want %q", got, err, want.Message)
			}
			if !strings.Contains(want.PromptResponse, got) || want.PromptResponse == got {
				t.Errorf("prompt_response %q: want the message inside it, and more", want.PromptResponse)
			}
		})
	}
}

// TestReadTranscript: only an absolute, clean .jsonl path naming a regular
// file no larger than the cap is read; a symbolic link is not followed.
func TestReadTranscript(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "session-2026-11-25T06-05-e849aea9.jsonl")
	if err := os.WriteFile(good, lines(tMeta, tUser, tFinal), 0o600); err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(dir, "elsewhere")
	if err := os.WriteFile(elsewhere, lines(tMeta, tUser, tAgain), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(elsewhere, link); err != nil {
		t.Fatal(err)
	}
	asDir := filepath.Join(dir, "dir.jsonl")
	if err := os.Mkdir(asDir, 0o700); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.jsonl")
	if err := os.WriteFile(big, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, dialect.MaxTranscriptBytes+1); err != nil { // sparse
		t.Fatal(err)
	}
	atCap := filepath.Join(dir, "cap.jsonl")
	if err := os.WriteFile(atCap, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(atCap, dialect.MaxTranscriptBytes); err != nil {
		t.Fatal(err)
	}
	unreadable := filepath.Join(dir, "unreadable.jsonl")
	if err := os.WriteFile(unreadable, lines(tMeta), 0o000); err != nil {
		t.Fatal(err)
	}

	b, err := dialect.ReadTranscript(good)
	if err != nil || string(b) != string(lines(tMeta, tUser, tFinal)) {
		t.Fatalf("ReadTranscript(good) = %q, %v", b, err)
	}
	if b, err := dialect.ReadTranscript(atCap); err != nil || len(b) != dialect.MaxTranscriptBytes {
		t.Fatalf("ReadTranscript(a file at the cap) = %d bytes, %v", len(b), err)
	}
	tests := []struct{ name, path, wantErr string }{
		{"empty", "", "no path"},
		{"relative", "chats/session.jsonl", "not an absolute path"},
		{"unclean", filepath.Join(dir, "x") + "/../" + filepath.Base(good), "not a clean path"},
		{"not .jsonl", elsewhere, "not a .jsonl file"},
		{"missing", filepath.Join(dir, "missing.jsonl"), "no such file"},
		{"a symlink", link, "a symbolic link, not followed"},
		{"a directory", asDir, "not a regular file"},
		{"a FIFO", fifo, "not a regular file"},
		{"oversized", big, "the limit is"},
		{"/dev/null", "/dev/null.jsonl", "no such file"},
	}
	if os.Geteuid() != 0 { // root reads a file of mode 0
		tests = append(tests, struct{ name, path, wantErr string }{"unreadable", unreadable, "permission denied"})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := dialect.ReadTranscript(tc.path)
			if err == nil || !errors.Is(err, dialect.ErrTranscript) || !strings.Contains(err.Error(), tc.wantErr) || b != nil {
				t.Fatalf("ReadTranscript(%q) = %d bytes, %v; want an ErrTranscript saying %q", tc.path, len(b), err, tc.wantErr)
			}
		})
	}
}

// FuzzGeminiFinalMessage: no session file makes GeminiFinalMessage panic;
// a message it returns is non-empty text of a model message in the file,
// and a user message after it takes it away.
func FuzzGeminiFinalMessage(f *testing.F) {
	f.Add(lines(tMeta, tUser, tCall, tSet, tFinal, tTokens))
	f.Add(lines(tMeta, tUser, tFinal, tFed, tAgain, `{"$rewindTo":"u2"}`))
	f.Add(lines(tMeta, `{"$set":{"messages":[`+tUser+`,`+tFinal+`]}}`))
	files, _ := filepath.Glob(filepath.Join("testdata", "gemini-cli-0.61.0-chats", "*.jsonl"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		session := tSession
		if m := strings.Index(string(data), `"sessionId":"`); m >= 0 {
			if s, _, ok := strings.Cut(string(data[m+len(`"sessionId":"`):]), `"`); ok {
				session = s
			}
		}
		got, err := dialect.GeminiFinalMessage(data, session)
		if err != nil {
			if !errors.Is(err, dialect.ErrTranscript) || got != "" {
				t.Fatalf("= %q, %v: want no message and an ErrTranscript", got, err)
			}
			return
		}
		if strings.TrimSpace(got) == "" {
			t.Fatal("an empty final message")
		}
		enc, _ := json.Marshal(got)
		if !strings.Contains(string(data), `"type":"gemini"`) && !strings.Contains(string(data), "gemini") {
			t.Fatalf("final message %s from a file with no model message", enc)
		}
		after := append(append([]byte(nil), data...), "\n"+`{"id":"zz-user","type":"user","content":"more"}`+"\n"...)
		if got, err := dialect.GeminiFinalMessage(after, session); err == nil {
			t.Fatalf("a user message after the final one: still %q", got)
		}
	})
}

// TestReadGeminiStopFinalMessage: with a transcript reader, a Gemini CLI
// Stop's last_assistant_message is the session file's last model message
// when that is part of prompt_response; otherwise prompt_response, with
// transcript_error saying why. The source is recorded; the agent's
// payload travels verbatim.
func TestReadGeminiStopFinalMessage(t *testing.T) {
	const path = "/home/u/.gemini/tmp/proj/chats/session-2026-11-25T06-05-e849aea9.jsonl"
	const streamed = "Done, all tests pass. all tests pass." // two chunks, as gemini-cli 0.61.0 sends them
	stop := func(members string) []byte {
		return []byte(`{"session_id":"` + tSession + `",` + members + `"cwd":"/p","hook_event_name":"AfterAgent",` +
			`"timestamp":"2026-11-25T06:06:43.328Z","prompt":"Run the tests.","stop_hook_active":false}`)
	}
	withPath := func(pr string) []byte {
		return stop(`"transcript_path":"` + path + `","prompt_response":` + string(mustJSON(t, pr)) + `,`)
	}
	file := lines(tMeta, tUser, tCall, tFinal)
	read := func(b []byte, err error) func(string) ([]byte, error) {
		return func(p string) ([]byte, error) {
			if p != path {
				t.Errorf("read %q, want the payload's transcript_path", p)
			}
			return b, err
		}
	}
	type got struct {
		Message string  `json:"last_assistant_message"`
		Source  string  `json:"last_assistant_message_source"`
		Error   *string `json:"transcript_error"`
	}
	errIs := func(s string) *string { return &s }
	tests := []struct {
		name   string
		raw    []byte
		reader func(string) ([]byte, error)
		want   got
	}{
		{"read from the file", withPath(streamed), read(file, nil), got{"Done, all tests pass.", "transcript_path", nil}},
		{"the captured payload", fixture(t, "gemini-cli-0.61.0/AfterAgent.json"),
			func(string) ([]byte, error) { return file, nil }, got{"Done, all tests pass.", "transcript_path", nil}},
		{"no reader", withPath(streamed), nil, got{streamed, "prompt_response", nil}},
		{"unreadable", withPath(streamed), read(nil, errors.New("open: permission denied")),
			got{streamed, "prompt_response", errIs("transcript: open: permission denied")}},
		{"refused by ReadTranscript", withPath(streamed), read(nil, dialect.ErrTranscript),
			got{streamed, "prompt_response", errIs("transcript")}},
		{"malformed", withPath(streamed), read(append(lines(tMeta, tUser), tFinal[:20]...), nil),
			got{streamed, "prompt_response", errIs("line 3:")}},
		{"another session's", withPath(streamed), read(lines(`{"sessionId":"x","projectHash":"h"}`, tUser, tFinal), nil),
			got{streamed, "prompt_response", errIs(`it is session "x"'s`)}},
		{"not part of prompt_response", withPath("Something else."), read(file, nil),
			got{"Something else.", "prompt_response", errIs("its last model message is not part of prompt_response")}},
		{"no transcript_path", stop(`"prompt_response":"Done.",`), read(file, nil),
			got{"Done.", "prompt_response", errIs("transcript: no transcript_path")}},
		{"an empty transcript_path", stop(`"transcript_path":"","prompt_response":"Done.",`), read(file, nil),
			got{"Done.", "prompt_response", errIs("transcript: no transcript_path")}},
		{"no prompt_response", stop(`"transcript_path":"` + path + `",`), read(file, nil), got{"Done, all tests pass.", "transcript_path", nil}},
		{"neither", stop(`"transcript_path":"` + path + `",`), read(lines(tMeta), nil), got{"", "", errIs("no model message")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := dialect.Read(dialect.Gemini, tc.raw, dialect.Options{MaxBytes: 1 << 20, Transcript: tc.reader})
			if err != nil || ev.Info.HookEvent != "Stop" || !ev.Mapped {
				t.Fatalf("Read: %v (%s, mapped %v)", err, ev.Info.HookEvent, ev.Mapped)
			}
			var g got
			if err := json.Unmarshal(ev.Payload, &g, json.RejectUnknownMembers(false)); err != nil {
				t.Fatal(err)
			}
			if g.Message != tc.want.Message || g.Source != tc.want.Source || (g.Error == nil) != (tc.want.Error == nil) ||
				g.Error != nil && !strings.Contains(*g.Error, *tc.want.Error) {
				t.Errorf("mapped %s\nwant %+v (transcript_error containing %v)", ev.Payload, tc.want, tc.want.Error)
			}
			if !strings.HasSuffix(string(ev.Payload), `"agent_payload":`+string(tc.raw)+"}") {
				t.Errorf("the agent's payload is not kept verbatim: %s", ev.Payload)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

package oneshot

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"testing"
)

// FuzzNext feeds arbitrary server bytes to the reply parser: it must never
// panic, never allocate beyond its bounds, and return every message it
// accepts with the announced sizes.
func FuzzNext(f *testing.F) {
	f.Add([]byte("MSG _INBOX.x.1 1 2\r\nhi\r\n"))
	f.Add([]byte("HMSG _INBOX.x.1 1 16 16\r\nNATS/1.0 503\r\n\r\n\r\n"))
	f.Add([]byte("PING\r\nINFO {\"max_payload\":10}\r\nMSG a 1 5\r\nhello\r\n"))
	f.Add([]byte("MSG a 1 99999999999\r\n"))
	f.Add([]byte("-ERR 'Authorization Violation'\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		c := &Conn{r: bufio.NewReader(bytes.NewReader(in)), w: bufio.NewWriter(io.Discard)}
		for range 100 {
			m, err := c.next(context.Background())
			if err != nil {
				return
			}
			if len(m.Data) > maxUnknownPayload+4096 {
				t.Fatalf("message of %d bytes accepted", len(m.Data))
			}
		}
	})
}

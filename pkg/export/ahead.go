package export

import (
	"cmp"
	"errors"
	"io"
)

// aheadSize is the size of each of an aheadWriter's two buffers.
const aheadSize = 256 << 10

// errClosed is what an aheadWriter answers once closed.
var errClosed = errors.New("export: write after Close")

// aheadWriter is a buffered writer whose full buffer is written out by a
// goroutine while the caller fills the other one: an export's writes to
// its file (the kernel copying megabytes into the page cache) overlap the
// replay's reading and checking of the next entries instead of following
// them. The bytes reach the underlying writer in the order written, in
// one Write per buffer. A write error is returned by a later call (Write,
// Flush or Close), as a bufio.Writer returns it from the Write that
// flushes; Flush and Close return once every byte written before them is
// written out, or with the first error.
type aheadWriter struct {
	buf  []byte        // being filled
	idle [][]byte      // empty buffers, given back
	todo chan []byte   // full buffers, to the goroutine
	done chan written  // buffers back from the goroutine
	out  int           // buffers with the goroutine
	err  error         // the first write error
	gone chan struct{} // closed when the goroutine has ended
}

type written struct {
	buf []byte
	err error
}

func newAheadWriter(w io.Writer) *aheadWriter {
	a := &aheadWriter{buf: make([]byte, 0, aheadSize), todo: make(chan []byte, 2), done: make(chan written, 2),
		gone: make(chan struct{})}
	go func() {
		defer close(a.gone)
		var err error
		for b := range a.todo {
			if err == nil {
				_, err = w.Write(b)
			}
			a.done <- written{b[:0], err}
		}
	}()
	return a
}

// take waits for the goroutine to give back a buffer.
func (a *aheadWriter) take() []byte {
	r := <-a.done
	a.out--
	if r.err != nil && a.err == nil {
		a.err = r.err
	}
	return r.buf
}

// spill hands the full buffer to the goroutine and takes an empty one:
// given back, new while there are fewer than two, or waited for.
func (a *aheadWriter) spill() {
	a.todo <- a.buf
	a.out++
	switch n := len(a.idle); {
	case n > 0:
		a.buf, a.idle = a.idle[n-1], a.idle[:n-1]
	case a.out < 2:
		a.buf = make([]byte, 0, aheadSize)
	default:
		a.buf = a.take()
	}
}

func (a *aheadWriter) Write(p []byte) (int, error) {
	if a.err != nil {
		return 0, a.err
	}
	if a.todo == nil {
		return 0, errClosed
	}
	a.buf = append(a.buf, p...)
	if len(a.buf) >= aheadSize {
		a.spill()
	}
	return len(p), nil
}

func (a *aheadWriter) WriteByte(c byte) error {
	if a.err != nil {
		return a.err
	}
	if a.todo == nil {
		return errClosed
	}
	a.buf = append(a.buf, c)
	if len(a.buf) >= aheadSize {
		a.spill()
	}
	return nil
}

// Flush writes out everything written so far and waits for it.
func (a *aheadWriter) Flush() error {
	if a.todo == nil {
		return cmp.Or(a.err, errClosed)
	}
	if len(a.buf) > 0 && a.err == nil {
		a.spill()
	}
	for a.out > 0 {
		a.idle = append(a.idle, a.take())
	}
	return a.err
}

// Close flushes and ends the goroutine; it does not close the underlying
// writer.
func (a *aheadWriter) Close() error {
	if a.todo == nil {
		return a.err
	}
	err := a.Flush()
	close(a.todo)
	a.todo = nil
	<-a.gone
	return err
}

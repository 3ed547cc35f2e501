package export

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/replay"
)

// The buffer written out by a goroutine keeps the bytes in order across
// many buffers, and Flush leaves the file holding everything written
// before it (an export that follows the ledger flushes after each entry).
func TestAheadWriterKeepsOrderAndFlushes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	a := newAheadWriter(f)
	r := rand.New(rand.NewPCG(3, 4))
	var want []byte
	for i := range 400 {
		var p []byte
		switch i % 50 {
		case 7:
			p = make([]byte, aheadSize+r.IntN(aheadSize)) // larger than a buffer
		case 8:
			p = nil
		default:
			p = make([]byte, r.IntN(40<<10))
		}
		for j := range p {
			p[j] = byte(r.Uint32())
		}
		if i%3 == 0 {
			if err := a.WriteByte(byte(i)); err != nil {
				t.Fatal(err)
			}
			want = append(want, byte(i))
		}
		if n, err := a.Write(p); err != nil || n != len(p) {
			t.Fatalf("Write: %d, %v", n, err)
		}
		want = append(want, p...)
		if i%97 == 0 {
			if err := a.Flush(); err != nil {
				t.Fatal(err)
			}
			if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("after Flush %d: the file holds %d bytes (%v), want the %d written", i, len(got), err, len(want))
			}
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("after Close: the file holds %d bytes (%v), want the %d written", len(got), err, len(want))
	}
	if _, err := a.Write([]byte("x")); !errors.Is(err, errClosed) {
		t.Fatalf("Write after Close: %v", err)
	}
}

// A write the goroutine could not make is returned by a later call, and
// by every call after it.
func TestAheadWriterReportsWriteErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ro, err := os.Open(path) // read-only: every write fails
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ro.Close() }()
	a := newAheadWriter(ro)
	p := make([]byte, 100<<10)
	var werr error
	for range 10 { // two buffers spilled: the first one's error is back
		if _, werr = a.Write(p); werr != nil {
			break
		}
	}
	if werr == nil {
		t.Fatal("10 writes of 100 KiB into a read-only file: no error")
	}
	if err := a.Flush(); err == nil {
		t.Fatal("Flush after a failed write: no error")
	}
	if err := a.Close(); err == nil {
		t.Fatal("Close after a failed write: no error")
	}

	// A small export that fails only when flushed.
	w, err := New(NDJSON, ro, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&replay.Record{Raw: []byte(`{"a":1}`)}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err == nil {
		t.Fatal("Close of an export into a read-only file: no error")
	}
}

// An NDJSON export of several buffers into a file holds every entry as
// stored, one a line, and the chain verifies from the file.
func TestNDJSONFileSpanningBuffers(t *testing.T) {
	_, recs := records(t)
	size := 0
	for _, r := range recs {
		size += len(r.Raw) + 1
	}
	rounds := 3*aheadSize/size + 1
	path := filepath.Join(t.TempDir(), "export.ndjson")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	w, err := New(NDJSON, f, false)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	for range rounds {
		for _, r := range recs {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
			want.Write(r.Raw)
			want.WriteByte('\n')
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("the file holds %d bytes, not the %d of the entries as stored", len(got), want.Len())
	}
	lines := bytes.Split(bytes.TrimSuffix(got, []byte("\n")), []byte("\n"))
	if err := chain.Verify("s1", lines[:len(recs)]); err != nil {
		t.Fatalf("the export does not verify: %v", err)
	}
}

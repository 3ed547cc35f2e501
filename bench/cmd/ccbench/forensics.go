package main

// The forensics benchmark: one JetStream server in this process, LEDGER
// filled as the archive benchmark fills it (hook events of many sessions,
// 1..8 entries per message), then four rows over the whole ledger,
// repeated and interleaved, the median printed:
//
//   - plain read: every LEDGER message read with one ordered consumer and
//     split into its entries. The baseline.
//   - ledger verify: every chain recomputed (hash, position, link, event
//     ids) and every entry validated against entry.v1, as `claimcheck
//     ledger verify` does (ledger.Reader.Verify).
//   - replay: replay.Run over the whole ledger, every entry checked against
//     its chain, as `claimcheck ledger replay` reads (without printing).
//   - export ndjson: replay.Run into export's NDJSON writer, to a file on
//     the same disk, as `claimcheck export --format ndjson --out FILE`;
//     the file's fsync afterwards is timed apart (the command does not
//     fsync).
//   - export ecs: the same into Elastic Common Schema documents.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/entryschema"
	"github.com/claimcheck/claimcheck/pkg/export"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/replay"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/schemas/validation"
)

func forensicsBench(o options, tmp string) error {
	n := o.forensicsEntries
	if o.quick {
		n = min(n, 20000)
	}
	if n < 1 {
		return fmt.Errorf("-forensics-entries %d: must be at least 1", n)
	}
	ctx := context.Background()
	dir := filepath.Join(tmp, "forensics")
	l, err := startLocalJS(ctx, filepath.Join(dir, "nats"))
	if err != nil {
		return err
	}
	defer l.close()
	js := l.js
	start := time.Now()
	if err := fillLedger(ctx, js, n); err != nil {
		return fmt.Errorf("fill: %w", err)
	}
	fill := time.Since(start)
	val, err := validation.New()
	if err != nil {
		return err
	}
	rows := []struct {
		name string
		run  func() (archiveRow, error)
	}{
		{"plain JetStream read (ordered consumer)", func() (archiveRow, error) { return plainRead(ctx, js) }},
		{"ledger verify (chains + entry schema)", func() (archiveRow, error) { return verifyAll(ctx, js, val) }},
		{"ledger replay (every entry chain-checked)", func() (archiveRow, error) { return replayAll(ctx, js, "", "") }},
		{"export --format ndjson --out FILE", func() (archiveRow, error) { return replayAll(ctx, js, export.NDJSON, dir) }},
	}
	if o.forensicsECS {
		rows = append(rows, struct {
			name string
			run  func() (archiveRow, error)
		}{"export --format ecs --out FILE", func() (archiveRow, error) { return replayAll(ctx, js, export.ECS, dir) }})
	}
	results := make([][]archiveRow, len(rows))
	for run := range archiveRuns {
		for i, r := range rows {
			stop, err := rowProfile(o.forensicsProfiles, i, run)
			if err != nil {
				return err
			}
			row, err := r.run()
			if perr := stop(); perr != nil && err == nil {
				err = perr
			}
			if err != nil {
				return fmt.Errorf("%s: %w", r.name, err)
			}
			if row.entries != n {
				return fmt.Errorf("%s read %d entries, the ledger holds %d", r.name, row.entries, n)
			}
			results[i] = append(results[i], row)
		}
	}
	plain := medianRow(results[0])
	fmt.Printf("Forensics: %d LEDGER entries in %d messages (hook events of %d sessions, 1..%d per message), "+
		"read whole; median of %d interleaved runs\n", n, plain.messages, archiveSessions, archiveMaxBlock, archiveRuns)
	fmt.Printf("  %-44s %8s %7s %10s %11s %9s %10s %8s\n", "", "entries", "s", "entries/s", "CPU/entry", "vs plain", "written",
		"+fsync s")
	for i, r := range rows {
		m := medianRow(results[i])
		w, fsync := "-", "-"
		if m.written > 0 {
			w, fsync = mb(m.written), fmt.Sprintf("%.2f", m.sync.Seconds())
		}
		fmt.Printf("  %-44s %8d %7.2f %10.0f %8.1f µs %8.2f× %10s %8s\n", r.name, m.entries, m.d.Seconds(), m.rate(),
			us(m.cpu)/float64(m.entries), m.rate()/plain.rate(), w, fsync)
	}
	fmt.Printf("  target: ledger verify, replay and NDJSON export ≥ 100k entries/s (issue #18, on a 1M-entry ledger)\n")
	fmt.Printf("  CPU/entry is this whole process (server and reader) on %d CPUs; filling LEDGER, not timed, ran at %.0f entries/s\n",
		numCPU(), float64(n)/fill.Seconds())
	return nil
}

// rowProfile starts a CPU profile of one timed row run into dir (none
// when dir is empty); stop ends it and writes a heap profile beside it.
func rowProfile(dir string, row, run int) (stop func() error, err error) {
	if dir == "" {
		return func() error { return nil }, nil
	}
	name := filepath.Join(dir, fmt.Sprintf("forensics-row%d-run%d", row, run))
	f, err := os.Create(name + ".cpu.pprof")
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return err
		}
		h, err := os.Create(name + ".heap.pprof")
		if err != nil {
			return err
		}
		if err := pprof.WriteHeapProfile(h); err != nil {
			_ = h.Close()
			return err
		}
		return h.Close()
	}, nil
}

// plainRead reads LEDGER with one ordered consumer and counts entries.
func plainRead(ctx context.Context, js jetstream.JetStream) (archiveRow, error) {
	var r archiveRow
	cpu0, start := procCPU(os.Getpid()), time.Now()
	s, err := js.Stream(ctx, stream.Ledger)
	if err != nil {
		return r, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return r, err
	}
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy})
	if err != nil {
		return r, err
	}
	for left := info.State.Msgs; left > 0; {
		batch, err := cons.Fetch(int(min(left, 512)), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return r, err
		}
		got := 0
		for m := range batch.Messages() {
			got++
			left--
			if _, ok := chainOfSubject(m.Subject()); ok {
				r.entries += len(ledger.SplitBlock(m.Data()))
			}
			r.messages++
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
			return r, err
		}
		if got == 0 {
			return r, fmt.Errorf("no messages with %d left", left)
		}
	}
	r.d, r.cpu = time.Since(start), procCPU(os.Getpid())-cpu0
	return r, nil
}

func chainOfSubject(s string) (string, bool) {
	const p = "cc.ledger."
	if len(s) <= len(p) || s[:len(p)] != p {
		return "", false
	}
	return s[len(p):], true
}

// verifyAll is `ledger verify`'s work: every chain, every entry's schema
// (ledger.Reader.Verify, as the command calls it).
func verifyAll(ctx context.Context, js jetstream.JetStream, val *validation.Validator) (archiveRow, error) {
	var r archiveRow
	cpu0, start := procCPU(os.Getpid()), time.Now()
	es, err := entryschema.New(val)
	if err != nil {
		return r, err
	}
	res, err := ledger.NewReader(js, "").Verify(ctx, ledger.VerifyConfig{Check: es.ValidateScanned})
	r.d, r.cpu, r.entries = time.Since(start), procCPU(os.Getpid())-cpu0, res.Entries
	if err == nil && len(res.Faults) > 0 {
		err = fmt.Errorf("%d faults: %w", len(res.Faults), res.Faults[0])
	}
	return r, err
}

// replayAll replays the whole ledger, writing format f into a file under
// dir when f is set.
func replayAll(ctx context.Context, js jetstream.JetStream, f export.Format, dir string) (archiveRow, error) {
	var r archiveRow
	var w export.Writer
	var file *os.File
	if f != "" {
		var err error
		if file, err = os.CreateTemp(dir, "export-*"); err != nil {
			return r, err
		}
		defer func() { _ = os.Remove(file.Name()) }()
		defer func() { _ = file.Close() }()
		if w, err = export.New(f, file, false); err != nil {
			return r, err
		}
	}
	cpu0, start := procCPU(os.Getpid()), time.Now()
	sum, err := replay.Run(ctx, replay.Config{JS: js}, func(rec *replay.Record) error {
		if rec.Check != replay.CheckOK {
			return fmt.Errorf("entry %s: %s %s", rec.Pos, rec.Check, rec.Reason)
		}
		r.entries++
		if w != nil {
			return w.Write(rec)
		}
		return nil
	})
	if err == nil && w != nil {
		err = w.Close()
	}
	// The timed window ends where `claimcheck export --out` ends: the
	// entries written and flushed (the command does not fsync its file).
	r.d, r.cpu = time.Since(start), procCPU(os.Getpid())-cpu0
	if err == nil && file != nil {
		// Then the file is made durable, timed apart: what an export that
		// must survive a crash would add.
		t := time.Now()
		err = file.Sync()
		r.sync = time.Since(t)
	}
	if err != nil {
		return r, err
	}
	if len(sum.Faults) > 0 {
		return r, fmt.Errorf("%d faults: %+v", len(sum.Faults), sum.Faults[0])
	}
	if file != nil {
		fi, err := file.Stat()
		if err != nil {
			return r, err
		}
		r.written = fi.Size()
	}
	return r, nil
}

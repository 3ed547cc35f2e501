package main

// The archive benchmark: one JetStream server in this process, LEDGER
// filled as ingest fills it (hook events of many sessions, several entries
// per ledger message), then three rows, repeated and interleaved:
//
//   - plain copy: the same LEDGER messages read with one ordered consumer,
//     written uncompressed as JSON lines into a file:// bucket in objects
//     of the rotator's segment size, and each object read back and
//     compared. The baseline.
//   - rotator archive pass: one rotator.Service.Pass into a fresh file://
//     bucket: each segment built (zstd, manifest with per-chain ranges),
//     uploaded, read back, decoded and compared with the stream, and a
//     checkpoint signed (ECDSA), uploaded and read back. The hot window is
//     so long that nothing is trimmed.
//   - archive.VerifyChains: every chain verified across the archive (just
//     written) and the hot stream, as `claimcheck archive verify` does.

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/claimcheck/claimcheck/pkg/archive"
	"github.com/claimcheck/claimcheck/pkg/clock"
	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/service"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/services/rotator"
)

const (
	archiveSessions = 500
	archiveRuns     = 3 // of each row, interleaved; the median is printed
	// archiveMaxBlock bounds the entries per ledger message (1..8, as
	// ingest packs a session's events of one batch).
	archiveMaxBlock = 8
	archiveWriters  = 16 // concurrent appenders filling LEDGER
)

// The commands of the filled sessions' Bash calls.
var archiveCommands = []string{
	"go test ./...", "go build ./...", "git status --short", "ls -la internal", "go vet ./...",
	"cat go.mod", "git diff --stat", "grep -rn TODO internal", "make lint", "go test -run TestStore ./internal/store",
}

// archiveRow is one timed run of a row.
type archiveRow struct {
	entries  int
	messages int
	d        time.Duration
	cpu      time.Duration // this whole process: server, reader and writer
	written  int64         // bytes in the bucket afterwards
	sync     time.Duration // forensics exports: the file's fsync after the timed window
	// rotator pass only
	content, stored int64 // uncompressed and compressed segment bytes
	segments        int
}

func (r archiveRow) rate() float64 { return float64(r.entries) / r.d.Seconds() }

func archiveBench(o options, tmp string) error {
	n := o.archiveEntries
	if o.quick {
		n = min(n, 20000)
	}
	if n < 1 {
		return fmt.Errorf("-archive-entries %d: must be at least 1", n)
	}
	ctx := context.Background()
	dir := filepath.Join(tmp, "archive")
	l, err := startLocalJS(ctx, filepath.Join(dir, "nats"))
	if err != nil {
		return err
	}
	defer l.close()
	nc, js := l.nc, l.js
	reg, err := keyring.OpenRegistry(ctx, js)
	if err != nil {
		return err
	}
	keyDir := filepath.Join(dir, "keys")
	if _, _, err := keyring.EnsureFirst(ctx, reg, keyring.Dir{Path: keyDir}, keyring.ECDSA, time.Now()); err != nil {
		return err
	}
	start := time.Now()
	if err := fillLedger(ctx, js, n); err != nil {
		return fmt.Errorf("fill: %w", err)
	}
	fill := time.Since(start)

	cfg := rotator.DefaultConfig()
	cfg.KeyDir = keyDir
	cfg.HotWindow, cfg.ArchiveRetention = 100*365*24*time.Hour, 100*365*24*time.Hour
	cfg.KeyRotationPeriod, cfg.KeyOverlap = 0, 0
	var plain, pass, verify []archiveRow
	for i := range archiveRuns {
		// The rotator first: its first pass chains a record of the signing
		// key (once), so every copy after it reads the same messages.
		cfg.ArchiveURL = bucketURL(filepath.Join(dir, fmt.Sprintf("rotator-%d", i)))
		p, err := rotatorPass(ctx, nc, cfg)
		if err != nil {
			return fmt.Errorf("rotator pass: %w", err)
		}
		pc, err := plainCopy(ctx, js, bucketURL(filepath.Join(dir, fmt.Sprintf("plain-%d", i))), cfg.SegmentMessages, cfg.SegmentBytes)
		if err != nil {
			return fmt.Errorf("plain copy: %w", err)
		}
		v, err := verifyArchive(ctx, js, reg, cfg)
		if err != nil {
			return fmt.Errorf("verify: %w", err)
		}
		if pc.entries != p.entries || v.entries != p.entries || pc.messages != p.messages {
			return fmt.Errorf(
				"entries: plain copy %d, rotator %d, verify %d; messages: plain copy %d, rotator %d: the rows did not cover the same ledger",
				pc.entries, p.entries, v.entries, pc.messages, p.messages)
		}
		plain, pass, verify = append(plain, pc), append(pass, p), append(verify, v)
		for _, d := range []string{"plain-", "rotator-"} {
			_ = os.RemoveAll(filepath.Join(dir, fmt.Sprintf("%s%d", d, i)))
		}
	}
	pc, p, v := medianRow(plain), medianRow(pass), medianRow(verify)
	fmt.Printf(
		"Archive: %d LEDGER entries in %d messages (hook events of %d sessions, 1..%d per message, and the rotator's key record) into a file:// bucket on the same disk; median of %d interleaved runs\n",
		p.entries, p.messages, archiveSessions, archiveMaxBlock, archiveRuns)
	fmt.Printf("  %-46s %8s %7s %10s %10s %11s %9s %9s\n", "", "entries", "s", "entries/s", "written", "CPU/entry", "vs plain", "size")
	row := func(name string, r archiveRow, written bool) {
		w, ratio := "-", "-"
		if written {
			w, ratio = mb(r.written), fmt.Sprintf("%.3f×", float64(r.written)/float64(pc.written))
		}
		fmt.Printf("  %-46s %8d %7.2f %10.0f %10s %8.1f µs %8.2f× %9s\n", name, r.entries, r.d.Seconds(), r.rate(), w,
			us(r.cpu)/float64(r.entries), r.rate()/pc.rate(), ratio)
	}
	row("plain copy (JSON lines, read back)", pc, true)
	row("rotator archive pass (zstd, verified, signed)", p, true)
	row("archive.VerifyChains (archive + hot)", v, false)
	fmt.Printf("  compression: %s of JSON lines stored as %s, %.2f× (segments: %d; written also counts manifests and checkpoints)\n",
		mb(p.content), mb(p.stored), float64(p.content)/float64(p.stored), p.segments)
	fmt.Printf("  plain objects are cut as segments are: at %d messages or %d MiB; both rows read every object back\n",
		cfg.SegmentMessages, cfg.SegmentBytes>>20)
	fmt.Printf(
		"  CPU/entry is this whole process (server, reader, writer) on %d CPUs; filling LEDGER, not timed, ran at %.0f entries/s (sync_interval always)\n",
		numCPU(), float64(n)/fill.Seconds())
	return nil
}

func bucketURL(dir string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
}

// fillLedger chains n hook events over archiveSessions sessions, 1 to
// archiveMaxBlock entries per message, from archiveWriters goroutines.
// Their ingested_at comes from a fake clock two days back, so every entry
// is in the past for the rotator.
func fillLedger(ctx context.Context, js jetstream.JetStream, n int) error {
	app := ledger.NewAppender(js, ledger.AppenderConfig{})
	clk := clock.NewFake(time.Now().Add(-48 * time.Hour))
	gen := id.NewGenerator(clk, id.FastEntropy{})
	src := schemas.Entry{Host: "bench", AgentType: "claude-code", AgentID: "bench@host", Bundle: "ccbench"}
	var wg sync.WaitGroup
	errs := make(chan error, archiveWriters)
	for w := range archiveWriters {
		quota := n / archiveWriters
		if w == 0 {
			quota += n % archiveWriters
		}
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1)) // fixed seeds: the same ledger every run
			var mine []string
			for s := w; s < archiveSessions; s += archiveWriters {
				mine = append(mine, fmt.Sprintf("%08x-19fa-41d2-8238-%012x", s, uint64(s)*0x9e3779b9))
			}
			seq := make([]uint64, len(mine))
			for k := 0; quota > 0; k++ {
				si := k % len(mine)
				sess := mine[si]
				block := make([]*schemas.Entry, 0, archiveMaxBlock)
				for range min(quota, 1+r.IntN(archiveMaxBlock)) {
					clk.Advance(time.Millisecond)
					now := clk.Now().UTC()
					eid, err := gen.New()
					if err != nil {
						errs <- err
						return
					}
					seq[si]++
					p := archivePayload(r, sess)
					e := src
					e.V, e.Kind, e.Chain, e.SessionID, e.EventID = 1, schemas.EntryEvent, sess, sess, eid
					e.HookEvent, e.ToolName, e.ToolUseID, e.ClientSeq = "PostToolUse", "Bash", toolUseID(r), seq[si]
					e.ReceivedAt, e.IngestedAt = now.Add(-3*time.Millisecond).Format(time.RFC3339Nano), now.Format(time.RFC3339Nano)
					e.Payload, e.PayloadDigest, e.PayloadSize = &p, digest.SHA256([]byte(p)), len(p)
					block = append(block, &e)
				}
				quota -= len(block)
				if _, err := app.Append(ctx, sess, block); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// archivePayload is hookPayload for session with a varied command, tool
// use id, timings and output, so that compression has real work.
func archivePayload(r *rand.Rand, session string) string {
	cmd := archiveCommands[r.IntN(len(archiveCommands))]
	return strings.NewReplacer(
		"00893aaf-19fa-41d2-8238-13269b9b3ca0", session,
		`"command":"go test ./..."`, fmt.Sprintf(`"command":%q`, cmd),
		"toolu_01ABC123", toolUseID(r),
		"0.412s", fmt.Sprintf("%.3fs", r.Float64()*3),
		"0.020s", fmt.Sprintf("%.3fs", r.Float64()/4),
		"internal/store", []string{"internal/store", "internal/api", "internal/auth", "pkg/queue"}[r.IntN(4)],
		`"duration_ms":1840`, fmt.Sprintf(`"duration_ms":%d`, 100+r.IntN(9000)),
	).Replace(hookPayload)
}

func toolUseID(r *rand.Rand) string {
	const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZabcdefghijkmnopqrstuvwxyz"
	b := []byte("toolu_01")
	for range 22 {
		b = append(b, alphabet[r.IntN(len(alphabet))])
	}
	return string(b)
}

// rotatorPass times one pass of a fresh rotator into cfg.ArchiveURL and
// reads what it wrote from the segments' manifests.
func rotatorPass(ctx context.Context, nc *nats.Conn, cfg rotator.Config) (archiveRow, error) {
	var r archiveRow
	svc, err := rotator.New(cfg,
		service.Settings{Conn: nc, Clock: clock.Real{}, Logger: slog.New(slog.DiscardHandler), Metrics: prometheus.NewRegistry()})
	if err != nil {
		return r, err
	}
	if err := svc.Open(ctx); err != nil {
		return r, err
	}
	defer func() { _ = svc.Close() }()
	cpu0, start := procCPU(os.Getpid()), time.Now()
	rep, err := svc.Pass(ctx)
	r.d, r.cpu = time.Since(start), procCPU(os.Getpid())-cpu0
	if err != nil {
		return r, err
	}
	if rep.TrimmedMsgs > 0 || len(rep.Deleted) > 0 || rep.Rotated != "" {
		return r, fmt.Errorf("the pass trimmed %d messages, deleted %d segments, rotated %q: it should only archive", rep.TrimmedMsgs,
			len(rep.Deleted), rep.Rotated)
	}
	st, err := archive.Open(ctx, cfg.ArchiveURL)
	if err != nil {
		return r, err
	}
	defer func() { _ = st.Close() }()
	l, err := st.List(ctx, stream.Ledger)
	if err != nil {
		return r, err
	}
	for _, seg := range l.Segments {
		raw, err := st.Get(ctx, archive.ManifestKey(stream.Ledger, seg.Name))
		if err != nil {
			return r, err
		}
		var m archive.Manifest
		if err := json.Unmarshal(raw, &m); err != nil {
			return r, fmt.Errorf("manifest %s: %w", seg.Name, err)
		}
		r.entries += m.Entries
		r.content += m.Bytes
		r.stored += m.Stored
		r.segments++
		r.messages += m.Messages
	}
	if r.messages != rep.Messages {
		return r, fmt.Errorf("the manifests hold %d messages, the pass reported %d", r.messages, rep.Messages)
	}
	r.written, err = dirBytes(cfg.ArchiveURL)
	return r, err
}

// plainCopy reads LEDGER with one ordered consumer and writes its messages
// as JSON lines (archive.Message, uncompressed) into objects bounded as the
// rotator bounds segments, reading each object back and comparing it.
func plainCopy(ctx context.Context, js jetstream.JetStream, bucket string, segMsgs, segBytes int) (archiveRow, error) {
	var r archiveRow
	st, err := archive.Open(ctx, bucket)
	if err != nil {
		return r, err
	}
	defer func() { _ = st.Close() }()
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
	var buf bytes.Buffer
	var first, last uint64
	msgs, size := 0, 0
	put := func() error {
		key := stream.Ledger + "/" + archive.SegmentName(first, last) + ".jsonl"
		if err := st.Put(ctx, key, buf.Bytes(), "application/jsonl"); err != nil {
			return err
		}
		back, err := st.Get(ctx, key)
		if err != nil {
			return err
		}
		if !bytes.Equal(back, buf.Bytes()) {
			return fmt.Errorf("%s read back differs", key)
		}
		buf.Reset()
		msgs, size = 0, 0
		return nil
	}
	for left := info.State.Msgs; left > 0; {
		batch, err := cons.Fetch(int(min(left, 500)), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return r, err
		}
		got := 0
		for m := range batch.Messages() {
			got++
			left--
			meta, err := m.Metadata()
			if err != nil {
				return r, err
			}
			if msgs == 0 {
				first = meta.Sequence.Stream
			}
			last = meta.Sequence.Stream
			line, err := json.Marshal(
				archive.Message{Seq: last, Subject: m.Subject(),
					Time: meta.Timestamp.UTC().Format(archive.TimeFormat), Data: string(m.Data())})
			if err != nil {
				return r, err
			}
			buf.Write(line)
			buf.WriteByte('\n')
			r.entries += len(ledger.SplitBlock(m.Data()))
			r.messages++
			msgs++
			size += len(m.Data()) + len(m.Subject()) + 64
			if msgs == segMsgs || size >= segBytes {
				if err := put(); err != nil {
					return r, err
				}
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
			return r, err
		}
		if got == 0 {
			return r, fmt.Errorf("no messages with %d left", left)
		}
	}
	if msgs > 0 {
		if err := put(); err != nil {
			return r, err
		}
	}
	r.d, r.cpu = time.Since(start), procCPU(os.Getpid())-cpu0
	r.written, err = dirBytes(bucket)
	return r, err
}

// verifyArchive times archive.VerifyChains over the archive the last pass
// wrote (cfg.ArchiveURL) and the hot stream.
func verifyArchive(ctx context.Context, js jetstream.JetStream, reg *keyring.Registry, cfg rotator.Config) (archiveRow, error) {
	var r archiveRow
	st, err := archive.Open(ctx, cfg.ArchiveURL)
	if err != nil {
		return r, err
	}
	defer func() { _ = st.Close() }()
	set, err := reg.Set(ctx)
	if err != nil {
		return r, err
	}
	cpu0, start := procCPU(os.Getpid()), time.Now()
	cr, err := archive.VerifyChains(ctx, st, js, stream.Ledger,
		archive.Options{Keys: set, Now: time.Now(), Retention: cfg.ArchiveRetention})
	r.d, r.cpu = time.Since(start), procCPU(os.Getpid())-cpu0
	if err != nil {
		return r, err
	}
	if !cr.OK() {
		return r, fmt.Errorf("the archive does not verify: %v %v", cr.Archive.Problems, cr.Problems)
	}
	r.entries = cr.Archive.Entries
	return r, nil
}

// dirBytes sums the sizes of the files under a file:// bucket.
func dirBytes(bucket string) (int64, error) {
	u, err := url.Parse(bucket)
	if err != nil {
		return 0, err
	}
	var total int64
	err = filepath.WalkDir(filepath.FromSlash(u.Path), func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		total += fi.Size()
		return nil
	})
	return total, err
}

// medianRow is the run with the median duration.
func medianRow(rs []archiveRow) archiveRow {
	s := slices.Clone(rs)
	slices.SortFunc(s, func(a, b archiveRow) int { return cmp.Compare(a.d, b.d) })
	return s[len(s)/2]
}

func mb(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/1e6) }

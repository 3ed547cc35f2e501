package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/claimcheck/claimcheck/cmd/claimcheck/internal/otlp"
	"github.com/claimcheck/claimcheck/cmd/claimcheck/internal/timeline"
	"github.com/claimcheck/claimcheck/pkg/archive"
	"github.com/claimcheck/claimcheck/pkg/attest"
	"github.com/claimcheck/claimcheck/pkg/export"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/replay"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
)

// windowFlags are the flags replay and export share: the window, the
// filters and where the archive is.
type windowFlags struct {
	since, until, host, session, kind string
	archiveURL                        string
	noArchive                         bool
}

func (w *windowFlags) register(cmd *cobra.Command, sinceHelp string) {
	fl := cmd.Flags()
	fl.StringVar(&w.since, "since", "", sinceHelp)
	fl.StringVar(&w.until, "until", "", "end of the window (exclusive): an RFC 3339 time or a duration back from now")
	fl.StringVar(&w.host, "host", "", "only entries of this agent host")
	fl.StringVar(&w.session, "session", "", "only this session (or _rejected, _rotator)")
	fl.StringVar(&w.kind, "kind", "", "only entries of this kind (event, claim, verdict, …) or hook event (PreToolUse, GateDecision, …)")
	fl.StringVar(&w.archiveURL, "archive-url", "",
		"the archive for entries older than the hot stream holds (config rotator.archive_url; default file://<data dir>/archive)")
	fl.BoolVar(&w.noArchive, "no-archive", false, "read the hot stream only")
}

// config turns the flags into a replay (its JS and Archive still unset).
func (w *windowFlags) config(now time.Time) (replay.Config, error) {
	var cfg replay.Config
	var errs []error
	if w.since != "" {
		t, err := replay.ParseTime(w.since, now)
		if err != nil {
			errs = append(errs, fmt.Errorf("--since %w", err))
		}
		cfg.Window.Since = t
	}
	if w.until != "" {
		t, err := replay.ParseTime(w.until, now)
		if err != nil {
			errs = append(errs, fmt.Errorf("--until %w", err))
		}
		cfg.Window.Until = t
	}
	cfg.Filter = replay.Filter{Host: w.host, Session: w.session, Kind: w.kind}
	if err := cfg.Filter.Check(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		errs = append(errs, cfg.Window.Check())
	}
	if w.noArchive && w.archiveURL != "" {
		errs = append(errs, errors.New("--archive-url and --no-archive contradict each other"))
	}
	if err := errors.Join(errs...); err != nil {
		return cfg, &exitError{ExitError, err}
	}
	return cfg, nil
}

// openReplay connects and completes cfg: the stream, the archive when
// there is one, its keys and the rotator's anchors. close releases them.
func (a *app) openReplay(cmd *cobra.Command, w *windowFlags, streamName string, cfg *replay.Config) (func(), error) {
	ctx := cmd.Context()
	isLedger := streamName == "" || streamName == stream.Ledger
	if !isLedger && w.archiveURL != "" {
		return nil, &exitError{ExitError, fmt.Errorf("--archive-url: the archive holds %s, not %s", stream.Ledger, streamName)}
	}
	nc, js, err := a.connect(ctx)
	if err != nil {
		return nil, err
	}
	closers := []func(){nc.Close}
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	cfg.JS, cfg.Stream = js, streamName
	if isLedger {
		cfg.Anchors = ledger.NewAnchors(js)
		if !w.noArchive {
			st, err := a.replayArchive(ctx, w.archiveURL, js, cfg)
			if err != nil {
				closeAll()
				return nil, err
			}
			if st != nil {
				closers = append(closers, func() { _ = st.Close() })
			}
		}
	}
	return closeAll, nil
}

// replayArchive opens the archive a replay reads, if there is one: the
// default directory may not exist yet (nothing archived), a configured or
// named archive must open.
func (a *app) replayArchive(ctx context.Context, flag string, js jetstream.JetStream, cfg *replay.Config) (*archive.Store, error) {
	u := a.archiveURL(flag)
	if flag == "" && a.v.GetString("rotator.archive_url") == "" {
		if p, err := url.Parse(u); err == nil && p.Scheme == "file" {
			if _, err := os.Stat(filepath.FromSlash(p.Path)); errors.Is(err, fs.ErrNotExist) {
				fmt.Fprintf(a.env.Stderr, "note: no archive at %s: reading the hot stream only\n", u)
				return nil, nil
			}
		}
	}
	st, err := openArchive(ctx, u)
	if err != nil {
		return nil, err
	}
	keys, err := registryKeys(ctx, js)
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	cfg.Archive, cfg.Keys = st, keys
	return st, nil
}

// interruptible is ctx ended by SIGINT or SIGTERM, so that export and
// replay --follow can say where they stopped.
func interruptible(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

// ledgerReplayCommand is `ledger replay`.
func (a *app) ledgerReplayCommand(lf *ledgerFlags) *cobra.Command {
	w := &windowFlags{}
	var follow, asJSON bool
	cmd := &cobra.Command{
		Use:   "replay --since T [--until T] [--host H] [--session S] [--kind K] [--follow] [--json]",
		Short: "Replay the fleet's ledger over a time window, in ledger order, each entry checked against its chain",
		Long: `replay prints every entry ingested in the window (--since inclusive, --until
exclusive; each an RFC 3339 time or a duration back from now: 90m, 1h, 7d) in ledger
order, from the archive for what the hot stream no longer holds and from the hot
stream, read from the window's start (no scan of older entries). Each entry is checked
against its chain as it streams: CHECK is ok, unanchored (the chain's first entry in
the window could not be linked to its predecessor), fault (the chain breaks here) or
unverified (it broke earlier). --follow goes on with new entries until interrupted.
Exit 0 when every entry checked out, 1 when a chain is broken, 2 on other errors.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if w.since == "" {
				return &exitError{ExitError, errors.New("--since is required: an RFC 3339 time or a duration back from now (1h, 7d)")}
			}
			cfg, err := w.config(time.Now())
			if err != nil {
				return err
			}
			closeAll, err := a.openReplay(cmd, w, lf.streamName, &cfg)
			if err != nil {
				return err
			}
			defer closeAll()
			cfg.Follow = follow
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			// Buffered: one write a block of lines, not one a line;
			// following, each entry is written as soon as it is read.
			out := bufio.NewWriterSize(a.env.Stdout, 64<<10)
			defer func() { _ = out.Flush() }()
			if !asJSON {
				fmt.Fprintf(out, "%-12s %-24s %-16s %-36s %6s %-9s %-18s %-10s %-10s %s\n", "POS", "INGESTED AT", "HOST", "SESSION", "N",
					"KIND", "EVENT", "TOOL", "CHECK", "DETAIL")
			}
			sum, err := replay.Run(ctx, cfg, func(r *replay.Record) error {
				if err := printRecord(out, r, asJSON); err != nil || !follow {
					return err
				}
				return out.Flush()
			})
			if ferr := out.Flush(); ferr != nil && err == nil {
				err = ferr
			}
			if err != nil && (!follow || !errors.Is(err, context.Canceled)) {
				return &exitError{ExitError, err}
			}
			err = a.reportReplay("replay", sum, out)
			if ferr := out.Flush(); ferr != nil && err == nil {
				return &exitError{ExitError, ferr}
			}
			return err
		},
	}
	w.register(cmd, "start of the window (required): an RFC 3339 time or a duration back from now (1h, 7d)")
	cmd.Flags().BoolVar(&follow, "follow", false, "go on with new entries as they are chained, until interrupted")
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON object per entry: pos, source, check, reason and the entry as stored")
	return cmd
}

// replayLine is one entry of `ledger replay --json`.
type replayLine struct {
	Pos    string         `json:"pos"`
	Source replay.Source  `json:"source"`
	Check  replay.Check   `json:"check"`
	Reason string         `json:"reason,omitempty"`
	Entry  jsontext.Value `json:"entry"`
}

func printRecord(w io.Writer, r *replay.Record, asJSON bool) error {
	if asJSON {
		line := replayLine{Pos: r.Pos.String(), Source: r.Source, Check: r.Check, Reason: r.Reason, Entry: r.Raw}
		if !jsontext.Value(r.Raw).IsValid() {
			line.Entry, _ = json.Marshal(string(r.Raw)) // the unreadable bytes, as a string
		}
		b, err := json.Marshal(line)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, string(b))
		return err
	}
	d := export.Decode(r)
	e := &d.Entry
	detail := d.Summary
	if r.Reason != "" && r.Check != replay.CheckUnanchored {
		detail = r.Reason + ": " + detail
	}
	at := e.IngestedAt
	if !r.Time.IsZero() {
		at = r.Time.UTC().Format("2006-01-02T15:04:05.000Z")
	}
	_, err := fmt.Fprintf(w, "%-12s %-24s %-16s %-36s %6d %-9s %-18s %-10s %-10s %s\n", r.Pos, at, e.Host, r.Chain, e.N,
		e.Kind, e.HookEvent, e.ToolName, r.Check, oneLine(detail, 120))
	return err
}

// reportReplay says on stderr what a replay or export read, lists chain
// faults on faultsTo (stdout for replay; stderr for export, whose stdout
// is data) and turns them into exit 1.
func (a *app) reportReplay(what string, sum *replay.Summary, faultsTo io.Writer) error {
	w := a.env.Stderr
	fmt.Fprintf(w, "%s: %d entries (%d from the archive in %d segments, %d hot); %d read and checked",
		what, sum.Emitted, sum.FromArchive, sum.Segments, sum.FromHot, sum.Read)
	if len(sum.Starts) > 0 {
		var parts []string
		for _, k := range []string{"genesis", "hot", "anchor", "archive", "unanchored"} {
			if n := sum.Starts[k]; n > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", k, n))
			}
		}
		fmt.Fprintf(w, "; chains started at: %s", strings.Join(parts, ", "))
	}
	fmt.Fprintln(w)
	if sum.LastPos != "" {
		fmt.Fprintf(w, "%s: last position %s (resume after it with --after %s)\n", what, sum.LastPos, sum.LastPos)
	}
	for _, g := range sum.Gaps {
		fmt.Fprintf(w, "gap: %s\n", g)
	}
	if n := len(sum.Unanchored); n > 0 {
		fmt.Fprintf(w, "note: %d chains start inside the window with nothing left to link them to their predecessor (unanchored): %s\n",
			n, strings.Join(first(sum.Unanchored, 5), ", "))
	}
	if sum.Restored > 0 {
		fmt.Fprintf(w, "note: %d restored copies skipped (their archived originals are in the replay)\n", sum.Restored)
	}
	if len(sum.Faults) == 0 {
		return nil
	}
	for _, f := range sum.Faults {
		fmt.Fprintf(faultsTo, "FAIL session %s position %d (at %s): %s\n", f.Chain, f.N, f.Pos, f.Reason)
	}
	return &exitError{ExitFault, fmt.Errorf("%d faults in the replayed chains", len(sum.Faults))}
}

func first(s []string, n int) []string {
	if len(s) > n {
		return append(append([]string(nil), s[:n]...), fmt.Sprintf("… (%d more)", len(s)-n))
	}
	return s
}

// exportCommand is `claimcheck export`.
func (a *app) exportCommand() *cobra.Command {
	w := &windowFlags{}
	var format, outFile, after, streamName string
	var follow bool
	var oc otlp.Config
	cmd := &cobra.Command{
		Use: "export --format ndjson|csv|ecs|otlp [--since T] [--until T] [--host H] [--session S] [--kind K] [--out FILE] " +
			"[--after POS] [--follow]",
		Short: "Export the ledger (or a window of it) as NDJSON, CSV, Elastic Common Schema documents or OTLP traces",
		Long: `export writes the entries ledger replay reads (the same window and filters; without
--since, the whole ledger), each checked against its chain, to stdout or --out:

  ndjson  every entry exactly as stored, one a line (its hash verifies)
  csv     the columns listed in docs/forensics.md, one row an entry
  ecs     one Elastic Common Schema 9.4.0 document an entry (Elastic, and Splunk or
          Sentinel through their ECS/JSON inputs)
  otlp    to an OpenTelemetry collector (--otlp-endpoint): each session a trace, a span
          per tool call from PreToolUse to PostToolUse, gate decisions and verdicts as
          span events; with --otlp-logs every entry also as a log record

At the end (or when interrupted) it prints the last position written; --after POS
resumes there, appending to --out. --follow goes on with new entries as they are
chained (each written at once) until interrupted. A progress bar shows on a terminal.
Exit 0 when every entry checked out, 1 when a chain is broken, 2 on other errors.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := exportFormat(format, outFile, &oc)
			if err != nil {
				return err
			}
			cfg, err := w.config(time.Now())
			if err != nil {
				return err
			}
			if after != "" {
				if cfg.After, err = replay.ParsePos(after); err != nil {
					return &exitError{ExitError, fmt.Errorf("--after %w", err)}
				}
			}
			out, closeOut, err := a.exportOutput(outFile, after != "")
			if err != nil {
				return err
			}
			closeAll, err := a.openReplay(cmd, w, streamName, &cfg)
			if err != nil {
				_ = closeOut()
				return err
			}
			defer closeAll()
			cfg.Follow = follow
			err = a.runExport(cmd, cfg, exportTarget{format: f, otlp: oc}, out, after != "")
			if cerr := closeOut(); err == nil {
				err = cerr
			}
			return err
		},
	}
	w.register(cmd, "start of the window: an RFC 3339 time or a duration back from now (default: the whole ledger)")
	fl := cmd.Flags()
	fl.StringVar(&format, "format", "ndjson", "ndjson, csv or ecs")
	fl.StringVar(&outFile, "out", "", "write to this file (created; with --after, appended to) instead of stdout")
	fl.StringVar(&after, "after", "", "resume after this position, as a previous export printed it (e.g. 1234.2)")
	fl.StringVar(&streamName, "stream", "", "read this stream instead of LEDGER (a copy, for forensics)")
	fl.BoolVar(&follow, "follow", false, "go on with new entries as they are chained, until interrupted")
	fl.StringVar(&oc.Endpoint, "otlp-endpoint", "", "with --format otlp: the collector, http://host:4318 (https for TLS)")
	fl.StringVar(&oc.Protocol, "otlp-protocol", otlp.HTTP, "with --format otlp: http/protobuf or grpc")
	fl.BoolVar(&oc.Logs, "otlp-logs", false, "with --format otlp: every entry also as an OTLP log record")
	return cmd
}

// formatOTLP is --format otlp (not a file format: it goes to a collector).
const formatOTLP = "otlp"

// exportFormat checks --format and the flags that go with it.
func exportFormat(format, outFile string, oc *otlp.Config) (export.Format, error) {
	if strings.EqualFold(format, formatOTLP) {
		if outFile != "" {
			return "", &exitError{ExitError, errors.New("--out: --format otlp sends to --otlp-endpoint, not to a file")}
		}
		if oc.Endpoint == "" {
			return "", &exitError{ExitError, errors.New("--format otlp needs --otlp-endpoint (http://collector:4318)")}
		}
		if err := oc.Check(); err != nil {
			return "", &exitError{ExitError, err}
		}
		return formatOTLP, nil
	}
	if oc.Endpoint != "" || oc.Logs {
		return "", &exitError{ExitError, fmt.Errorf("--otlp-endpoint and --otlp-logs go with --format otlp, not %q", format)}
	}
	f, err := export.ParseFormat(format)
	if err != nil {
		return "", &exitError{ExitError, fmt.Errorf("--format %q: want ndjson, csv, ecs (Elastic Common Schema) or otlp", format)}
	}
	return f, nil
}

// exportTarget is what an export writes: a format, or OTLP.
type exportTarget struct {
	format export.Format
	otlp   otlp.Config
}

func (t exportTarget) writer(ctx context.Context, out io.Writer, appending bool) (export.Writer, error) {
	if t.format == formatOTLP {
		return otlp.New(ctx, t.otlp)
	}
	return export.New(t.format, out, appending)
}

// exportOutput is stdout or --out: a new file, or with --after an
// existing one appended to. Its close func reports the file's close error
// (a write the kernel refused late): the export must not exit 0 on a file
// that did not take everything. Like cp and tar, it does not fsync.
func (a *app) exportOutput(path string, resuming bool) (io.Writer, func() error, error) {
	if path == "" {
		return a.env.Stdout, func() error { return nil }, nil
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if resuming {
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	f, err := os.OpenFile(path, flags, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil, nil, &exitError{ExitError, fmt.Errorf("--out %s exists: remove it, or resume an export into it with --after", path)}
	}
	if err != nil {
		return nil, nil, &exitError{ExitError, fmt.Errorf("--out %w", err)}
	}
	return f, func() error {
		if err := f.Close(); err != nil {
			return &exitError{ExitError, fmt.Errorf("--out %w", err)}
		}
		return nil
	}, nil
}

func (a *app) runExport(cmd *cobra.Command, cfg replay.Config, target exportTarget, out io.Writer, appending bool) error {
	ctx, stop := interruptible(cmd.Context())
	defer stop()
	wr, err := target.writer(cmd.Context(), out, appending)
	if err != nil {
		return &exitError{ExitError, err}
	}
	bar := a.progressBar(out)
	entries := 0
	if bar != nil {
		cfg.Progress = func(seq, last uint64) {
			if int64(last) > bar.GetMax64() {
				bar.ChangeMax64(int64(last))
			}
			bar.Describe(fmt.Sprintf("export: %d entries", entries))
			_ = bar.Set64(int64(seq))
		}
	}
	sum, err := replay.Run(ctx, cfg, func(r *replay.Record) error {
		entries++
		if err := wr.Write(r); err != nil {
			return err
		}
		if cfg.Follow {
			return wr.Flush() // following, each entry is out as soon as it is read
		}
		return nil
	})
	cerr := wr.Close()
	if bar != nil {
		_ = bar.Finish()
		fmt.Fprintln(a.env.Stderr)
	}
	if sum != nil {
		if rerr := a.reportReplay("export", sum, a.env.Stderr); rerr != nil && err == nil && cerr == nil {
			return rerr
		}
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return &exitError{ExitError, errors.New("export interrupted: resume with the --after position above")}
		}
		return &exitError{ExitError, err}
	}
	if cerr != nil {
		return &exitError{ExitError, fmt.Errorf("write: %w", cerr)}
	}
	return nil
}

// progressBar is a bar on stderr when stderr is a terminal and the export
// does not go to it as well; nil otherwise (silent in scripts and CI).
func (a *app) progressBar(out io.Writer) *progressbar.ProgressBar {
	errf, ok := a.env.Stderr.(*os.File)
	if !ok || !term.IsTerminal(int(errf.Fd())) {
		return nil
	}
	if o, ok := out.(*os.File); ok && term.IsTerminal(int(o.Fd())) {
		return nil
	}
	return progressbar.NewOptions64(1,
		progressbar.OptionSetWriter(errf),
		progressbar.OptionSetDescription("export"),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("seq"),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionSetWidth(30),
	)
}

// ledgerTimelineCommand is `ledger timeline`.
func (a *app) ledgerTimelineCommand(lf *ledgerFlags) *cobra.Command {
	w := &windowFlags{}
	var htmlFile string
	cmd := &cobra.Command{
		Use:   "timeline --session S --html FILE",
		Short: "Write one session's ledger as a self-contained HTML page people can read",
		Long: `timeline replays one session (from the archive and the hot stream, each entry checked
against its chain) and writes it as a single HTML page that loads nothing: prompts, tool
calls with their durations and outcomes, edits, test runs, gate decisions with their
reasons, claims and verdicts with the verification of their attestations, redactions,
overrides, alerts and crashes. Exit 0 when the chain checked out, 1 when it is broken
(the page is written and says so), 2 on other errors.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if w.session == "" {
				return &exitError{ExitError, errors.New("--session is required")}
			}
			if htmlFile == "" {
				return &exitError{ExitError, errors.New("--html is required: the file to write")}
			}
			cfg, err := w.config(time.Now())
			if err != nil {
				return err
			}
			closeAll, err := a.openReplay(cmd, w, lf.streamName, &cfg)
			if err != nil {
				return err
			}
			defer closeAll()
			tl := timeline.New(w.session)
			sum, err := replay.Run(cmd.Context(), cfg, func(r *replay.Record) error {
				tl.Add(r)
				return nil
			})
			if err != nil {
				return &exitError{ExitError, err}
			}
			if sum.Emitted == 0 {
				return &exitError{ExitError,
					fmt.Errorf("session %s has no entries in the ledger (see `claimcheck ledger sessions`)", w.session)}
			}
			atts := a.timelineAttestations(cmd.Context(), cfg.JS, w.session)
			var buf bytes.Buffer
			if err := tl.Render(&buf, atts, sum, time.Now()); err != nil {
				return &exitError{ExitError, err}
			}
			if err := os.WriteFile(htmlFile, buf.Bytes(), 0o600); err != nil {
				return &exitError{ExitError, fmt.Errorf("--html %w", err)}
			}
			fmt.Fprintf(a.env.Stdout, "wrote %s: %d rows from %d entries of session %s\n", htmlFile, len(tl.Rows), sum.Emitted, w.session)
			return a.reportReplay("timeline", sum, a.env.Stdout)
		},
	}
	w.register(cmd, "start of the window (default: the whole session)")
	cmd.Flags().StringVar(&htmlFile, "html", "", "the HTML file to write")
	return cmd
}

// timelineAttestations verifies every attestation of a session in ATTEST
// against the key registry, by attestation id.
func (a *app) timelineAttestations(ctx context.Context, js jetstream.JetStream, session string) map[string]timeline.Attestation {
	out := map[string]timeline.Attestation{}
	set, err := registryKeys(ctx, js)
	if err != nil {
		return out // every verdict's attestation then shows "not checked"
	}
	err = readAttestations(ctx, js, session, func(env []byte, subj string, stored time.Time) error {
		id := subj[strings.LastIndexByte(subj, '.')+1:]
		c, err := attest.Verify(set, env, stored)
		if err == nil && subject.Attestation(c.Statement.Predicate.Verdict.SessionID, c.Statement.Predicate.AttestationID) != subj {
			err = fmt.Errorf("stored under %s but its statement names another", subj)
		}
		if err != nil {
			out[id] = timeline.Attestation{Status: "does not verify: " + err.Error()}
			return nil
		}
		out[id] = timeline.Attestation{OK: true, Status: "verified, signed by " + strings.Join(c.KeyIDs, ", ")}
		return nil
	})
	if err != nil {
		for id := range out {
			delete(out, id)
		}
	}
	return out
}

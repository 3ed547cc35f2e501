package cli

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/claimcheck/claimcheck/pkg/archive"
	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/entryschema"
	"github.com/claimcheck/claimcheck/pkg/evidence"
	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/outcome"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/transparency"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/schemas/validation"
)

// ledgerFlags holds the ledger group's persistent flags, which its
// subcommands read when they run.
type ledgerFlags struct {
	streamName string
}

// ledgerCommand is `claimcheck ledger`, the commands that read and verify
// the ledger.
func (a *app) ledgerCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "ledger", Short: "Read and verify the hash-chained ledger"}
	f := &ledgerFlags{}
	cmd.PersistentFlags().StringVar(&f.streamName, "stream", "", "read this stream instead of LEDGER (a copy, for forensics)")

	cmd.AddCommand(a.ledgerSessionsCommand(f), a.ledgerShowCommand(f), a.ledgerVerifyCommand(f), a.ledgerCheckpointCommand(),
		a.ledgerProveCommand(), a.ledgerCheckProofCommand(), a.ledgerReplayCommand(f), a.ledgerTimelineCommand(f))
	return cmd
}

// ledgerSessionsCommand is `ledger sessions`: the chains in the ledger with
// their length, last event and head, as a table or as JSON lines.
func (a *app) ledgerSessionsCommand(f *ledgerFlags) *cobra.Command {
	var sessionsJSON bool
	sessions := &cobra.Command{
		Use:   "sessions",
		Short: "List the chains in the ledger: sessions with how their last turn ended, and _rejected and _rotator",
		Long: `sessions lists every chain in the ledger with its length, last entry and head, and
for sessions the outcome of the last stop (see claimcheck session status): verified,
overridden, not verified (capped or blocked), gate unreachable, ungated or no stop yet.
It reads the whole hot stream once to find the outcomes.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			nc, js, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			defer nc.Close()
			r := ledger.NewReader(js, f.streamName)
			chains, err := r.Chains(cmd.Context())
			if err != nil {
				return &exitError{ExitError, err}
			}
			outcomes, err := chainOutcomes(cmd, r)
			if err != nil {
				return &exitError{ExitError, err}
			}
			w := a.env.Stdout
			tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
			if !sessionsJSON {
				fmt.Fprintln(tw, "SESSION\tENTRIES\tLAST ENTRY\tLAST EVENT\tOUTCOME\tHEAD")
			}
			for _, c := range chains {
				last, err := r.Last(cmd.Context(), c)
				if err != nil {
					return &exitError{ExitError, err}
				}
				var e schemas.Entry
				if err := json.Unmarshal(last.Raw, &e); err != nil {
					fmt.Fprintf(tw, "%s\t?\t(last entry unreadable: %v)\t\t\n", c, err)
					continue
				}
				o, isSession := outcomes[c]
				if sessionsJSON {
					row := map[string]any{"session": c, "entries": e.N, "last_ingested_at": e.IngestedAt,
						"last_event": e.HookEvent, "head": e.Hash}
					if isSession {
						row["outcome"], row["verified"] = o.Kind, o.Verified
						if len(o.Findings) > 0 {
							row["findings"] = o.Findings
						}
					}
					b, _ := json.Marshal(row)
					fmt.Fprintln(w, string(b))
					continue
				}
				kind := outcome.Kind("-")
				if isSession {
					kind = o.Kind
				}
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", c, e.N, e.IngestedAt, e.HookEvent, kind, short(e.Hash))
			}
			_ = tw.Flush()
			if len(chains) == 0 && !sessionsJSON {
				fmt.Fprintln(a.env.Stderr, "the ledger is empty: run `claimcheck hooks install`, then use Claude Code")
			}
			return nil
		},
	}
	sessions.Flags().BoolVar(&sessionsJSON, "json", false, "one JSON object per line")
	return sessions
}

// chainOutcomes reads the stream once and returns the outcome of every
// session's last turn (chains that are not sessions, _rejected and
// _rotator, have none).
func chainOutcomes(cmd *cobra.Command, r *ledger.Reader) (map[string]outcome.Outcome, error) {
	trackers := map[string]*outcome.Tracker{}
	err := r.WalkAll(cmd.Context(), func(s ledger.Stored) error {
		if id.CheckSession(s.Chain) != nil {
			return nil
		}
		var e schemas.Entry
		if json.Unmarshal(s.Raw, &e, json.RejectUnknownMembers(false)) != nil {
			return nil // ledger verify reports it
		}
		t := trackers[s.Chain]
		if t == nil {
			t = &outcome.Tracker{}
			trackers[s.Chain] = t
		}
		t.Observe(e)
		return nil
	})
	out := make(map[string]outcome.Outcome, len(trackers))
	for c, t := range trackers {
		out[c] = t.Outcome()
	}
	return out, err
}

// ledgerShowCommand is `ledger show`: one session's entries as a timeline, or
// as stored (JSON lines).
func (a *app) ledgerShowCommand(f *ledgerFlags) *cobra.Command {
	var showSession string
	var showJSON bool
	show := &cobra.Command{
		Use:   "show --session S",
		Short: "Show one session's ledger as a timeline (or its entries as JSON lines)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkChainArg(showSession); err != nil {
				return err
			}
			nc, js, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			defer nc.Close()
			w := a.env.Stdout
			tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
			if !showJSON {
				fmt.Fprintln(tw, "N\tINGESTED AT\tKIND\tEVENT\tTOOL\tDETAIL")
			}
			count := 0
			var loop evidence.Loop // marks tool results the agent's tool loop did not produce
			// The table is written at the end: a later result can show an
			// earlier one was not the agent's (evidence.Revoked).
			type row struct {
				n                                  uint64
				at, kind, event, tool, detail, why string
			}
			var rows []row
			err = ledger.NewReader(js, f.streamName).Walk(cmd.Context(), showSession, 0, func(s ledger.Stored) error {
				count++
				if showJSON {
					_, err := fmt.Fprintln(w, string(s.Raw))
					return err
				}
				var e schemas.Entry
				if err := json.Unmarshal(s.Raw, &e); err != nil {
					rows = append(rows, row{kind: "unreadable", detail: err.Error()})
					return nil
				}
				ev := evidence.Decode(e)
				for _, r := range loop.Observe(&ev) {
					for i := len(rows) - 1; i >= 0; i-- {
						if rows[i].n == r.N && rows[i].kind != "unreadable" {
							rows[i].why = r.Reason
							break
						}
					}
				}
				rows = append(rows, row{n: e.N, at: e.IngestedAt, kind: e.Kind, event: e.HookEvent, tool: e.ToolName,
					detail: detail(&e), why: ev.Untrusted})
				return nil
			})
			for _, r := range rows {
				n, d := "?", r.detail
				if r.kind != "unreadable" {
					n = fmt.Sprint(r.n)
				}
				if r.why != "" {
					d = "NOT EVIDENCE (" + r.why + "): " + d
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", n, r.at, r.kind, r.event, r.tool, d)
			}
			_ = tw.Flush()
			if err != nil {
				return &exitError{ExitError, err}
			}
			if count == 0 {
				return &exitError{ExitError,
					fmt.Errorf("session %s has no entries in the ledger (see `claimcheck ledger sessions`)", showSession)}
			}
			return nil
		},
	}
	show.Flags().StringVar(&showSession, "session", "", "session id (or _rejected, _rotator)")
	show.Flags().BoolVar(&showJSON, "json", false, "print each entry as stored, one JSON object per line")
	_ = show.MarkFlagRequired("session")
	return show
}

// ledgerVerifyCommand is `ledger verify`: every chain of the hot stream
// recomputed and checked, or (--archive) whole sessions across the archive
// and the hot stream.
func (a *app) ledgerVerifyCommand(f *ledgerFlags) *cobra.Command {
	var verifySession, archiveURL string
	var noSchema, withArchive bool
	var tree checkpointFlags
	verify := &cobra.Command{
		Use:   "verify [--session S] [--archive [--url U]]",
		Short: "Recompute every chain and report the first bad position of each broken one",
		Long: `verify reads every entry, recomputes its hash from the stored bytes, and checks
positions, links, chain membership, duplicate events and (unless --no-schema) the
entry schema. It exits 0 when every chain is intact and 1, naming the session, the
position and the reason, when one is not. Other failures exit 2.

Chains the rotator trimmed begin at their anchor. --archive verifies whole
sessions instead: the archive (--url; config rotator.archive_url, default
<data dir>/archive) with its signed checkpoints, then each chain on into the hot
stream, naming chains lost from it. It checks hashes, links and positions, not
the entry schema.

Then (on LEDGER, unless --no-tree) it checks the Merkle tree over the ledger: the
newest checkpoint verifies under the key registry (and has --min-witnesses
cosignatures of the --witness-key witnesses), every hot LEDGER message is the leaf
the checkpoint committed to, the stream is not shorter than the checkpoint, and the
checkpoint extends the one a witness cosigned last (--witness URL) or one kept from
before (--checkpoint FILE): a rollback, a cut, a rewrite or a fork exits 1, named.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if verifySession != "" {
				if err := checkChainArg(verifySession); err != nil {
					return err
				}
			}
			if withArchive && f.streamName != "" && f.streamName != stream.Ledger {
				return &exitError{ExitError,
					fmt.Errorf("--archive verifies %s (the archive holds no copy of %s): drop --stream", stream.Ledger, f.streamName)}
			}
			if archiveURL != "" && !withArchive {
				return &exitError{ExitError, errors.New("--url names the archive: use it with --archive")}
			}
			var st *archive.Store
			if withArchive {
				var err error
				if st, err = openArchive(cmd.Context(), a.archiveURL(archiveURL)); err != nil {
					return err
				}
				defer func() { _ = st.Close() }()
			}
			nc, js, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			defer nc.Close()
			if withArchive {
				var leaves []archivedLeaf
				if err := a.verifyAcrossArchive(cmd, st, js, verifySession, &leaves); err != nil || tree.skipTree {
					return err
				}
				if leaves == nil {
					leaves = []archivedLeaf{}
				}
				switch cp, err := st.Get(cmd.Context(), transparency.ArchiveKey); {
				case errors.Is(err, archive.ErrNotFound):
				case err != nil:
					return &exitError{ExitError, err}
				default:
					tree.archived = cp
				}
				return a.reportTree(cmd, js, &tree, leaves)
			}
			var val *validation.Validator
			if !noSchema {
				if val, err = validation.New(); err != nil {
					return &exitError{ExitError, err}
				}
			}
			var anchors *ledger.Anchors
			if f.streamName == "" || f.streamName == stream.Ledger {
				anchors = ledger.NewAnchors(js) // chains trimmed by the rotator start at their anchor
			}
			res, err := verifyLedger(cmd, ledger.NewReader(js, f.streamName), anchors, verifySession, val)
			if err != nil {
				return &exitError{ExitError, err}
			}
			if err := a.reportVerify(res); err != nil || tree.skipTree || f.streamName != "" && f.streamName != stream.Ledger {
				return err
			}
			return a.reportTree(cmd, js, &tree, nil)
		},
	}
	verify.Flags().StringVar(&verifySession, "session", "", "verify only this session")
	verify.Flags().BoolVar(&noSchema, "no-schema", false, "skip entry schema validation (hash links only)")
	verify.Flags().BoolVar(&withArchive, "archive", false, "verify whole sessions across the archive and the hot stream")
	tree.add(verify)
	verify.Flags().StringVar(&archiveURL, "url", "",
		"with --archive: the archive bucket (config rotator.archive_url; default file://<data dir>/archive)")
	return verify
}

// checkChainArg accepts a session id or one of the chains that are none:
// _rejected and _rotator.
func checkChainArg(s string) error {
	if s == schemas.RejectedChain || s == schemas.RotatorChain {
		return nil
	}
	if err := id.CheckSession(s); err != nil {
		return &exitError{ExitError, err}
	}
	return nil
}

type verifyResult struct {
	chains  int
	entries int
	faults  []*chain.Fault
}

func verifyLedger(cmd *cobra.Command, r *ledger.Reader, anchors *ledger.Anchors, only string,
	val *validation.Validator) (verifyResult, error) {
	cfg := ledger.VerifyConfig{Chain: only, Start: func(c string) chain.StartFunc { return anchors.StartOf(cmd.Context(), c) }}
	if val != nil {
		es, err := entryschema.New(val)
		if err != nil {
			return verifyResult{}, err
		}
		cfg.Check = es.ValidateScanned // entry.v1, every keyword; the full validator for what its fast path cannot prove
	}
	vr, err := r.Verify(cmd.Context(), cfg)
	res := verifyResult{chains: vr.Chains, entries: vr.Entries, faults: vr.Faults}
	if err == nil && only != "" && res.entries == 0 {
		return res, fmt.Errorf("session %s has no entries in the ledger", only)
	}
	return res, err
}

func (a *app) reportVerify(res verifyResult) error {
	w := a.env.Stdout
	if len(res.faults) == 0 {
		fmt.Fprintf(w, "ok: %d chains, %d entries, every hash, link and position intact\n", res.chains, res.entries)
		return nil
	}
	for _, f := range res.faults {
		fmt.Fprintf(w, "FAIL session %s position %d: %s\n", f.Chain, f.N, f.Reason)
	}
	fmt.Fprintf(w, "%d of %d chains broken (%d entries read)\n", len(res.faults), res.chains, res.entries)
	return &exitError{code: ExitFault, err: fmt.Errorf("%d chains broken", len(res.faults))}
}

// reportTree runs the Merkle tree checks and reports them: exit 1 on a
// mismatch, 2 when they cannot run.
func (a *app) reportTree(cmd *cobra.Command, js jetstream.JetStream, tree *checkpointFlags, archived []archivedLeaf) error {
	tree.localWitness(a.dataDir())
	summary, err := tree.verifyTree(cmd.Context(), js, archived)
	if errors.Is(err, transparency.ErrMismatch) {
		fmt.Fprintf(a.env.Stdout, "FAIL %v\n", err)
		return &exitError{code: ExitFault, err: errors.New("the ledger does not match its Merkle tree")}
	}
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			return err
		}
		return &exitError{ExitError, err}
	}
	fmt.Fprintln(a.env.Stdout, "ok: "+summary)
	return nil
}

// verifyAcrossArchive verifies every chain from the archive on into the
// hot stream (archive.VerifyChains); only, when set, limits the chains
// reported (problems of the archive itself are always reported). The
// archived messages' leaf hashes go to leaves, for the Merkle tree check.
func (a *app) verifyAcrossArchive(cmd *cobra.Command, st *archive.Store, js jetstream.JetStream, only string,
	leaves *[]archivedLeaf,
) error {
	ctx := cmd.Context()
	w := a.env.Stdout
	set, err := registryKeys(ctx, js)
	if err != nil {
		return err
	}
	ret, err := a.archiveRetention(cmd, 0)
	if err != nil {
		return err
	}
	progress := a.progress("ledger verify --archive")
	cr, err := archive.VerifyChains(ctx, st, js, stream.Ledger,
		archive.Options{Keys: set, Now: time.Now(), Retention: ret, Segment: func(m archive.Manifest, msgs []archive.Message) error {
			for _, msg := range msgs {
				*leaves = append(*leaves, archivedLeaf{int64(msg.Seq), transparency.LeafHash([]byte(msg.Data))})
			}
			return progress(m, msgs)
		}})
	if err != nil {
		return &exitError{ExitError, fmt.Errorf("verify %s across archive %s: %w", stream.Ledger, st.URL, err)}
	}
	ar := cr.Archive
	if ar.Segments == 0 && ar.Tombstones == 0 && len(ar.Problems) == 0 {
		fmt.Fprintf(a.env.Stderr,
			"note: archive %s holds no %s segment yet; every chain is verified from the hot stream alone\n", st.URL, stream.Ledger)
	}
	if only != "" {
		if _, ok := ar.Heads[only]; !ok {
			_, err := ledger.NewReader(js, stream.Ledger).Last(ctx, only)
			switch {
			case errors.Is(err, ledger.ErrEmpty):
				return &exitError{ExitError, fmt.Errorf("session %s has no entries in the ledger or the archive", only)}
			case err != nil:
				return &exitError{ExitError, err}
			}
		}
	}
	faults := 0
	for _, p := range ar.Problems {
		faults++
		fmt.Fprintf(w, "FAIL %s: %s\n", problemWhere(stream.Ledger, p.Segment), p.Reason)
	}
	broken := 0
	for _, p := range cr.Problems {
		c, isChain := strings.CutPrefix(p.Segment, "chain ")
		if only != "" && c != only {
			continue
		}
		faults++
		if !isChain {
			fmt.Fprintf(w, "FAIL %s: %s\n", problemWhere(stream.Ledger, p.Segment), p.Reason)
			continue
		}
		broken++
		fmt.Fprintf(w, "FAIL session %s: %s\n", c, p.Reason)
	}
	if faults > 0 {
		fmt.Fprintf(w, "%d problems (%d chains broken or lost); the archive holds %d segments, %d tombstones\n", faults, broken,
			ar.Segments, ar.Tombstones)
		return &exitError{code: ExitFault, err: fmt.Errorf("%d problems across the archive and the ledger", faults)}
	}
	if only != "" {
		fmt.Fprintf(w, "ok: session %s intact across the archive (%d segments, %d tombstones) and the hot stream\n", only,
			ar.Segments, ar.Tombstones)
		return nil
	}
	fmt.Fprintf(w,
		"ok: %d chains, %d entries across the archive (%d segments, %d tombstones) and the hot stream, every hash, link and position intact\n", cr.Chains, cr.Entries, ar.Segments, ar.Tombstones)
	return nil
}

func short(h string) string {
	if len(h) > 19 {
		return h[:19] + "…"
	}
	return h
}

// detail summarises an entry for the timeline.
func detail(e *schemas.Entry) string {
	if e.Kind != schemas.EntryEvent {
		return oneLine(e.Reason, 100)
	}
	if e.Payload == nil {
		return ""
	}
	var p struct {
		Prompt  string `json:"prompt"`
		Message string `json:"last_assistant_message"`
		Source  string `json:"source"`
		Reason  string `json:"reason"`
		Error   string `json:"error"`
		Finding struct {
			Message string `json:"message"`
		} `json:"finding"`
		ToolInput struct {
			Command  string `json:"command"`
			FilePath string `json:"file_path"`
			URL      string `json:"url"`
			Pattern  string `json:"pattern"`
		} `json:"tool_input"`
	}
	if err := json.Unmarshal([]byte(*e.Payload), &p, json.RejectUnknownMembers(false)); err != nil {
		return ""
	}
	var parts []string
	for _, s := range []string{p.ToolInput.Command, p.ToolInput.FilePath, p.ToolInput.URL, p.ToolInput.Pattern, p.Prompt,
		p.Message, p.Finding.Message, p.Source, p.Reason} {
		if s != "" {
			parts = append(parts, s)
			break
		}
	}
	if p.Error != "" {
		parts = append(parts, "error: "+p.Error)
	}
	if c := e.HookConfig; c != nil {
		h := "hooks: " + c.Verdict
		if len(c.Missing) > 0 {
			h += fmt.Sprintf(" (%d events unhandled)", len(c.Missing))
		}
		parts = append(parts, h)
	}
	if len(e.Redactions) > 0 {
		parts = append(parts, fmt.Sprintf("(%d secrets redacted)", len(e.Redactions)))
	}
	return oneLine(strings.Join(parts, " "), 100)
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

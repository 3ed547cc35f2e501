package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/claimcheck/claimcheck/pkg/archive"
	"github.com/claimcheck/claimcheck/pkg/identity"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/services/rotator"
)

// archiveFlags holds the archive group's persistent flags, which its
// subcommands read when they run.
type archiveFlags struct {
	rawURL    string
	retention time.Duration
}

// archiveCommand is `claimcheck archive`, the commands that read the
// rotator's blob-storage archive.
func (a *app) archiveCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "archive",
		Short: "Verify the blob-storage archive of LEDGER and ATTEST, and restore lost sessions from it",
		Long: `The rotator copies LEDGER and ATTEST into segments in blob storage (config
rotator.archive_url; by default <data dir>/archive), each with a manifest and a
checkpoint signed with a registered key, and trims the hot ledger behind
verified copies. These commands read that archive.`,
	}
	f := &archiveFlags{}
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.rawURL, "url", "",
		"archive bucket: file:///dir, s3://bucket, gs://bucket or azblob://container (config rotator.archive_url; default file://<data dir>/archive)")
	pf.DurationVar(&f.retention, "retention", rotator.DefaultConfig().ArchiveRetention,
		"the rotator's archive retention (config rotator.archive_retention): a segment deleted younger than this is a problem; 0 skips the check")

	cmd.AddCommand(a.archiveVerifyCommand(f), a.archiveRestoreCommand(f))
	return cmd
}

// archiveVerifyCommand is `archive verify`: every archived segment, manifest
// and checkpoint, and (unless --offline) the ledger on into the hot stream.
func (a *app) archiveVerifyCommand(f *archiveFlags) *cobra.Command {
	var streamSel, keysFile string
	var offline, verifyJSON bool
	verify := &cobra.Command{
		Use:   "verify [--url U] [--stream LEDGER|ATTEST|all] [--keys FILE] [--offline] [--json]",
		Short: "Check every archived segment, manifest and checkpoint, and the ledger's continuity into the hot stream",
		Long: `verify reads every segment of the archive: checkpoint signatures (keys from the
registry, or --keys FILE from claimcheck keys export), manifest and segment
digests, consecutive sequences and each manifest's link to the one before,
tombstones of segments deleted by retention (--retention), and every ledger
entry of every chain in order. For LEDGER it then continues each chain into the
hot stream and names chains whose hot entries are gone. --offline skips the hot
stream (and NATS) and needs --keys.

One line per problem ("FAIL STREAM/SEGMENT: reason"), segments still being
written are noted, then a summary per stream. Exit status 0 when the archive
verifies, 1 when it does not, 2 on other errors (an unreadable or foreign URL,
no NATS, a bad key file).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			streams, err := archiveStreams(streamSel)
			if err != nil {
				return err
			}
			if offline && keysFile == "" {
				return &exitError{ExitError, errors.New(
					"--offline needs --keys FILE (from claimcheck keys export): without NATS there is no key registry")}
			}
			st, u, ret, err := a.openArchiveFlags(cmd, f.rawURL, f.retention)
			if err != nil {
				return err
			}
			defer func() { _ = st.Close() }()
			var set *keyring.Set
			if keysFile != "" {
				if set, err = loadKeySet(keysFile); err != nil {
					return &exitError{ExitError, err}
				}
			}
			var js jetstream.JetStream
			if !offline {
				nc, j, err := a.connect(ctx)
				if err != nil {
					var ee *exitError
					if errors.As(err, &ee) && keysFile != "" {
						ee.err = fmt.Errorf("%w; --offline verifies the archive alone", ee.err)
					}
					return err
				}
				defer nc.Close()
				js = j
				if set == nil {
					if set, err = registryKeys(ctx, js); err != nil {
						return err
					}
				}
			}
			var results []archiveResult
			for _, name := range streams {
				opts := archive.Options{Keys: set, Now: time.Now(), Retention: ret, Segment: a.progress("archive verify " + name)}
				r, err := verifyArchiveStream(ctx, st, js, name, opts)
				if err != nil {
					return &exitError{ExitError, fmt.Errorf("verify %s in archive %s: %w", name, u, err)}
				}
				r.URL = u
				results = append(results, r)
			}
			return a.reportArchive(u, results, verifyJSON)
		},
	}
	vf := verify.Flags()
	vf.StringVar(&streamSel, "stream", "all", "which archived stream: LEDGER, ATTEST or all")
	vf.StringVar(&keysFile, "keys", "", "exported key set (claimcheck keys export) instead of the registry")
	vf.BoolVar(&offline, "offline", false, "verify the archive alone, without NATS and the hot stream (needs --keys)")
	vf.BoolVar(&verifyJSON, "json", false, "one JSON object per stream")
	return verify
}

// archiveRestoreCommand is `archive restore`: the archived messages of
// sessions lost from LEDGER, appended back into it (with --yes).
func (a *app) archiveRestoreCommand(f *archiveFlags) *cobra.Command {
	var restoreSession string
	var yes bool
	restore := &cobra.Command{
		Use:   "restore [--url U] [--session S] [--yes]",
		Short: "Append the archived messages of sessions lost from LEDGER back into it",
		Long: `restore finds the chains the archive holds whose messages are all gone from the
hot LEDGER stream (the rotator always keeps a chain's last message, so such a
chain was lost from JetStream), and appends their archived messages back, in
order and byte for byte, so their entries verify as before. A chain whose
oldest archived entries were deleted by retention is anchored where its
restored entries begin. It refuses, with exit status 1, when the archive does
not verify. Without --yes it only says what it would restore.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if restoreSession != "" {
				if err := checkChainArg(restoreSession); err != nil {
					return err
				}
			}
			st, _, ret, err := a.openArchiveFlags(cmd, f.rawURL, f.retention)
			if err != nil {
				return err
			}
			defer func() { _ = st.Close() }()
			// Restoring writes the ledger: an admin's job.
			nc, js, err := a.connectAs(ctx, identity.RoleAdmin)
			if err != nil {
				return err
			}
			defer nc.Close()
			set, err := registryKeys(ctx, js)
			if err != nil {
				return err
			}
			return a.restore(ctx, st, js, restoreSession, yes,
				archive.Options{Keys: set, Now: time.Now(), Retention: ret, Segment: a.progress("archive restore: verifying")})
		},
	}
	restore.Flags().StringVar(&restoreSession, "session", "", "restore only this session (default every lost one)")
	restore.Flags().BoolVar(&yes, "yes", false, "append to LEDGER (without it, only say what would be restored)")
	return restore
}

// openArchiveFlags resolves --retention and --url (or their configuration)
// and opens the archive.
func (a *app) openArchiveFlags(cmd *cobra.Command, rawURL string, retention time.Duration) (*archive.Store, string, time.Duration, error) {
	ret, err := a.archiveRetention(cmd, retention)
	if err != nil {
		return nil, "", 0, err
	}
	u := a.archiveURL(rawURL)
	st, err := openArchive(cmd.Context(), u)
	if err != nil {
		return nil, "", 0, err
	}
	return st, u, ret, nil
}

// archiveURL is --url, else the configured rotator.archive_url, else the
// archive under the data directory (where `claimcheck up` puts it).
func (a *app) archiveURL(flag string) string {
	if flag != "" {
		return flag
	}
	if u := a.v.GetString("rotator.archive_url"); u != "" {
		return u
	}
	return archive.DefaultURL(a.dataDir())
}

// archiveRetention is --retention when the command has it and it was
// given, else the configured rotator.archive_retention, else the
// rotator's default.
func (a *app) archiveRetention(cmd *cobra.Command, flag time.Duration) (time.Duration, error) {
	d := rotator.DefaultConfig().ArchiveRetention
	switch {
	case cmd.Flags().Changed("retention"):
		d = flag
	case a.v.IsSet("rotator.archive_retention"):
		d = a.v.GetDuration("rotator.archive_retention")
	}
	if d < 0 {
		return 0, &exitError{ExitError, fmt.Errorf("retention %s: must not be negative (0 skips the check)", d)}
	}
	return d, nil
}

func archiveStreams(sel string) ([]string, error) {
	switch strings.ToUpper(sel) {
	case "ALL", "":
		return []string{stream.Ledger, stream.Attest}, nil
	case stream.Ledger:
		return []string{stream.Ledger}, nil
	case stream.Attest:
		return []string{stream.Attest}, nil
	}
	return nil, &exitError{ExitError, fmt.Errorf("--stream %q: want %s, %s or all", sel, stream.Ledger, stream.Attest)}
}

// openArchive opens the bucket at rawURL for reading. A file:// directory
// must exist: reading never creates one (a mistyped path would otherwise
// verify as an empty archive).
func openArchive(ctx context.Context, rawURL string) (*archive.Store, error) {
	if u, err := url.Parse(rawURL); err == nil && u.Scheme == "file" && u.Path != "" {
		fi, err := os.Stat(filepath.FromSlash(u.Path))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, &exitError{ExitError, fmt.Errorf(
				"archive URL %q: no such directory (set --url or rotator.archive_url; `claimcheck up` archives to <data dir>/archive)", rawURL)}
		case err != nil:
			return nil, &exitError{ExitError, fmt.Errorf("archive URL %q: %w", rawURL, err)}
		case !fi.IsDir():
			return nil, &exitError{ExitError, fmt.Errorf("archive URL %q: not a directory", rawURL)}
		}
	}
	st, err := archive.Open(ctx, rawURL)
	if err != nil {
		return nil, &exitError{ExitError, err}
	}
	return st, nil
}

// registryKeys is the verification key set from the registry in NATS.
func registryKeys(ctx context.Context, js jetstream.JetStream) (*keyring.Set, error) {
	reg, err := keyring.OpenRegistry(ctx, js)
	if err != nil {
		return nil, &exitError{ExitError, fmt.Errorf("%w (has `claimcheck up` run against this NATS?)", err)}
	}
	set, err := reg.Set(ctx)
	if err != nil {
		return nil, &exitError{ExitError, err}
	}
	return set, nil
}

// archiveResult is one stream's verdict (one line of --json).
type archiveResult struct {
	URL        string            `json:"url"`
	Stream     string            `json:"stream"`
	OK         bool              `json:"ok"`
	Segments   int               `json:"segments"`   // verified, checkpointed segments
	Tombstones int               `json:"tombstones"` // segments deleted by retention
	Messages   int               `json:"messages"`
	Entries    int               `json:"entries"`
	Chains     int               `json:"chains"`   // chains the archive holds
	LastSeq    uint64            `json:"last_seq"` // the archive covers 1..last_seq
	Hot        *hotResult        `json:"hot,omitempty"`
	Pending    []string          `json:"pending,omitempty"` // uploaded, not yet checkpointed
	Problems   []archive.Problem `json:"problems,omitempty"`
}

// hotResult is LEDGER verified on into the hot stream.
type hotResult struct {
	Chains  int      `json:"chains"`  // verified end to end
	Entries int      `json:"entries"` // archived and hot
	HotOnly int      `json:"hot_only"`
	Lost    []string `json:"lost,omitempty"`
}

func (r archiveResult) empty() bool {
	return r.Segments == 0 && r.Tombstones == 0 && len(r.Pending) == 0 && len(r.Problems) == 0
}

// verifyArchiveStream verifies one stream's archive; LEDGER continues into
// the hot stream when js is set.
func verifyArchiveStream(ctx context.Context, st *archive.Store, js jetstream.JetStream, name string,
	o archive.Options) (archiveResult, error) {
	var ar *archive.Report
	var out archiveResult
	if name == stream.Ledger && js != nil {
		cr, err := archive.VerifyChains(ctx, st, js, name, o)
		if err != nil {
			return out, err
		}
		ar = cr.Archive
		out.Hot = &hotResult{Chains: cr.Chains, Entries: cr.Entries, HotOnly: cr.HotOnly, Lost: cr.Lost}
		out.Problems = append(out.Problems, cr.Problems...)
	} else {
		var err error
		if ar, err = archive.Verify(ctx, st, name, o); err != nil {
			return out, err
		}
	}
	out.Stream, out.Segments, out.Tombstones, out.Messages, out.Entries = name, ar.Segments, ar.Tombstones, ar.Messages, ar.Entries
	out.Chains, out.LastSeq, out.Pending = len(ar.Heads), ar.Last, ar.Pending
	out.Problems = append(append([]archive.Problem(nil), ar.Problems...), out.Problems...)
	out.OK = len(out.Problems) == 0
	return out, nil
}

func (a *app) reportArchive(u string, results []archiveResult, asJSON bool) error {
	w := a.env.Stdout
	problems, empty := 0, true
	for _, r := range results {
		problems += len(r.Problems)
		empty = empty && r.empty()
	}
	if empty {
		var names []string
		for _, r := range results {
			names = append(names, r.Stream)
		}
		return &exitError{ExitError, fmt.Errorf(
			"archive %s holds nothing for %s (wrong --url, or the rotator has not archived anything yet)", u, strings.Join(names, " or "))}
	}
	for _, r := range results {
		if asJSON {
			b, err := json.Marshal(r)
			if err != nil {
				return &exitError{ExitError, err}
			}
			fmt.Fprintln(w, string(b))
			continue
		}
		for _, p := range r.Problems {
			fmt.Fprintf(w, "FAIL %s: %s\n", problemWhere(r.Stream, p.Segment), p.Reason)
		}
		for _, p := range r.Pending {
			fmt.Fprintf(w,
				"pending %s/%s: uploaded, not yet checkpointed (the rotator completes or rebuilds it on its next pass)\n", r.Stream, p)
		}
		if r.empty() {
			fmt.Fprintf(w, "%s: nothing archived\n", r.Stream)
			continue
		}
		line := fmt.Sprintf("%s: %d segments, %d tombstones, %d messages, %d entries, %d chains (sequences 1..%d)", r.Stream, r.Segments,
			r.Tombstones, r.Messages, r.Entries, r.Chains, r.LastSeq)
		if r.Hot != nil {
			line += fmt.Sprintf("; with the hot stream: %d chains, %d entries", r.Hot.Chains, r.Hot.Entries)
		}
		fmt.Fprintln(w, line)
	}
	if problems > 0 {
		if !asJSON {
			fmt.Fprintf(w, "%d problems in archive %s\n", problems, u)
		}
		return &exitError{code: ExitFault, err: fmt.Errorf("the archive does not verify (%d problems)", problems)}
	}
	if !asJSON {
		fmt.Fprintf(w, "ok: archive %s verifies\n", u)
	}
	return nil
}

// problemWhere names where a problem is: STREAM/SEGMENT, STREAM/KEY for a
// foreign object, or STREAM chain C.
func problemWhere(streamName, seg string) string {
	switch {
	case strings.HasPrefix(seg, streamName+"/"):
		return seg
	case strings.HasPrefix(seg, "chain "):
		return streamName + " " + seg
	}
	return streamName + "/" + seg
}

// archivedChain sums what the archive holds of one chain.
type archivedChain struct {
	messages      int
	firstN, lastN uint64
}

// restore appends lost chains back into LEDGER and anchors those whose
// archived entries begin after entry 1.
func (a *app) restore(ctx context.Context, st *archive.Store, js jetstream.JetStream, only string, yes bool, o archive.Options) error {
	w := a.env.Stdout
	held := map[string]*archivedChain{}
	vo := o
	vo.Segment = func(m archive.Manifest, _ []archive.Message) error {
		for _, c := range m.Chains {
			h := held[c.Chain]
			if h == nil {
				h = &archivedChain{firstN: c.FirstN}
				held[c.Chain] = h
			}
			h.messages += c.Messages
			h.lastN = c.LastN
		}
		return nil
	}
	cr, err := archive.VerifyChains(ctx, st, js, stream.Ledger, vo)
	if err != nil {
		return &exitError{ExitError, fmt.Errorf("verify archive %s: %w", st.URL, err)}
	}
	if !cr.Archive.OK() {
		for _, p := range cr.Archive.Problems {
			fmt.Fprintf(w, "FAIL %s: %s\n", problemWhere(stream.Ledger, p.Segment), p.Reason)
		}
		return &exitError{ExitFault,
			fmt.Errorf("archive %s does not verify (%d problems): refusing to restore from it", st.URL, len(cr.Archive.Problems))}
	}
	var lost []string
	for _, c := range cr.Lost {
		if only == "" || c == only {
			lost = append(lost, c)
		}
	}
	if len(lost) == 0 {
		if only != "" {
			fmt.Fprintf(w, "nothing to restore: session %s is not lost (it has entries in LEDGER, or the archive does not hold it)\n", only)
		} else {
			fmt.Fprintln(w, "nothing to restore: no chain is lost from LEDGER")
		}
		return nil
	}
	describe := func(c string) string {
		h := held[c]
		if h == nil {
			return c
		}
		return fmt.Sprintf("%s: %d messages, entries %d..%d", c, h.messages, h.firstN, h.lastN)
	}
	if !yes {
		fmt.Fprintf(w, "would restore %d chains from archive %s into LEDGER:\n", len(lost), st.URL)
		for _, c := range lost {
			fmt.Fprintf(w, "  %s\n", describe(c))
		}
		fmt.Fprintln(w, "run again with --yes to append them")
		return nil
	}
	res, starts, err := archive.Restore(ctx, st, js, stream.Ledger, only, o)
	if err != nil {
		return &exitError{ExitError, fmt.Errorf("restore stopped after appending %d messages: %w", res.Messages, err)}
	}
	anchors := ledger.NewAnchors(js)
	var errs []error
	for _, c := range res.Chains {
		fmt.Fprintf(w, "restored %s\n", describe(c))
		h, ok := starts[c]
		if !ok {
			continue
		}
		_, rev, _, err := anchors.Get(ctx, c)
		if err == nil {
			err = anchors.Put(ctx,
				ledger.Anchor{Chain: c, Starts: []ledger.Start{{N: h.N, Hash: h.Hash}},
					At: time.Now().UTC().Format(archive.TimeFormat)}, rev)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf(
				"session %s was restored from entry %d, but its anchor (entry %d, hash %s) could not be written: `claimcheck ledger verify` reports it until it is: %w", c, h.N+1, h.N, h.Hash, err))
			continue
		}
		fmt.Fprintf(w, "  its older entries were deleted from the archive by retention: anchored after entry %d\n", h.N)
	}
	fmt.Fprintf(w, "restored %d chains, %d messages into LEDGER; check with `claimcheck ledger verify --archive`\n",
		len(res.Chains), res.Messages)
	if len(errs) > 0 {
		return &exitError{ExitError, errors.Join(errs...)}
	}
	return nil
}

// progress reports long verifications on stderr, every few seconds (short
// ones print nothing).
func (a *app) progress(what string) func(archive.Manifest, []archive.Message) error {
	start := time.Now()
	last := start
	segs, msgs := 0, 0
	return func(m archive.Manifest, _ []archive.Message) error {
		segs++
		msgs += m.Messages
		if now := time.Now(); now.Sub(last) >= 3*time.Second {
			last = now
			fmt.Fprintf(a.env.Stderr, "%s: %d segments, %d messages read (%s)\n", what, segs, msgs, now.Sub(start).Round(time.Second))
		}
		return nil
	}
}

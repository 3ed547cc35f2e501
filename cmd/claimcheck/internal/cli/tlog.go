package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"
	tnote "github.com/transparency-dev/formats/note"
	tproof "github.com/transparency-dev/formats/proof"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/transparency"
)

// logView is the ledger's Merkle tree as a reader sees it: the origin,
// the log's verifier keys from the registry, the tiles and the newest
// checkpoint, verified.
type logView struct {
	origin string
	keys   []note.Verifier
	vkeys  []string
	tiles  transparency.TileStore
	cp     *transparency.Checkpoint
}

// openLogView reads the log's state; witnesses are the cosignature/v1
// verifier keys whose cosignatures count.
func openLogView(ctx context.Context, js jetstream.JetStream, witnesses []string) (*logView, []note.Verifier, error) {
	kv, err := transparency.OpenBucket(ctx, js)
	if err != nil {
		return nil, nil, err
	}
	origin, err := transparency.ReadOrigin(ctx, kv)
	if errors.Is(err, transparency.ErrNoCheckpoint) {
		return &logView{tiles: transparency.Tiles(kv)}, nil, nil // the log never ran
	}
	if err != nil {
		return nil, nil, err
	}
	reg, err := keyring.OpenRegistry(ctx, js)
	if err != nil {
		return nil, nil, err
	}
	regKeys, err := reg.List(ctx)
	if err != nil {
		return nil, nil, err
	}
	v := &logView{origin: origin, tiles: transparency.Tiles(kv)}
	for _, k := range keyring.Export(regKeys, time.Now()) {
		if k.Status == keyring.Revoked {
			continue
		}
		vk, err := transparency.VerifierKey(origin, k)
		if err != nil {
			return nil, nil, err
		}
		v.vkeys = append(v.vkeys, vk)
	}
	var wvs []note.Verifier
	for _, w := range witnesses {
		wv, err := tnote.NewVerifierForCosignatureV1(w)
		if err != nil {
			return nil, nil, &exitError{ExitError, fmt.Errorf("--witness-key %q: %w", w, err)}
		}
		wvs = append(wvs, wv)
	}
	signed, _, err := transparency.Latest(ctx, kv)
	if errors.Is(err, transparency.ErrNoCheckpoint) {
		return v, wvs, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if v.keys, err = transparency.LogVerifiers(origin, keyring.Export(regKeys, time.Now())); err != nil {
		return nil, nil, fmt.Errorf("%w: the newest checkpoint: %w", transparency.ErrMismatch, err)
	}
	if v.cp, err = transparency.Open(signed, origin, v.keys, wvs); err != nil {
		return nil, nil, fmt.Errorf("%w: the newest checkpoint: %w", transparency.ErrMismatch, err)
	}
	return v, wvs, nil
}

// logKeysOf returns the log's verifier keys from the registry.
func logKeysOf(ctx context.Context, js jetstream.JetStream, origin string) ([]note.Verifier, error) {
	reg, err := keyring.OpenRegistry(ctx, js)
	if err != nil {
		return nil, err
	}
	keys, err := reg.List(ctx)
	if err != nil {
		return nil, err
	}
	return transparency.LogVerifiers(origin, keyring.Export(keys, time.Now()))
}

// ledgerCheckpointCommand is `ledger checkpoint`: the newest checkpoint of
// the ledger's Merkle tree, and (--keys) what a witness or a client needs
// to trust the log.
func (a *app) ledgerCheckpointCommand() *cobra.Command {
	var keys bool
	cmd := &cobra.Command{
		Use:   "checkpoint [--keys]",
		Short: "Print the newest checkpoint of the ledger's Merkle tree (verified), or the log's origin and verifier keys",
		Long: `checkpoint prints the newest signed checkpoint (c2sp.org/tlog-checkpoint) of the
Merkle tree over LEDGER, after verifying it with the key registry. With --keys it
prints the log's origin and the note verifier keys of its signing keys instead, one
"log <origin> <key>" line each: what a witness (claimcheck witness serve --log) and
an offline verifier need.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			nc, js, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			defer nc.Close()
			v, _, err := openLogView(cmd.Context(), js, nil)
			if err != nil {
				return &exitError{ExitError, err}
			}
			if v.origin == "" {
				return &exitError{ExitError, errors.New("the ledger has no Merkle tree log yet (the rotator starts it)")}
			}
			if keys {
				for _, k := range v.vkeys {
					fmt.Fprintf(a.env.Stdout, "log %s %s\n", v.origin, k)
				}
				return nil
			}
			if v.cp == nil {
				return &exitError{ExitError, errors.New("no checkpoint yet (the rotator issues the first after the first LEDGER message)")}
			}
			_, err = a.env.Stdout.Write(v.cp.Note)
			return err
		},
	}
	cmd.Flags().BoolVar(&keys, "keys", false, "print the log's origin and verifier keys instead")
	return cmd
}

// ledgerProveCommand is `ledger prove`: the inclusion proof of an entry.
func (a *app) ledgerProveCommand() *cobra.Command {
	var session string
	var n uint64
	cmd := &cobra.Command{
		Use:   "prove --session S --n K",
		Short: "Print the inclusion proof of a session's entry in the newest checkpoint (c2sp.org/tlog-proof)",
		Long: `prove prints a c2sp.org/tlog-proof of entry K of session S: the index of the LEDGER
message (the block of the session's entries that holds it), the Merkle inclusion
proof, and the newest checkpoint with its cosignatures. The message itself rides in
the proof's extra data, so the proof checks offline: hash the extra data as a leaf,
run the proof to the checkpoint's root, find the entry in the message.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkChainArg(session); err != nil {
				return err
			}
			if n == 0 {
				return &exitError{ExitError, errors.New("--n: the entry's position in its session, from 1")}
			}
			nc, js, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			defer nc.Close()
			p, err := proveEntry(cmd.Context(), js, session, n)
			if err != nil {
				return &exitError{ExitError, err}
			}
			_, err = a.env.Stdout.Write(p)
			return err
		},
	}
	cmd.Flags().StringVar(&session, "session", "", "the session (or _rotator, _rejected)")
	cmd.Flags().Uint64Var(&n, "n", 0, "the entry's position in the session")
	return cmd
}

// proveEntry builds the tlog-proof of entry n of chain.
func proveEntry(ctx context.Context, js jetstream.JetStream, chain string, n uint64) ([]byte, error) {
	v, _, err := openLogView(ctx, js, nil)
	if err != nil {
		return nil, err
	}
	if v.cp == nil {
		return nil, errors.New("no checkpoint yet")
	}
	var found *ledger.Stored
	err = ledger.NewReader(js, stream.Ledger).Walk(ctx, chain, 0, func(s ledger.Stored) error {
		var e struct {
			N uint64 `json:"n"`
		}
		if err := json.Unmarshal(s.Raw, &e, json.RejectUnknownMembers(false)); err != nil {
			return fmt.Errorf("%s entry in message %d: %w", chain, s.Seq, err)
		}
		if e.N == n {
			found = &s
			return errStopWalk
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStopWalk) {
		return nil, err
	}
	if found == nil {
		return nil, fmt.Errorf("%s has no entry %d in the hot ledger (archived entries: claimcheck archive verify)", chain, n)
	}
	if int64(found.Seq) > v.cp.Tree.N {
		return nil, fmt.Errorf("entry %d of %s is in LEDGER message %d; the newest checkpoint covers %d: wait for the next one",
			n, chain, found.Seq, v.cp.Tree.N)
	}
	msg, err := js.Stream(ctx, stream.Ledger)
	if err != nil {
		return nil, err
	}
	raw, err := msg.GetMsg(ctx, found.Seq)
	if err != nil {
		return nil, fmt.Errorf("LEDGER message %d: %w", found.Seq, err)
	}
	proof, err := transparency.ProveRecord(ctx, v.tiles, v.cp.Tree, int64(found.Seq)-1)
	if err != nil {
		return nil, err
	}
	out := tproof.TLogProof{Index: found.Seq - 1, Checkpoint: v.cp.Note, ExtraData: raw.Data}
	for _, h := range proof {
		out.Hashes = append(out.Hashes, h)
	}
	return out.Marshal(), nil
}

var errStopWalk = errors.New("found")

// checkpointFlags are ledger verify's checks of the Merkle tree.
// archivedCheckpoint names, among the checkpoints held elsewhere, the one
// the rotator keeps in the archive (transparency.ArchiveKey).
const archivedCheckpoint = "the archive's " + transparency.ArchiveKey

type checkpointFlags struct {
	archived     []byte // the archive's checkpoint (ledger verify --archive)
	witnessURL   string
	held         string
	witnessKeys  []string
	minWitnesses int
	skipTree     bool
	noLocal      bool
	local        bool // the local witness of claimcheck up is checked
}

func (f *checkpointFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.witnessURL, "witness", "",
		"also check the log against the checkpoint this witness cosigned last (its URL)")
	cmd.Flags().StringVar(&f.held, "checkpoint", "",
		"also check the log against this checkpoint (a file: one kept from an earlier verification, or a witness's)")
	cmd.Flags().StringSliceVar(&f.witnessKeys, "witness-key", nil,
		"a witness's cosignature/v1 verifier key whose cosignatures count (repeat for several)")
	cmd.Flags().IntVar(&f.minWitnesses, "min-witnesses", 0, "cosignatures the newest checkpoint needs from --witness-key witnesses")
	cmd.Flags().BoolVar(&f.skipTree, "no-tree", false, "skip the Merkle tree checks (chains only)")
	cmd.Flags().BoolVar(&f.noLocal, "no-local-witness", false,
		"do not check against the local witness of claimcheck up (used by default when no witness is named)")
}

// localWitness fills in the witness `claimcheck up` runs on this machine
// (its URL and key, under the data directory) when no witness is named.
func (f *checkpointFlags) localWitness(dataDir string) {
	if f.witnessURL != "" || len(f.witnessKeys) > 0 || f.noLocal || dataDir == "" {
		return
	}
	dir := filepath.Join(dataDir, "witness")
	u, err := os.ReadFile(filepath.Join(dir, "url"))
	if err != nil {
		return
	}
	w, err := transparency.OpenWitness(dir, "", nil, slog.New(slog.DiscardHandler))
	if err != nil {
		return
	}
	f.witnessURL, f.witnessKeys, f.local = strings.TrimSpace(string(u)), []string{w.VerifierKey()}, true
}

// verifyTree checks LEDGER against the newest checkpoint, and the newest
// checkpoint against one held elsewhere. It returns the problems found
// (each wraps transparency.ErrMismatch) and what it checked, for the
// report.
// archivedLeaf is a LEDGER message read from the archive, as its leaf hash.
type archivedLeaf struct {
	seq  int64
	hash tlog.Hash
}

// verifyTree checks the ledger against its Merkle tree: the newest
// checkpoint against those held elsewhere, the hot LEDGER messages and
// the archived ones given (ledger verify --archive) against its leaves.
func (f *checkpointFlags) verifyTree(ctx context.Context, js jetstream.JetStream, archived []archivedLeaf) (string, error) {
	v, wvs, err := openLogView(ctx, js, f.witnessKeys)
	if err != nil {
		return "", err
	}
	if v.origin == "" {
		if f.held != "" {
			return "", fmt.Errorf("%w: the ledger has no Merkle tree log, but --checkpoint holds a checkpoint of one: "+
				"the log's state was lost or rolled back", transparency.ErrMismatch)
		}
		return "Merkle tree: no checkpoint yet", nil
	}
	var others []*transparency.Checkpoint
	for _, src := range []string{f.held, f.witnessURL, archivedCheckpoint} {
		if src == "" || src == archivedCheckpoint && f.archived == nil {
			continue
		}
		var signed []byte
		var err error
		if src == archivedCheckpoint {
			signed = f.archived
			if o, _, _ := strings.Cut(string(signed), "\n"); o != v.origin {
				return "", fmt.Errorf("%w: the archive holds a checkpoint of log %q, the ledger's log is %q: the log's state was lost "+
					"and it started over", transparency.ErrMismatch, o, v.origin)
			}
		} else {
			signed, err = readCheckpoint(ctx, src, v.origin)
		}
		if err != nil && f.local && src == f.witnessURL {
			// claimcheck up is not running, or its witness holds nothing
			// yet: there is nothing to compare with.
			continue
		}
		if err != nil {
			return "", err
		}
		keys := v.keys
		if keys == nil {
			if keys, err = logKeysOf(ctx, js, v.origin); err != nil {
				return "", err
			}
		}
		cp, err := transparency.Open(signed, v.origin, keys, wvs)
		if err != nil {
			return "", fmt.Errorf("%s: %w", src, err)
		}
		others = append(others, cp)
	}
	// The log stores a checkpoint after its witnesses cosigned it: one
	// newer than what was read first may be stored meanwhile, a moment
	// after the witness answered.
	for try := 0; try < 10 && slices.ContainsFunc(others, func(o *transparency.Checkpoint) bool {
		return v.cp == nil || o.Tree.N > v.cp.Tree.N
	}); try++ {
		if try > 0 {
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-time.After(200 * time.Millisecond):
			}
		}
		if again, _, err := openLogView(ctx, js, f.witnessKeys); err == nil {
			v = again
		}
	}
	if v.cp == nil {
		if len(others) > 0 {
			return "", fmt.Errorf(
				"%w: the log has no checkpoint, but one of %d messages exists elsewhere: the log's state was lost or rolled back",
				transparency.ErrMismatch, others[0].Tree.N)
		}
		return "Merkle tree: no checkpoint yet", nil
	}
	if len(v.cp.Witnesses) < f.minWitnesses {
		return "", fmt.Errorf("%w: the newest checkpoint has %d cosignature(s) of the --witness-key witnesses, --min-witnesses %d",
			transparency.ErrMismatch, len(v.cp.Witnesses), f.minWitnesses)
	}
	for _, o := range others {
		if err := transparency.Consistent(ctx, v.tiles, v.cp.Tree, o.Tree); err != nil {
			return "", err
		}
	}
	rep, err := transparency.Audit(ctx, js, stream.Ledger, v.tiles, v.cp.Tree)
	if err != nil {
		return "", err
	}
	what, trimmed := fmt.Sprintf("%d LEDGER messages", rep.Checked), ""
	if archived != nil {
		lc := transparency.NewLeafChecker(ctx, v.tiles, v.cp.Tree)
		covered := int64(0)
		for _, l := range archived {
			if err := lc.Check(l.seq, l.hash); err != nil {
				return "", fmt.Errorf("archived %s: %w", stream.Ledger, err)
			}
			if l.seq <= v.cp.Tree.N && l.seq < rep.First {
				covered++
			}
		}
		what = fmt.Sprintf("%d hot and %d archived LEDGER messages", rep.Checked, covered)
		if gone := rep.Absent - covered; gone > 0 {
			trimmed = fmt.Sprintf(" (%d more in neither: past the archive's retention)", gone)
		}
	} else if rep.Absent > 0 {
		trimmed = fmt.Sprintf(" (%d more trimmed to the archive; --archive checks those)", rep.Absent)
	}
	return fmt.Sprintf(
		"Merkle tree: %s match the checkpoint of %d%s (%s), cosigned by %d witness(es); %d checkpoint(s) held elsewhere are consistent",
		what, v.cp.Tree.N, trimmed, v.origin, len(v.cp.Witnesses), len(others)), nil
}

// readCheckpoint reads a checkpoint from a file, or asks a witness for its
// latest of origin.
func readCheckpoint(ctx context.Context, src, origin string) ([]byte, error) {
	if !strings.HasPrefix(src, "http://") && !strings.HasPrefix(src, "https://") {
		b, err := os.ReadFile(src)
		if err != nil {
			return nil, &exitError{ExitError, fmt.Errorf("--checkpoint: %w", err)}
		}
		return b, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		strings.TrimSuffix(src, "/")+"/checkpoint?origin="+url.QueryEscape(origin), nil)
	if err != nil {
		return nil, &exitError{ExitError, fmt.Errorf("--witness: %w", err)}
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return nil, &exitError{ExitError, fmt.Errorf("--witness: %w", err)}
	}
	defer resp.Body.Close() //nolint:errcheck // read-only
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return nil, &exitError{ExitError, fmt.Errorf("--witness: %w", err)}
	}
	if resp.StatusCode == http.StatusNotFound {
		return nil, &exitError{ExitError, fmt.Errorf("--witness %s: it holds no checkpoint of %s", src, origin)}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &exitError{ExitError, fmt.Errorf("--witness %s: %s: %s", src, resp.Status, bytes.TrimSpace(b))}
	}
	return b, nil
}

// ledgerCheckProofCommand is `ledger check-proof`: a tlog-proof checked
// offline, with no NATS and no data directory.
func (a *app) ledgerCheckProofCommand() *cobra.Command {
	var keysFile string
	var witnessKeys []string
	var minWitnesses int
	cmd := &cobra.Command{
		Use:   "check-proof PROOF --keys FILE [--witness-key K ... --min-witnesses N]",
		Short: "Check an inclusion proof from `ledger prove` offline: no NATS, no data directory",
		Long: `check-proof checks a c2sp.org/tlog-proof printed by claimcheck ledger prove: the
checkpoint verifies under one of the log's keys (--keys: the lines claimcheck ledger
checkpoint --keys printed), it has --min-witnesses cosignatures of the --witness-key
witnesses, and the LEDGER message in the proof's extra data is the leaf at the
proof's index under the checkpoint's root. It prints the entries the message holds.
Exit 0: it checks; 1: it does not, with the reason; 2: bad input.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			raw, err := os.ReadFile(args[0])
			if err != nil {
				return &exitError{ExitError, err}
			}
			logs, err := witnessLogs(nil, keysFile)
			if err != nil {
				return &exitError{ExitError, fmt.Errorf("--keys: %w", err)}
			}
			res, err := checkProof(raw, logs, witnessKeys, minWitnesses)
			if err != nil {
				fmt.Fprintf(a.env.Stdout, "FAIL %v\n", err)
				return &exitError{code: ExitFault}
			}
			fmt.Fprintln(a.env.Stdout, res)
			return nil
		},
	}
	cmd.Flags().StringVar(&keysFile, "keys", "", `the log's keys: "log <origin> <key>" lines (claimcheck ledger checkpoint --keys)`)
	cmd.Flags().StringSliceVar(&witnessKeys, "witness-key", nil, "a witness's cosignature/v1 verifier key whose cosignatures count")
	cmd.Flags().IntVar(&minWitnesses, "min-witnesses", 0, "cosignatures the checkpoint needs from --witness-key witnesses")
	return cmd
}

// checkProof checks a tlog-proof against the logs' keys and returns what
// it proves.
func checkProof(raw []byte, logs map[string][]string, witnessKeys []string, minWitnesses int) (string, error) {
	var p tproof.TLogProof
	if err := p.Unmarshal(raw); err != nil {
		return "", fmt.Errorf("not a tlog-proof: %w", err)
	}
	origin, _, _ := strings.Cut(string(p.Checkpoint), "\n")
	vkeys, ok := logs[origin]
	if !ok {
		return "", fmt.Errorf("the checkpoint is of log %q, which --keys does not name", origin)
	}
	var keys, wvs []note.Verifier
	for _, k := range vkeys {
		v, err := tnote.NewVerifier(k)
		if err != nil {
			return "", fmt.Errorf("--keys: %w", err)
		}
		keys = append(keys, v)
	}
	for _, k := range witnessKeys {
		v, err := tnote.NewVerifierForCosignatureV1(k)
		if err != nil {
			return "", fmt.Errorf("--witness-key: %w", err)
		}
		wvs = append(wvs, v)
	}
	cp, err := transparency.Open(p.Checkpoint, origin, keys, wvs)
	if err != nil {
		return "", err
	}
	if len(cp.Witnesses) < minWitnesses {
		return "", fmt.Errorf("the checkpoint has %d witness cosignature(s), --min-witnesses %d", len(cp.Witnesses), minWitnesses)
	}
	if int64(p.Index) >= cp.Tree.N {
		return "", fmt.Errorf("index %d is outside the checkpoint of %d", p.Index, cp.Tree.N)
	}
	proof := make(tlog.RecordProof, len(p.Hashes))
	for i, h := range p.Hashes {
		proof[i] = h
	}
	if err := tlog.CheckRecord(proof, cp.Tree.N, cp.Tree.Hash, int64(p.Index), transparency.LeafHash(p.ExtraData)); err != nil {
		return "", fmt.Errorf("the message is not leaf %d of the checkpoint of %d: %w", p.Index, cp.Tree.N, err)
	}
	var held []string
	for _, e := range ledger.SplitBlock(p.ExtraData) {
		var entry struct {
			SessionID string `json:"session_id"`
			N         uint64 `json:"n"`
			Hash      string `json:"hash"`
		}
		if err := json.Unmarshal(e, &entry, json.RejectUnknownMembers(false)); err != nil {
			return "", fmt.Errorf("the message holds something that is not an entry: %w", err)
		}
		held = append(held, fmt.Sprintf("  session %s n=%d %s", entry.SessionID, entry.N, entry.Hash))
	}
	return fmt.Sprintf("ok: LEDGER message %d is leaf %d of the checkpoint of %d (%s), cosigned by %d witness(es); it holds:\n%s",
		p.Index+1, p.Index, cp.Tree.N, origin, len(cp.Witnesses), strings.Join(held, "\n")), nil
}

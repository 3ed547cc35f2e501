package cli

import (
	"context"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/mod/sumdb/note"

	"github.com/claimcheck/claimcheck/pkg/archive"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/transparency"
	"github.com/claimcheck/claimcheck/schemas"
)

// ledger verify --archive checks the archived LEDGER messages against the
// Merkle tree as well as the hot ones: a message trimmed from the stream
// is matched with its leaf from its archived copy, and an archived copy
// that is not what was logged is named (here one whose sequence was
// changed: the chains alone cannot see it, since a block's entries do not
// carry the stream sequence).
func TestLedgerVerifyArchiveChecksTheTree(t *testing.T) {
	f := newArchiveFixture(t, 0)
	ctx := t.Context()
	kv, err := transparency.OpenBucket(ctx, f.js)
	if err != nil {
		t.Fatal(err)
	}
	dir := keyring.Dir{Path: filepath.Join(f.dataDir, "keys")}
	l := &transparency.Log{JS: f.js, KV: kv, Every: 1, Interval: time.Hour, Logger: slog.New(slog.DiscardHandler),
		Signers: func(_ context.Context, origin string) ([]note.Signer, error) {
			sv, err := dir.Load(f.keys[0])
			if err != nil {
				return nil, err
			}
			ns, err := transparency.NoteSigner(origin, f.keys[0], sv)
			return []note.Signer{ns}, err
		}}
	tree, err := l.CatchUp(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tree.N != int64(len(f.ledger)) {
		t.Fatalf("checkpoint of %d messages, LEDGER holds %d", tree.N, len(f.ledger))
	}
	f.write(2)
	ls, err := f.js.Stream(ctx, stream.Ledger)
	if err != nil {
		t.Fatal(err)
	}
	if err := ls.Purge(ctx, jetstream.WithPurgeSequence(5)); err != nil { // messages 1..4 only archived now
		t.Fatal(err)
	}
	env := f.env
	r := runCLI(t, env, "ledger", "verify", "--archive", "--no-local-witness")
	want := "Merkle tree: " + strconv.Itoa(len(f.ledger)-4) + " hot and 4 archived LEDGER messages match the checkpoint of " + strconv.Itoa(len(f.ledger))
	if r.code != ExitOK || !strings.Contains(r.stdout, want) {
		t.Fatalf("ledger verify --archive: %+v\nwant %q", r, want)
	}
	// The rotator keeps the newest checkpoint in the archive: ledger
	// verify --archive holds the log to it, and names a log that went back.
	signed, _, err := transparency.Latest(ctx, kv)
	if err != nil {
		t.Fatal(err)
	}
	def, err := archive.Open(ctx, archive.DefaultURL(f.dataDir))
	if err != nil {
		t.Fatal(err)
	}
	defer def.Close()
	if err := def.Put(ctx, transparency.ArchiveKey, signed, "text/plain"); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, env, "ledger", "verify", "--archive", "--no-local-witness"); r.code != ExitOK ||
		!strings.Contains(r.stdout, "1 checkpoint(s) held elsewhere are consistent") {
		t.Fatalf("ledger verify --archive with the archived checkpoint: %+v", r)
	}
	a := ledger.NewAppender(f.js, ledger.AppenderConfig{MaxBlockBytes: 4000})
	for i := range 3 {
		if _, err := a.Append(ctx, "sess-a", []*schemas.Entry{testEntry("sess-a", 100+i, time.Now().UTC())}); err != nil {
			t.Fatal(err)
		}
	}
	bigger, err := l.CatchUp(ctx)
	if err != nil {
		t.Fatal(err)
	}
	newest, _, err := transparency.Latest(ctx, kv)
	if err != nil {
		t.Fatal(err)
	}
	if err := def.Put(ctx, transparency.ArchiveKey, newest, "text/plain"); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "checkpoint", signed); err != nil { // the log's state back to the smaller tree
		t.Fatal(err)
	}
	r = runCLI(t, env, "ledger", "verify", "--archive", "--no-local-witness")
	want = "the log's newest checkpoint covers " + strconv.Itoa(len(f.ledger)) + " messages, a checkpoint of " +
		strconv.FormatInt(bigger.N, 10) + " exists: the log was rolled back"
	if r.code != ExitFault || !strings.Contains(r.stdout, want) {
		t.Fatalf("ledger verify --archive with the log behind the archived checkpoint: %+v\nwant %q", r, want)
	}
	if _, err := kv.Put(ctx, "checkpoint", newest); err != nil {
		t.Fatal(err)
	}

	// The archive rewritten with messages 2 and 3 swapped (segments
	// re-signed with the registry's key, as by someone holding it).
	swapped := append([]archive.Message(nil), f.ledger...)
	swapped[1].Seq, swapped[2].Seq = swapped[2].Seq, swapped[1].Seq
	swapped[1], swapped[2] = swapped[2], swapped[1]
	f.dataDir = t.TempDir()
	st, err := archive.Open(ctx, archive.DefaultURL(f.dataDir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	f.writeStream(st, f.signer, stream.Ledger, swapped, 2)
	f.writeStream(st, f.signer, stream.Attest, f.attest, 2)
	r = runCLI(t, env, "ledger", "verify", "--archive", "--url", st.URL, "--no-local-witness")
	if r.code != ExitFault || !strings.Contains(r.stdout, "FAIL archived LEDGER: the ledger does not match a checkpoint: message 2 differs from leaf 1") {
		t.Fatalf("ledger verify --archive of a renumbered archive: %+v", r)
	}
	t.Logf("renumbered archive: %s", strings.TrimSpace(r.stdout))
}

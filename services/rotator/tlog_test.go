package rotator_test

import (
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claimcheck/claimcheck/pkg/archive"
	"github.com/claimcheck/claimcheck/pkg/clock"
	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/service"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/transparency"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/services/rotator"
)

// The rotator keeps the Merkle tree's newest checkpoint in the archive,
// growing with the log; when the tree's state is lost and a log starts
// over on the same ledger, the pass fails naming it before anything is
// trimmed, and the archived checkpoint is left as it was. (A NATS store
// rolled back behind the archive is refused by the archive's own tail
// check first.)
func TestArchivedCheckpointCatchesALogStartedOver(t *testing.T) {
	dir, listen := t.TempDir(), fmt.Sprintf("127.0.0.1:%d", natstest.FreePort(t))
	work := t.TempDir()
	cfg := rotator.DefaultConfig()
	cfg.ArchiveURL = (&url.URL{Scheme: "file", Path: filepath.Join(work, "archive")}).String()
	cfg.KeyDir = filepath.Join(work, "keys")
	clk := clock.NewFake(t0)
	n, tlogLost := 0, false
	// round starts the server on dir, chains k more entries and runs a
	// pass; it returns the pass's error and stops the server.
	round := func(k int) error {
		t.Helper()
		srv := natstest.RunServerAt(t, dir, listen)
		defer srv.Shutdown()
		nc, js := natstest.Connect(t, srv.ClientURL())
		defer nc.Close()
		natstest.Bootstrap(t, js, nil)
		reg, err := keyring.OpenRegistry(t.Context(), js)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := keyring.EnsureFirst(t.Context(), reg, keyring.Dir{Path: cfg.KeyDir}, keyring.ECDSA, t0); err != nil {
			t.Fatal(err)
		}
		if tlogLost {
			kvs, err := js.Stream(t.Context(), "KV_"+stream.BucketTlog)
			if err != nil {
				t.Fatal(err)
			}
			if err := kvs.Purge(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		app := ledger.NewAppender(js, ledger.AppenderConfig{})
		for range k {
			n++
			p := fmt.Sprintf(`{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","i":%d}`, n)
			ts := clk.Now().UTC().Format(time.RFC3339Nano)
			e := &schemas.Entry{V: 1, Kind: schemas.EntryEvent, Chain: "s", SessionID: "s", EventID: fmt.Sprintf("01JD%022d", n),
				HookEvent: "PostToolUse", ToolName: "Bash", IngestedAt: ts, ReceivedAt: ts, Payload: &p, PayloadDigest: digest.SHA256([]byte(p)),
				PayloadSize: len(p), Bundle: "test"}
			if _, err := app.Append(t.Context(), "s", []*schemas.Entry{e}); err != nil {
				t.Fatal(err)
			}
		}
		r, err := rotator.New(cfg, service.Settings{Conn: nc, Clock: clk, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Open(t.Context()); err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		_, err = r.Pass(t.Context())
		return err
	}
	archived := func() int64 {
		t.Helper()
		st, err := archive.Open(t.Context(), cfg.ArchiveURL)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		b, err := st.Get(t.Context(), transparency.ArchiveKey)
		if err != nil {
			t.Fatal(err)
		}
		text, _, _ := strings.Cut(string(b), "\n\n")
		var origin string
		var size int64
		if _, err := fmt.Sscanf(text, "%s\n%d\n", &origin, &size); err != nil {
			t.Fatalf("archived checkpoint %q: %v", text, err)
		}
		return size
	}

	if err := round(10); err != nil {
		t.Fatal(err)
	}
	first := archived()
	if err := round(10); err != nil {
		t.Fatal(err)
	}
	second := archived()
	if second < first+10 {
		t.Fatalf("the archive holds a checkpoint of %d messages after 10 more were chained, %d before", second, first)
	}
	// The tree's state lost (its bucket purged): a log started over on
	// the same ledger, under a new origin, is refused.
	tlogLost = true
	err := round(0)
	if err == nil || !strings.Contains(err.Error(), "the log started over") || !strings.Contains(err.Error(), transparency.ArchiveKey) {
		t.Fatalf("pass after the tree's state was lost: %v", err)
	}
	t.Logf("pass after the tree's state was lost: %v", err)
	if got := archived(); got != second {
		t.Fatalf("the archive's checkpoint became one of %d messages", got)
	}
}

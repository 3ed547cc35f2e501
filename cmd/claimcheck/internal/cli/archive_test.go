package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/archive"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
)

// archiveFixture is a ledger of two sessions and two attestations, a key
// registry with one key, and what the rotator would archive of them.
type archiveFixture struct {
	t       *testing.T
	env     map[string]string
	js      jetstream.JetStream
	dataDir string
	signer  *keyring.Signer
	keys    []schemas.Key
	ledger  []archive.Message // LEDGER, as archived
	attest  []archive.Message // ATTEST, as archived
}

// newArchiveFixture appends four rounds to sessions sess-a (two entries a
// round) and sess-b (one), each round its own messages; entries of the
// first round were ingested firstAge ago.
func newArchiveFixture(t *testing.T, firstAge time.Duration) *archiveFixture {
	t.Helper()
	ctx := t.Context()
	s := natstest.RunServer(t)
	_, js := natstest.Connect(t, s.ClientURL())
	natstest.Bootstrap(t, js, nil)
	f := &archiveFixture{t: t, js: js, dataDir: t.TempDir()}
	f.env = map[string]string{"CLAIMCHECK_NATS_URL": s.ClientURL(), "CLAIMCHECK_DATA_DIR": f.dataDir, "HOME": t.TempDir()}

	reg, err := keyring.OpenRegistry(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	dir := keyring.Dir{Path: filepath.Join(f.dataDir, "keys")}
	if _, _, err := keyring.EnsureFirst(ctx, reg, dir, keyring.ECDSA, time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if f.keys, err = reg.List(ctx); err != nil {
		t.Fatal(err)
	}
	if f.signer, err = keyring.NewSigner(f.keys, dir, time.Now()); err != nil {
		t.Fatal(err)
	}

	a := ledger.NewAppender(js, ledger.AppenderConfig{MaxBlockBytes: 4000})
	n := 0
	for round := range 4 {
		at := time.Now().UTC()
		if round == 0 {
			at = at.Add(-firstAge)
		}
		for _, c := range []struct {
			chain string
			k     int
		}{{"sess-a", 2}, {"sess-b", 1}} {
			var entries []*schemas.Entry
			for range c.k {
				n++
				entries = append(entries, testEntry(c.chain, n, at))
			}
			if _, err := a.Append(ctx, c.chain, entries); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := 1; i <= 2; i++ {
		if _, err := js.Publish(ctx, subject.Attestation("sess-a", fmt.Sprintf("att%d", i)), fmt.Appendf(nil, `{"payloadType":"application/vnd.in-toto+json","payload":"e30=","signatures":[],"n":%d}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	f.ledger = readArchived(t, js, stream.Ledger)
	f.attest = readArchived(t, js, stream.Attest)
	if len(f.ledger) < 8 {
		t.Fatalf("fixture: %d ledger messages, want at least 8 (one per append)", len(f.ledger))
	}
	return f
}

func testEntry(chain string, i int, at time.Time) *schemas.Entry {
	p := fmt.Sprintf(`{"session_id":%q,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"echo %d"}}`, chain, i)
	ts := at.Format(time.RFC3339Nano)
	return &schemas.Entry{V: 1, Kind: schemas.EntryEvent, Chain: chain, SessionID: chain,
		EventID: fmt.Sprintf("01JD%022d", i), HookEvent: "PostToolUse", ToolName: "Bash",
		IngestedAt: ts, ReceivedAt: ts,
		Payload: &p, PayloadDigest: "sha256:" + strings.Repeat("0", 64), PayloadSize: len(p), Bundle: "test"}
}

// readArchived reads a whole stream as the rotator archives it (for
// LEDGER, a message's time is its last entry's ingested_at).
func readArchived(t *testing.T, js jetstream.JetStream, name string) []archive.Message {
	t.Helper()
	s, err := js.Stream(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var out []archive.Message
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(t.Context(), seq)
		if err != nil {
			t.Fatal(err)
		}
		at := m.Time.UTC().Format(archive.TimeFormat)
		if name == stream.Ledger {
			entries := ledger.SplitBlock(m.Data)
			var e struct {
				IngestedAt string `json:"ingested_at"`
			}
			if err := json.Unmarshal(entries[len(entries)-1], &e, json.RejectUnknownMembers(false)); err != nil {
				t.Fatal(err)
			}
			ts, err := time.Parse(time.RFC3339Nano, e.IngestedAt)
			if err != nil {
				t.Fatal(err)
			}
			at = ts.UTC().Format(archive.TimeFormat)
		}
		out = append(out, archive.Message{Seq: m.Sequence, Subject: m.Subject, Time: at, Data: string(m.Data)})
	}
	return out
}

// write archives the fixture's streams under the data directory's default
// archive, per messages to a segment, and returns the store and the
// LEDGER segment names.
func (f *archiveFixture) write(per int) (*archive.Store, []string) {
	f.t.Helper()
	st, err := archive.Open(f.t.Context(), archive.DefaultURL(f.dataDir))
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = st.Close() })
	names := f.writeStream(st, f.signer, stream.Ledger, f.ledger, per)
	f.writeStream(st, f.signer, stream.Attest, f.attest, per)
	return st, names
}

func (f *archiveFixture) writeStream(st *archive.Store, signer *keyring.Signer, name string, msgs []archive.Message, per int) []string {
	f.t.Helper()
	var names []string
	var prev []byte
	for i := 0; i < len(msgs); i += per {
		seg, manifest := writeSegment(f.t, st, signer, name, msgs[i:min(i+per, len(msgs))], prev)
		names = append(names, seg)
		prev = manifest
	}
	return names
}

// writeSegment does what the rotator's archiveSegment does: build, upload
// segment and manifest, sign a checkpoint over the manifest, upload it.
func writeSegment(t *testing.T, st *archive.Store, signer *keyring.Signer, name string, msgs []archive.Message, prev []byte) (string, []byte) {
	t.Helper()
	ctx := t.Context()
	now := time.Now()
	b, err := archive.Build(name, msgs, prev, now)
	if err != nil {
		t.Fatal(err)
	}
	m := b.Manifest
	manifest, err := json.Marshal(m, json.Deterministic(true))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, archive.SegmentKey(name, m.Name), b.Segment, "application/zstd"); err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, archive.ManifestKey(name, m.Name), manifest, "application/json"); err != nil {
		t.Fatal(err)
	}
	putCheckpoint(t, st, signer, name, m, manifest, now)
	return m.Name, manifest
}

func putCheckpoint(t *testing.T, st *archive.Store, signer *keyring.Signer, name string, m archive.Manifest, manifest []byte, now time.Time) {
	t.Helper()
	cp := archive.Checkpoint{V: 1, Stream: name, Name: m.Name, First: m.First, Last: m.Last, ManifestSHA256: archive.Digest(manifest), SegmentSHA256: m.SegmentSHA256, Prev: m.Prev, SignedAt: now.UTC().Format(archive.TimeFormat)}
	payload, err := json.Marshal(cp, json.Deterministic(true))
	if err != nil {
		t.Fatal(err)
	}
	env, err := signer.SignAt(t.Context(), now, archive.CheckpointType, payload)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(t.Context(), archive.CheckpointKey(name, m.Name), env, "application/json"); err != nil {
		t.Fatal(err)
	}
}

// tombstone replaces a segment by its tombstone, as retention does.
func tombstone(t *testing.T, st *archive.Store, name, seg string) {
	t.Helper()
	ctx := t.Context()
	man, err := st.Get(ctx, archive.ManifestKey(name, seg))
	if err != nil {
		t.Fatal(err)
	}
	cp, err := st.Get(ctx, archive.CheckpointKey(name, seg))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(archive.Tombstone{V: 1, Name: seg, Manifest: string(man), Checkpoint: string(cp), DeletedAt: time.Now().UTC().Format(archive.TimeFormat), EventID: "01JDTOMBSTONE0000000000000"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, archive.TombstoneKey(name, seg), raw, "application/json"); err != nil {
		t.Fatal(err)
	}
	removeSegment(t, st, name, seg)
}

func removeSegment(t *testing.T, st *archive.Store, name, seg string) {
	t.Helper()
	for _, k := range []string{archive.SegmentKey(name, seg), archive.ManifestKey(name, seg), archive.CheckpointKey(name, seg)} {
		if err := st.Delete(t.Context(), k); err != nil {
			t.Fatal(err)
		}
	}
}

func rewrite(t *testing.T, st *archive.Store, key string, change func([]byte) []byte) {
	t.Helper()
	b, err := st.Get(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(t.Context(), key, change(b), "application/octet-stream"); err != nil {
		t.Fatal(err)
	}
}

func (f *archiveFixture) exportKeys() string {
	f.t.Helper()
	b, err := json.Marshal(keyring.Export(f.keys, time.Now()))
	if err != nil {
		f.t.Fatal(err)
	}
	p := filepath.Join(f.t.TempDir(), "keys.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		f.t.Fatal(err)
	}
	return p
}

func TestArchiveVerify(t *testing.T) {
	f := newArchiveFixture(t, 0)
	st, names := f.write(2)
	if len(names) < 4 {
		t.Fatalf("fixture: %d segments", len(names))
	}
	r := runCLI(t, f.env, "archive", "verify")
	if r.code != ExitOK || !strings.Contains(r.stdout, "ok: archive "+st.URL+" verifies") ||
		!strings.Contains(r.stdout, fmt.Sprintf("LEDGER: %d segments, 0 tombstones, %d messages, 12 entries, 2 chains", len(names), len(f.ledger))) ||
		!strings.Contains(r.stdout, "with the hot stream: 2 chains, 12 entries") ||
		!strings.Contains(r.stdout, "ATTEST: 1 segments, 0 tombstones, 2 messages") {
		t.Fatalf("verify: %+v", r)
	}
	r = runCLI(t, f.env, "archive", "verify", "--stream", "ATTEST", "--json")
	var got archiveResult
	if err := json.Unmarshal([]byte(r.stdout), &got); r.code != ExitOK || err != nil || got.Stream != stream.Attest || !got.OK || got.Messages != 2 || got.URL != st.URL {
		t.Fatalf("verify --stream ATTEST --json: %+v (%v)", r, err)
	}
	keys := f.exportKeys()
	r = runCLI(t, f.env, "archive", "verify", "--offline", "--keys", keys, "--url", st.URL)
	if r.code != ExitOK || strings.Contains(r.stdout, "hot stream") || !strings.Contains(r.stdout, "ok: archive") {
		t.Fatalf("verify --offline: %+v", r)
	}
	for _, args := range [][]string{
		{"archive", "verify", "--offline"},
		{"archive", "verify", "--stream", "INTAKE"},
		{"archive", "verify", "--retention", "-1h"},
		{"archive", "restore", "--session", "../x"},
		{"ledger", "verify", "--url", st.URL},
		{"ledger", "verify", "--archive", "--stream", "COPY"},
		{"ledger", "verify", "--archive", "--session", "nosuch"},
	} {
		if r := runCLI(t, f.env, args...); r.code != ExitError {
			t.Errorf("%v: %+v, want exit %d", args, r, ExitError)
		}
	}
}

func TestArchiveVerifyFindsTampering(t *testing.T) {
	f := newArchiveFixture(t, 0)
	other := keyring.Dir{Path: t.TempDir()}
	stranger, err := other.Generate("v9", keyring.ECDSA, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	strangerSigner, err := keyring.NewSigner([]schemas.Key{stranger}, other, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	keys := f.exportKeys()
	tests := []struct {
		name   string
		tamper func(st *archive.Store, names []string) string // returns the segment to be named
		want   string
	}{
		{"segment byte changed", func(st *archive.Store, names []string) string {
			rewrite(t, st, archive.SegmentKey(stream.Ledger, names[1]), func(b []byte) []byte { b[len(b)/2] ^= 0x40; return b })
			return names[1]
		}, "segment digest does not match the manifest"},
		{"middle segment removed", func(st *archive.Store, names []string) string {
			removeSegment(t, st, stream.Ledger, names[1])
			return names[2]
		}, "(a segment was removed)"},
		{"manifest edited", func(st *archive.Store, names []string) string {
			rewrite(t, st, archive.ManifestKey(stream.Ledger, names[2]), func(b []byte) []byte {
				return bytes.Replace(b, []byte(`"compression":"`), []byte(`"compression":"x`), 1)
			})
			return names[2]
		}, "manifest digest does not match the checkpoint (the manifest was edited)"},
		{"checkpoint by an unregistered key", func(st *archive.Store, names []string) string {
			man, err := st.Get(t.Context(), archive.ManifestKey(stream.Ledger, names[0]))
			if err != nil {
				t.Fatal(err)
			}
			var m archive.Manifest
			if err := json.Unmarshal(man, &m); err != nil {
				t.Fatal(err)
			}
			putCheckpoint(t, st, strangerSigner, stream.Ledger, m, man, time.Now())
			return names[0]
		}, `signature by unknown key "v9"`},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.dataDir = filepath.Join(t.TempDir(), fmt.Sprint(i))
			st, names := f.write(2)
			seg := tt.tamper(st, names)
			want := fmt.Sprintf("FAIL LEDGER/%s: ", seg)
			for _, args := range [][]string{{"--url", st.URL}, {"--url", st.URL, "--offline", "--keys", keys}} {
				r := runCLI(t, f.env, append([]string{"archive", "verify"}, args...)...)
				if r.code != ExitFault || !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, tt.want) || !strings.Contains(r.stdout, "problems in archive "+st.URL) {
					t.Fatalf("verify %v: %+v, want exit %d and %q ... %q", args, r, ExitFault, want, tt.want)
				}
			}
			if tt.name == "segment byte changed" {
				// The ledger as a whole no longer verifies either.
				if r := runCLI(t, f.env, "ledger", "verify", "--archive", "--url", st.URL); r.code != ExitFault || !strings.Contains(r.stdout, want) {
					t.Fatalf("ledger verify --archive: %+v", r)
				}
			}
		})
	}
}

func TestArchiveVerifyRejectsBadURLs(t *testing.T) {
	f := newArchiveFixture(t, 0)
	plain := filepath.Join(t.TempDir(), "plain")
	if err := os.WriteFile(plain, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := archive.DefaultURL(t.TempDir())
	if err := os.MkdirAll(strings.TrimPrefix(empty, "file://"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ url, want string }{
		{"ftp://x", "unsupported scheme"},
		{"file://" + plain + "/archive", "not a directory"},
		{"file://" + filepath.Join(t.TempDir(), "missing"), "no such directory"},
		{empty, "holds nothing"},
		{"no-scheme", "want file:///dir"},
	} {
		for _, cmd := range [][]string{{"archive", "verify"}, {"archive", "restore"}, {"ledger", "verify", "--archive"}} {
			if tt.want == "holds nothing" && cmd[0] != "archive" || tt.want == "holds nothing" && cmd[1] == "restore" {
				continue // an empty archive is not an error there
			}
			r := runCLI(t, f.env, append(cmd, "--url", tt.url)...)
			if r.code != ExitError || !strings.Contains(r.stderr, tt.url) || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("%v --url %s: %+v, want exit %d naming the URL and %q", cmd, tt.url, r, ExitError, tt.want)
			}
		}
	}
	// Before the rotator's first segment, the ledger verifies from the hot stream alone.
	if r := runCLI(t, f.env, "ledger", "verify", "--archive", "--url", empty); r.code != ExitOK || !strings.Contains(r.stderr, "holds no LEDGER segment yet") {
		t.Errorf("ledger verify --archive on an empty archive: %+v", r)
	}
	if r := runCLI(t, f.env, "archive", "restore", "--url", empty); r.code != ExitOK || !strings.Contains(r.stdout, "nothing to restore") {
		t.Errorf("restore from an empty archive: %+v", r)
	}
}

func TestArchiveRestore(t *testing.T) {
	f := newArchiveFixture(t, 0)
	st, _ := f.write(2)
	ctx := t.Context()
	if r := runCLI(t, f.env, "ledger", "verify", "--archive"); r.code != ExitOK || !strings.Contains(r.stdout, "ok: 2 chains, 12 entries across the archive") {
		t.Fatalf("ledger verify --archive: %+v", r)
	}
	if r := runCLI(t, f.env, "archive", "restore", "--yes"); r.code != ExitOK || !strings.Contains(r.stdout, "nothing to restore") {
		t.Fatalf("restore with nothing lost: %+v", r)
	}
	l, err := f.js.Stream(ctx, stream.Ledger)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Purge(ctx, jetstream.WithPurgeSubject(subject.Ledger("sess-b"))); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, f.env, "ledger", "verify", "--archive", "--url", st.URL)
	if r.code != ExitFault || !strings.Contains(r.stdout, "FAIL session sess-b: no entry left in the hot stream") || strings.Contains(r.stdout, "sess-a") {
		t.Fatalf("ledger verify --archive after the loss: %+v", r)
	}
	if r := runCLI(t, f.env, "ledger", "verify", "--archive", "--session", "sess-a"); r.code != ExitOK || !strings.Contains(r.stdout, "ok: session sess-a") {
		t.Fatalf("ledger verify --archive --session sess-a: %+v", r)
	}
	if r := runCLI(t, f.env, "ledger", "verify", "--archive", "--session", "sess-b"); r.code != ExitFault {
		t.Fatalf("ledger verify --archive --session sess-b: %+v", r)
	}
	r = runCLI(t, f.env, "archive", "restore")
	if r.code != ExitOK || !strings.Contains(r.stdout, "would restore 1 chains") || !strings.Contains(r.stdout, "sess-b: 4 messages, entries 1..4") {
		t.Fatalf("restore without --yes: %+v", r)
	}
	if r := runCLI(t, f.env, "ledger", "verify", "--archive"); r.code != ExitFault {
		t.Fatalf("restore without --yes changed the ledger: %+v", r)
	}
	r = runCLI(t, f.env, "archive", "restore", "--session", "sess-b", "--yes")
	if r.code != ExitOK || !strings.Contains(r.stdout, "restored sess-b: 4 messages") || !strings.Contains(r.stdout, "restored 1 chains, 4 messages") {
		t.Fatalf("restore: %+v", r)
	}
	if r := runCLI(t, f.env, "ledger", "verify"); r.code != ExitOK || !strings.Contains(r.stdout, "ok: 2 chains, 12 entries") {
		t.Fatalf("ledger verify after restore: %+v", r)
	}
	if r := runCLI(t, f.env, "ledger", "verify", "--archive"); r.code != ExitOK {
		t.Fatalf("ledger verify --archive after restore: %+v", r)
	}
	if r := runCLI(t, f.env, "archive", "restore", "--yes"); r.code != ExitOK || !strings.Contains(r.stdout, "nothing to restore") {
		t.Fatalf("second restore: %+v", r)
	}
}

// A lost chain whose first archived segment retention deleted is restored
// from its tombstone's head on, and anchored there for `ledger verify`.
func TestArchiveRestoreAnchorsAChainRetentionShortened(t *testing.T) {
	f := newArchiveFixture(t, 400*24*time.Hour)
	st, names := f.write(2)
	ctx := t.Context()
	tombstone(t, st, stream.Ledger, names[0]) // round 1: sess-a 1..2, sess-b 1
	if r := runCLI(t, f.env, "archive", "verify", "--stream", "LEDGER"); r.code != ExitOK || !strings.Contains(r.stdout, "1 tombstones") {
		t.Fatalf("verify with a tombstone: %+v", r)
	}
	if r := runCLI(t, f.env, "archive", "verify", "--stream", "LEDGER", "--retention", "500h0m0s"); r.code != ExitOK {
		t.Fatalf("verify with a shorter retention: %+v", r)
	}
	if r := runCLI(t, f.env, "archive", "verify", "--stream", "LEDGER", "--retention", fmt.Sprint(500*24*time.Hour)); r.code != ExitFault || !strings.Contains(r.stdout, "deleted before its retention period") {
		t.Fatalf("verify with a longer retention: %+v", r)
	}
	l, err := f.js.Stream(ctx, stream.Ledger)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Purge(ctx, jetstream.WithPurgeSubject(subject.Ledger("sess-b"))); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, f.env, "ledger", "verify", "--archive"); r.code != ExitFault || !strings.Contains(r.stdout, "FAIL session sess-b") {
		t.Fatalf("ledger verify --archive after the loss: %+v", r)
	}
	r := runCLI(t, f.env, "archive", "restore", "--yes")
	if r.code != ExitOK || !strings.Contains(r.stdout, "restored sess-b: 3 messages, entries 2..4") || !strings.Contains(r.stdout, "anchored after entry 1") {
		t.Fatalf("restore: %+v", r)
	}
	an, _, ok, err := ledger.NewAnchors(f.js).Get(ctx, "sess-b")
	if err != nil || !ok || len(an.Starts) != 1 || an.Starts[0].N != 1 {
		t.Fatalf("anchor: %+v %v %v", an, ok, err)
	}
	if r := runCLI(t, f.env, "ledger", "verify", "--session", "sess-b"); r.code != ExitOK {
		t.Fatalf("ledger verify after restore: %+v", r)
	}
	if r := runCLI(t, f.env, "ledger", "verify", "--archive"); r.code != ExitOK {
		t.Fatalf("ledger verify --archive after restore: %+v", r)
	}
}

// A tampered archive is never restored from.
func TestArchiveRestoreRefusesATamperedArchive(t *testing.T) {
	f := newArchiveFixture(t, 0)
	st, names := f.write(2)
	l, err := f.js.Stream(t.Context(), stream.Ledger)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Purge(t.Context(), jetstream.WithPurgeSubject(subject.Ledger("sess-b"))); err != nil {
		t.Fatal(err)
	}
	rewrite(t, st, archive.SegmentKey(stream.Ledger, names[1]), func(b []byte) []byte { b[len(b)/2] ^= 0x40; return b })
	r := runCLI(t, f.env, "archive", "restore", "--yes")
	if r.code != ExitFault || !strings.Contains(r.stdout, "FAIL LEDGER/"+names[1]) || !strings.Contains(r.stderr, "refusing to restore") {
		t.Fatalf("restore from a tampered archive: %+v", r)
	}
	if _, err := l.GetLastMsgForSubject(t.Context(), subject.Ledger("sess-b")); err == nil {
		t.Fatal("something was restored")
	}
}

func TestCheckChainArg(t *testing.T) {
	for _, tt := range []struct {
		arg string
		ok  bool
	}{
		{"sess-a", true}, {schemas.RejectedChain, true}, {schemas.RotatorChain, true},
		{"_other", false}, {"../x", false}, {"", false},
	} {
		if err := checkChainArg(tt.arg); (err == nil) != tt.ok {
			t.Errorf("checkChainArg(%q) = %v, want ok %v", tt.arg, err, tt.ok)
		}
	}
}

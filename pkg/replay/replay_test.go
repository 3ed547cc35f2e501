package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/archive"
	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/schemas"
)

// t0 is the fixture's first ingestion time; round r of appends is
// ingested r minutes after it.
var t0 = time.Now().UTC().Add(-2 * time.Hour).Truncate(time.Minute)

type fixture struct {
	js  jetstream.JetStream
	app *ledger.Appender
	n   int
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	s := natstest.RunServer(t)
	_, js := natstest.Connect(t, s.ClientURL())
	natstest.Bootstrap(t, js, nil)
	return &fixture{js: js, app: ledger.NewAppender(js, ledger.AppenderConfig{})}
}

// round appends one block of k entries to chain, ingested at t0+minute.
func (f *fixture) round(t testing.TB, chainName, host string, k, minute int) {
	t.Helper()
	at := t0.Add(time.Duration(minute) * time.Minute)
	var entries []*schemas.Entry
	for range k {
		f.n++
		p := fmt.Sprintf(`{"session_id":%q,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"echo %d"}}`,
			chainName, f.n)
		ts := at.Format(time.RFC3339Nano)
		entries = append(entries, &schemas.Entry{V: 1, Kind: schemas.EntryEvent, Chain: chainName, SessionID: chainName,
			EventID: fmt.Sprintf("01JD%022d", f.n), HookEvent: "PostToolUse", ToolName: "Bash", Host: host,
			IngestedAt: ts, ReceivedAt: ts, Payload: &p, PayloadDigest: "sha256:" + strings.Repeat("0", 64), PayloadSize: len(p),
			Bundle: "test"})
	}
	if _, err := f.app.Append(t.Context(), chainName, entries); err != nil {
		t.Fatal(err)
	}
}

// standard fills ten rounds: sess-a on host h1 (two entries a round),
// sess-b on h2 (one).
func (f *fixture) standard(t *testing.T) {
	t.Helper()
	for m := range 10 {
		f.round(t, "sess-a", "h1", 2, m)
		f.round(t, "sess-b", "h2", 1, m)
	}
}

type got struct {
	Pos    string
	Chain  string
	N      uint64
	Check  Check
	Source Source
}

func collect(t *testing.T, cfg Config) ([]got, [][]byte, *Summary) {
	t.Helper()
	var out []got
	var raws [][]byte
	sum, err := Run(t.Context(), cfg, func(r *Record) error {
		out = append(out, got{r.Pos.String(), r.Chain, r.Head.N, r.Check, r.Source})
		raws = append(raws, bytes.Clone(r.Raw))
		return nil
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	for i := 1; i < len(out); i++ {
		a, _ := ParsePos(out[i-1].Pos)
		b, _ := ParsePos(out[i].Pos)
		if !a.Less(b) {
			t.Fatalf("not in ledger order: %s then %s", out[i-1].Pos, out[i].Pos)
		}
	}
	return out, raws, sum
}

func TestRunWindowAndFilters(t *testing.T) {
	f := newFixture(t)
	f.standard(t)
	all, _, sum := collect(t, Config{JS: f.js})
	if len(all) != 30 || sum.Read != 30 || len(sum.Faults) != 0 || sum.Starts["genesis"] != 2 {
		t.Fatalf("everything: %d records, %+v", len(all), sum)
	}
	for _, g := range all {
		if g.Check != CheckOK || g.Source != SourceHot {
			t.Fatalf("everything: %+v", g)
		}
	}
	tests := []struct {
		name      string
		cfg       Config
		want      int
		wantChain string
		wantFirst uint64 // n of sess-a's first entry in the window
	}{
		{"since", Config{Window: Window{Since: t0.Add(5 * time.Minute)}}, 15, "", 11},
		{"since until", Config{Window: Window{Since: t0.Add(2 * time.Minute), Until: t0.Add(4 * time.Minute)}}, 6, "", 5},
		{"host", Config{Filter: Filter{Host: "h2"}}, 10, "sess-b", 0},
		{"session", Config{Filter: Filter{Session: "sess-a"}, Window: Window{Since: t0.Add(9 * time.Minute)}}, 2, "sess-a", 19},
		{"kind", Config{Filter: Filter{Kind: "PostToolUse"}}, 30, "", 1},
		{"other kind", Config{Filter: Filter{Kind: "verdict"}}, 0, "", 0},
		{"unknown host", Config{Filter: Filter{Host: "nosuch"}}, 0, "", 0},
		{"future", Config{Window: Window{Since: time.Now().Add(time.Hour)}}, 0, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.JS = f.js
			recs, _, sum := collect(t, tt.cfg)
			if len(recs) != tt.want || sum.Emitted != tt.want || len(sum.Faults) != 0 {
				t.Fatalf("%d records (%+v), want %d", len(recs), sum, tt.want)
			}
			for _, r := range recs {
				// A window that starts mid-chain is anchored at the
				// predecessor in the hot stream: still "ok".
				if r.Check != CheckOK {
					t.Fatalf("%+v", r)
				}
				if tt.wantChain != "" && r.Chain != tt.wantChain {
					t.Fatalf("%+v: want chain %s", r, tt.wantChain)
				}
			}
			if tt.wantFirst > 0 {
				for _, r := range recs {
					if r.Chain == "sess-a" {
						if r.N != tt.wantFirst {
							t.Fatalf("sess-a starts at n=%d, want %d", r.N, tt.wantFirst)
						}
						break
					}
				}
			}
		})
	}
}

func TestRunResumesAfterAPosition(t *testing.T) {
	f := newFixture(t)
	f.standard(t)
	all, _, _ := collect(t, Config{JS: f.js})
	for _, cut := range []int{0, 1, 7, 28, 29} {
		after, _ := ParsePos(all[cut].Pos)
		rest, _, sum := collect(t, Config{JS: f.js, After: after})
		if diff := cmp.Diff(all[cut+1:], rest, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("after %s (-want +got):\n%s", after, diff)
		}
		if len(rest) > 0 && sum.LastPos != all[len(all)-1].Pos {
			t.Fatalf("last pos %q", sum.LastPos)
		}
	}
}

// copyStream makes a ledger copy "COPY" (subjects copy.<chain>) of the
// given entries of sess-a, one entry a message.
func copyStream(t *testing.T, js jetstream.JetStream, name string, entries [][]byte) {
	t.Helper()
	prefix := strings.ToLower(name)
	if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: name, Subjects: []string{prefix + ".>"}, AllowDirect: true}); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, err := js.Publish(t.Context(), prefix+".sess-a", e); err != nil {
			t.Fatal(err)
		}
	}
}

func sessA(t *testing.T, js jetstream.JetStream) [][]byte {
	t.Helper()
	var out [][]byte
	if err := ledger.NewReader(js, "").Walk(t.Context(), "sess-a", 0, func(s ledger.Stored) error {
		out = append(out, bytes.Clone(s.Raw))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRunReportsBrokenChains(t *testing.T) {
	f := newFixture(t)
	f.standard(t)
	orig := sessA(t, f.js) // 20 entries, ingested two a minute
	edit := func(i int, old, new string) func([][]byte) [][]byte {
		return func(e [][]byte) [][]byte { e[i] = bytes.Replace(e[i], []byte(old), []byte(new), 1); return e }
	}
	tests := []struct {
		name   string
		mutate func([][]byte) [][]byte
		since  time.Duration // window start after t0
		// the records wanted: n and check, in order
		want      map[uint64]Check
		wantFault string
		unanch    bool
	}{
		{"changed", edit(3, `\"echo `, `\"ECHO `), 0,
			map[uint64]Check{1: CheckOK, 3: CheckOK, 4: CheckFault, 5: CheckUnverified, 20: CheckUnverified}, "hash mismatch", false},
		{"removed", func(e [][]byte) [][]byte { return append(e[:2:2], e[3:]...) }, 0,
			map[uint64]Check{2: CheckOK, 4: CheckFault, 5: CheckUnverified}, "missing", false},
		{"not json", func(e [][]byte) [][]byte { e[5] = []byte("{not json"); return e }, 0,
			map[uint64]Check{5: CheckOK}, "not valid JSON", false},
		// Entries 1..6 are not in the copy at all: nothing vouches for the
		// link from 7 to 6.
		{"unanchored", func(e [][]byte) [][]byte { return e[6:] }, 0,
			map[uint64]Check{7: CheckUnanchored, 20: CheckUnanchored}, "", true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := fmt.Sprintf("COPY%d", i)
			copyStream(t, f.js, name, tt.mutate(append([][]byte(nil), orig...)))
			var recs []*Record
			sum, err := Run(t.Context(), Config{JS: f.js, Stream: name, Window: Window{Since: t0.Add(tt.since)}},
				func(r *Record) error {
					c := *r
					recs = append(recs, &c)
					return nil
				})
			if err != nil {
				t.Fatal(err)
			}
			byN := map[uint64]*Record{}
			for _, r := range recs {
				byN[r.Head.N] = r
			}
			for n, want := range tt.want {
				r := byN[n]
				if r == nil || r.Check != want {
					t.Fatalf("entry %d: %s, want %s (all: %d records)", n, show(r), want, len(recs))
				}
			}
			if tt.wantFault != "" {
				if len(sum.Faults) == 0 || !strings.Contains(sum.Faults[0].Reason, tt.wantFault) {
					t.Fatalf("faults %+v, want %q", sum.Faults, tt.wantFault)
				}
			} else if len(sum.Faults) != 0 {
				t.Fatalf("faults %+v", sum.Faults)
			}
			if tt.unanch != (len(sum.Unanchored) == 1) {
				t.Fatalf("unanchored %v", sum.Unanchored)
			}
		})
	}
}

// archiveFixture archives every LEDGER message in segments of per
// messages, signed with a fresh key, as the rotator does.
func archiveAll(t *testing.T, js jetstream.JetStream, per int) (*archive.Store, *keyring.Set, []archive.Manifest) {
	t.Helper()
	ctx := t.Context()
	reg, err := keyring.OpenRegistry(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	dir := keyring.Dir{Path: filepath.Join(t.TempDir(), "keys")}
	if _, _, err := keyring.EnsureFirst(ctx, reg, dir, keyring.ECDSA, time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	keys, err := reg.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := keyring.NewSigner(keys, dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	set, err := reg.Set(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, err := archive.Open(ctx, "file://"+filepath.ToSlash(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	s, err := js.Stream(ctx, stream.Ledger)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []archive.Message
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		entries := ledger.SplitBlock(m.Data)
		var h Head
		if err := json.Unmarshal(entries[len(entries)-1], &h, json.RejectUnknownMembers(false)); err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, archive.Message{Seq: m.Sequence, Subject: m.Subject, Time: h.IngestedAt, Data: string(m.Data)})
	}
	var prev []byte
	var out []archive.Manifest
	for i := 0; i < len(msgs); i += per {
		b, err := archive.Build(stream.Ledger, msgs[i:min(i+per, len(msgs))], prev, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		m := b.Manifest
		manifest, err := json.Marshal(m, json.Deterministic(true))
		if err != nil {
			t.Fatal(err)
		}
		cp, err := json.Marshal(archive.Checkpoint{V: 1, Stream: stream.Ledger, Name: m.Name, First: m.First, Last: m.Last,
			ManifestSHA256: archive.Digest(manifest), SegmentSHA256: m.SegmentSHA256, Prev: m.Prev,
			SignedAt: time.Now().UTC().Format(archive.TimeFormat)}, json.Deterministic(true))
		if err != nil {
			t.Fatal(err)
		}
		env, err := signer.SignAt(ctx, time.Now(), archive.CheckpointType, cp)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range []struct {
			key  string
			data []byte
		}{{archive.SegmentKey(stream.Ledger, m.Name), b.Segment}, {archive.ManifestKey(stream.Ledger, m.Name), manifest},
			{archive.CheckpointKey(stream.Ledger, m.Name), env}} {
			if err := st.Put(ctx, o.key, o.data, "application/octet-stream"); err != nil {
				t.Fatal(err)
			}
		}
		prev = manifest
		out = append(out, m)
	}
	return st, set, out
}

// trim purges a chain's messages below seq from the hot stream, as the
// rotator's retention does behind the archive.
func trim(t *testing.T, js jetstream.JetStream, chainName string, below uint64) {
	t.Helper()
	s, err := js.Stream(t.Context(), stream.Ledger)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Purge(t.Context(), jetstream.WithPurgeSubject("cc.ledger."+chainName), jetstream.WithPurgeSequence(below)); err != nil {
		t.Fatal(err)
	}
}

func TestRunAcrossArchiveAndHot(t *testing.T) {
	f := newFixture(t)
	f.standard(t)
	before, beforeRaw, _ := collect(t, Config{JS: f.js})
	st, keys, segs := archiveAll(t, f.js, 6) // 20 messages: segments of 6, 6, 6, 2
	if len(segs) != 4 {
		t.Fatalf("%d segments", len(segs))
	}
	// Rounds 10..14 after archiving: hot only.
	for m := 10; m < 15; m++ {
		f.round(t, "sess-a", "h1", 2, m)
		f.round(t, "sess-b", "h2", 1, m)
	}
	hot, hotRaw, _ := collect(t, Config{JS: f.js, Window: Window{Since: t0.Add(10 * time.Minute)}})
	// Trim both chains up to the third segment's end, as retention would.
	trim(t, f.js, "sess-a", segs[2].Last+1)
	trim(t, f.js, "sess-b", segs[2].Last+1)

	cfg := Config{JS: f.js, Archive: st, Keys: keys}
	recs, raws, sum := collect(t, cfg)
	want := append(append([]got(nil), before...), collectPlain(hot)...)
	for i := range want {
		if i < len(before) {
			want[i].Source = SourceArchive
		}
	}
	if diff := cmp.Diff(want, recs); diff != "" {
		t.Fatalf("archive + hot (-want +got):\n%s\n%+v", diff, sum)
	}
	if !equalRaws(append(beforeRaw, hotRaw...), raws) {
		t.Fatal("entries read across the archive differ from the ones read hot before the trim")
	}
	if sum.Segments != 4 || sum.FromArchive != 30 || sum.FromHot != 15 || len(sum.Gaps) != 0 {
		t.Fatalf("summary %+v", sum)
	}

	// A window inside the archive, starting mid-chain: anchored by the
	// previous segment's signed manifest.
	cfg.Window = Window{Since: t0.Add(4 * time.Minute), Until: t0.Add(7 * time.Minute)}
	recs, _, sum = collect(t, cfg)
	if len(recs) != 9 || sum.Starts["archive"] != 2 || len(sum.Unanchored) != 0 {
		t.Fatalf("%d records, %+v", len(recs), sum)
	}
	for _, r := range recs {
		if r.Check != CheckOK || r.Source != SourceArchive {
			t.Fatalf("%+v", r)
		}
	}
	// The same window without the archive: the trimmed entries are gone,
	// and what is left (the last segment's rounds) is still anchored by the
	// hot predecessor.
	recs, _, _ = collect(t, Config{JS: f.js, Window: cfg.Window})
	if len(recs) >= 9 {
		t.Fatalf("%d records read hot after the trim", len(recs))
	}

	// A segment whose object was replaced: reported, and the replay goes
	// on from the hot stream (whatever retention left there).
	if err := st.Put(t.Context(), archive.SegmentKey(stream.Ledger, segs[1].Name), []byte("garbage"), "application/zstd"); err != nil {
		t.Fatal(err)
	}
	_, _, sum = collect(t, Config{JS: f.js, Archive: st, Keys: keys})
	if len(sum.Gaps) != 1 || !strings.Contains(sum.Gaps[0], segs[1].Name+" does not verify") {
		t.Fatalf("gaps %v", sum.Gaps)
	}
}

func collectPlain(g []got) []got { return append([]got(nil), g...) }

func equalRaws(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

func TestRunFollowTailsNewEntries(t *testing.T) {
	f := newFixture(t)
	f.round(t, "sess-a", "h1", 2, 0)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var mu sync.Mutex
	var seen []uint64
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, Config{JS: f.js, Follow: true}, func(r *Record) error {
			mu.Lock()
			defer mu.Unlock()
			if r.Check != CheckOK {
				return fmt.Errorf("%+v", r)
			}
			seen = append(seen, r.Head.N)
			return nil
		})
		done <- err
	}()
	count := func(want int) func() error {
		return func() error {
			mu.Lock()
			defer mu.Unlock()
			if len(seen) != want {
				return fmt.Errorf("%d entries seen, want %d", len(seen), want)
			}
			return nil
		}
	}
	natstest.Eventually(t, 10*time.Second, count(2))
	f.round(t, "sess-a", "h1", 3, 1)
	natstest.Eventually(t, 10*time.Second, count(5))
	cancel()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("follow did not stop with its context")
	}
	if diff := cmp.Diff([]uint64{1, 2, 3, 4, 5}, seen); diff != "" {
		t.Fatal(diff)
	}
}

func TestRunRefusesBadConfig(t *testing.T) {
	f := newFixture(t)
	now := time.Now()
	for _, tt := range []struct {
		cfg  Config
		want string
	}{
		{Config{Window: Window{Since: now, Until: now.Add(-time.Hour)}}, "--until"},
		{Config{Filter: Filter{Kind: "nope"}}, "--kind"},
		{Config{Archive: &archive.Store{}}, "key set"},
		{Config{Stream: "NOSUCH"}, "NOSUCH"},
	} {
		tt.cfg.JS = f.js
		_, err := Run(t.Context(), tt.cfg, func(*Record) error { return nil })
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.cfg, err, tt.want)
		}
	}
}

func show(r *Record) string {
	if r == nil {
		return "none"
	}
	return fmt.Sprintf("%s n=%d %s %s (%s)", r.Pos, r.Head.N, r.Source, r.Check, r.Reason)
}

// sealed builds entries from..to of chain, each ingested at at, linked to
// prev (the hash of entry from-1).
func sealed(t *testing.T, chainName string, from, to int, prev string, at time.Time) ([][]byte, string) {
	t.Helper()
	var out [][]byte
	for n := from; n <= to; n++ {
		p := fmt.Sprintf(`{"session_id":%q,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"echo %d"}}`, chainName, n)
		e := &schemas.Entry{V: 1, Kind: schemas.EntryEvent, Chain: chainName, SessionID: chainName, N: uint64(n), PrevHash: prev,
			EventID: fmt.Sprintf("01JE%022d", n), HookEvent: "PostToolUse", ToolName: "Bash", Host: "h1",
			IngestedAt: at.UTC().Format(time.RFC3339Nano), Payload: &p, PayloadDigest: "sha256:" + strings.Repeat("0", 64),
			PayloadSize: len(p), Bundle: "test"}
		raw, err := chain.Seal(e)
		if err != nil {
			t.Fatal(err)
		}
		out, prev = append(out, raw), e.Hash
	}
	return out, prev
}

// TestRunAnchorsMidChainStarts starts the hot read at entry 7 of a chain
// (the window begins after entries 1..6 were stored) and checks how its
// link to entry 6 is established: the predecessor in the hot stream, the
// rotator's anchor, or nothing.
func TestRunAnchorsMidChainStarts(t *testing.T) {
	f := newFixture(t)
	early := time.Now().Add(-time.Minute)
	tests := []struct {
		name       string
		before     bool // entries 1..6 stored before the window
		edit       bool // entry 6 changed after it was sealed
		anchor     bool
		want       Check
		wantStart  string
		wantReason string
	}{
		{"hot predecessor", true, false, false, CheckOK, "hot", ""},
		{"hot predecessor edited", true, true, false, CheckFault, "hot", "does not match"},
		{"hot predecessor missing, rotator anchor", false, false, true, CheckOK, "anchor", ""},
		{"nothing before", false, false, false, CheckUnanchored, "unanchored", "could not be checked"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := fmt.Sprintf("MID%d", i)
			chainName := fmt.Sprintf("sess-m%d", i)
			b, hash6 := sealed(t, chainName, 1, 6, digest.Zero, early)
			if tt.edit {
				b[5] = bytes.Replace(b[5], []byte(`\"echo 6`), []byte(`\"ECHO 6`), 1)
			}
			if !tt.before {
				b = nil
			}
			copyStreamChain(t, f.js, name, chainName, b)
			if tt.anchor {
				if err := ledger.NewAnchors(f.js).Put(t.Context(), ledger.Anchor{Chain: chainName,
					Starts: []ledger.Start{{N: 6, Hash: hash6}}, At: early.Format(time.RFC3339)}, 0); err != nil {
					t.Fatal(err)
				}
			}
			since := time.Now()
			natstest.Eventually(t, 5*time.Second, func() error {
				if !time.Now().After(since) {
					return errors.New("clock has not moved")
				}
				return nil
			})
			later, _ := sealed(t, chainName, 7, 9, hash6, time.Now())
			copyStreamChain(t, f.js, name, chainName, later)
			var recs []Record
			sum, err := Run(t.Context(), Config{JS: f.js, Stream: name, Anchors: ledger.NewAnchors(f.js),
				Window: Window{Since: since}, Slack: time.Nanosecond}, func(r *Record) error {
				recs = append(recs, *r)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != 3 || recs[0].Head.N != 7 || sum.Read != 3 || sum.Starts[tt.wantStart] != 1 {
				t.Fatalf("%d records, first %s; %+v", len(recs), show(&recs[0]), sum)
			}
			if recs[0].Check != tt.want || !strings.Contains(recs[0].Reason, tt.wantReason) {
				t.Fatalf("entry 7: %s, want %s (%s)", show(&recs[0]), tt.want, tt.wantReason)
			}
		})
	}
}

func copyStreamChain(t *testing.T, js jetstream.JetStream, name, chainName string, entries [][]byte) {
	t.Helper()
	prefix := strings.ToLower(name)
	if _, err := js.CreateOrUpdateStream(t.Context(),
		jetstream.StreamConfig{Name: name, Subjects: []string{prefix + ".>"}, AllowDirect: true}); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, err := js.Publish(t.Context(), prefix+"."+chainName, e); err != nil {
			t.Fatal(err)
		}
	}
}

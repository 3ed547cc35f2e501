package archive_test

import (
	"bytes"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/archive"
	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/schemas"
)

var t0 = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

// fixture writes three LEDGER segments of two chains, as the rotator does.
type fixture struct {
	store  *archive.Store
	keys   *keyring.Set
	signer *keyring.Signer
	names  []string
	msgs   []archive.Message
}

func ledgerMsgs(t testing.TB, n int) []archive.Message {
	t.Helper()
	prev := map[string]string{}
	pos := map[string]uint64{}
	var out []archive.Message
	for i := range n {
		c := fmt.Sprintf("c%d", i%2)
		p := fmt.Sprintf(`{"i":%d}`, i)
		if prev[c] == "" {
			prev[c] = digest.Zero
		}
		pos[c]++
		at := t0.Add(time.Duration(i) * time.Hour).Format(time.RFC3339Nano)
		e := &schemas.Entry{V: 1, N: pos[c], PrevHash: prev[c], Kind: schemas.EntryEvent, Chain: c, SessionID: c, EventID: fmt.Sprintf("01JD%022d", i),
			HookEvent: "PostToolUse", IngestedAt: at, ReceivedAt: at, Payload: &p, PayloadDigest: digest.SHA256([]byte(p)), PayloadSize: len(p), Bundle: "t"}
		raw, err := chain.Seal(e)
		if err != nil {
			t.Fatal(err)
		}
		prev[c] = e.Hash
		out = append(out, archive.Message{Seq: uint64(i + 1), Subject: "cc.ledger." + c, Time: at, Data: string(raw)})
	}
	return out
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	st, err := archive.Open(t.Context(), (&url.URL{Scheme: "file", Path: filepath.Join(dir, "a")}).String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	kd := keyring.Dir{Path: filepath.Join(dir, "keys")}
	k, err := kd.Generate("v1", keyring.ECDSA, t0)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := keyring.NewSigner([]schemas.Key{k}, kd, t0)
	if err != nil {
		t.Fatal(err)
	}
	set, err := keyring.NewSet([]schemas.Key{k})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{store: st, keys: set, signer: signer, msgs: ledgerMsgs(t, 30)}
	var prev []byte
	for _, r := range [][2]int{{0, 10}, {10, 20}, {20, 30}} {
		prev = f.put(t, f.signer, f.msgs[r[0]:r[1]], prev)
	}
	return f
}

func (f *fixture) put(t *testing.T, signer *keyring.Signer, msgs []archive.Message, prev []byte) []byte {
	t.Helper()
	b, err := archive.Build("LEDGER", msgs, prev, t0)
	if err != nil {
		t.Fatal(err)
	}
	m := b.Manifest
	man, _ := json.Marshal(m, json.Deterministic(true))
	cp, _ := json.Marshal(archive.Checkpoint{V: 1, Stream: "LEDGER", Name: m.Name, First: m.First, Last: m.Last, ManifestSHA256: archive.Digest(man),
		SegmentSHA256: m.SegmentSHA256, Prev: m.Prev, SignedAt: t0.Format(archive.TimeFormat)}, json.Deterministic(true))
	env, err := signer.SignAt(t.Context(), t0, archive.CheckpointType, cp)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string][]byte{archive.SegmentKey("LEDGER", m.Name): b.Segment, archive.ManifestKey("LEDGER", m.Name): man, archive.CheckpointKey("LEDGER", m.Name): env} {
		if err := f.store.Put(t.Context(), k, v, ""); err != nil {
			t.Fatal(err)
		}
	}
	f.names = append(f.names, m.Name)
	return man
}

func (f *fixture) verify(t *testing.T) *archive.Report {
	t.Helper()
	r, err := archive.Verify(t.Context(), f.store, "LEDGER", archive.Options{Keys: f.keys, Now: t0.Add(400 * 24 * time.Hour), Retention: 365 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestIntactArchiveVerifies(t *testing.T) {
	f := newFixture(t)
	r := f.verify(t)
	if !r.OK() || r.Segments != 3 || r.Messages != 30 || r.Entries != 30 || r.Last != 30 {
		t.Fatalf("report %+v", r)
	}
	if h := r.Heads["c1"]; h.N != 15 || h.Seq != 30 {
		t.Fatalf("head of c1: %+v", h)
	}
}

// Each tampering is reported, naming the segment and the reason.
func TestTamperingIsNamed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tamper  func(t *testing.T, f *fixture)
		segment int
		want    string
	}{
		{"a byte changed in a segment", func(t *testing.T, f *fixture) {
			k := archive.SegmentKey("LEDGER", f.names[1])
			b, _ := f.store.Get(t.Context(), k)
			b[len(b)/2] ^= 0x01
			_ = f.store.Put(t.Context(), k, b, "")
		}, 1, "segment digest does not match"},
		{"a segment removed", func(t *testing.T, f *fixture) {
			for _, k := range []string{archive.SegmentKey("LEDGER", f.names[1]), archive.ManifestKey("LEDGER", f.names[1]), archive.CheckpointKey("LEDGER", f.names[1])} {
				_ = f.store.Delete(t.Context(), k)
			}
		}, 2, "sequences 11..20 are missing"},
		{"a manifest edited", func(t *testing.T, f *fixture) {
			k := archive.ManifestKey("LEDGER", f.names[1])
			b, _ := f.store.Get(t.Context(), k)
			_ = f.store.Put(t.Context(), k, bytes.Replace(b, []byte(`"messages":10`), []byte(`"messages":9`), 1), "")
		}, 1, "manifest digest does not match the checkpoint"},
		{"a checkpoint signed by an unknown key", func(t *testing.T, f *fixture) {
			kd := keyring.Dir{Path: filepath.Join(t.TempDir(), "rogue")}
			k, _ := kd.Generate("v9", keyring.ECDSA, t0)
			rogue, _ := keyring.NewSigner([]schemas.Key{k}, kd, t0)
			man, _ := f.store.Get(t.Context(), archive.ManifestKey("LEDGER", f.names[1]))
			var m archive.Manifest
			_ = json.Unmarshal(man, &m)
			cp, _ := json.Marshal(archive.Checkpoint{V: 1, Stream: "LEDGER", Name: m.Name, First: m.First, Last: m.Last, ManifestSHA256: archive.Digest(man), SegmentSHA256: m.SegmentSHA256, Prev: m.Prev, SignedAt: t0.Format(archive.TimeFormat)})
			env, _ := rogue.SignAt(t.Context(), t0, archive.CheckpointType, cp)
			_ = f.store.Put(t.Context(), archive.CheckpointKey("LEDGER", f.names[1]), env, "")
		}, 1, "unknown key"},
		{"a checkpoint removed", func(t *testing.T, f *fixture) {
			_ = f.store.Delete(t.Context(), archive.CheckpointKey("LEDGER", f.names[0]))
		}, 0, "no checkpoint"},
		{"a segment replaced by a consistent forgery", func(t *testing.T, f *fixture) {
			// Rebuilt with other content: digests match its own manifest,
			// but the checkpoint pins the original manifest.
			forged := ledgerMsgs(t, 30)[10:20]
			forged[3].Data = strings.Replace(forged[3].Data, `\"i\":13`, `\"i\":99`, 1)
			man, _ := f.store.Get(t.Context(), archive.ManifestKey("LEDGER", f.names[0]))
			b, _ := archive.Build("LEDGER", forged, man, t0)
			nm, _ := json.Marshal(b.Manifest, json.Deterministic(true))
			_ = f.store.Put(t.Context(), archive.SegmentKey("LEDGER", f.names[1]), b.Segment, "")
			_ = f.store.Put(t.Context(), archive.ManifestKey("LEDGER", f.names[1]), nm, "")
		}, 1, "manifest digest does not match"},
		{"a foreign object", func(t *testing.T, f *fixture) {
			_ = f.store.Put(t.Context(), "LEDGER/notes.txt", []byte("hi"), "")
		}, -1, "foreign object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			tc.tamper(t, f)
			r := f.verify(t)
			if r.OK() {
				t.Fatal("tampering not detected")
			}
			p := r.Problems[0]
			if tc.segment >= 0 && p.Segment != f.names[tc.segment] || !strings.Contains(p.Reason, tc.want) {
				t.Fatalf("first problem %q: %q, want segment %d and %q (all: %v)", p.Segment, p.Reason, tc.segment, tc.want, r.Problems)
			}
		})
	}
}

// A tombstone keeps the chain of manifests verifiable after retention, but
// only for a segment past its retention.
func TestTombstones(t *testing.T) {
	f := newFixture(t)
	tomb := func(i int) {
		man, _ := f.store.Get(t.Context(), archive.ManifestKey("LEDGER", f.names[i]))
		cp, _ := f.store.Get(t.Context(), archive.CheckpointKey("LEDGER", f.names[i]))
		raw, _ := json.Marshal(archive.Tombstone{V: 1, Name: f.names[i], Manifest: string(man), Checkpoint: string(cp), DeletedAt: t0.Format(archive.TimeFormat), EventID: "x"})
		_ = f.store.Put(t.Context(), archive.TombstoneKey("LEDGER", f.names[i]), raw, "")
		for _, k := range []string{archive.SegmentKey("LEDGER", f.names[i]), archive.ManifestKey("LEDGER", f.names[i]), archive.CheckpointKey("LEDGER", f.names[i])} {
			_ = f.store.Delete(t.Context(), k)
		}
	}
	// A deletion in progress (the tombstone written, the objects not all
	// removed yet, or a crash between the two) is a deletion.
	writeTomb := func(i int) {
		man, _ := f.store.Get(t.Context(), archive.ManifestKey("LEDGER", f.names[i]))
		cp, _ := f.store.Get(t.Context(), archive.CheckpointKey("LEDGER", f.names[i]))
		raw, _ := json.Marshal(archive.Tombstone{V: 1, Name: f.names[i], Manifest: string(man), Checkpoint: string(cp), DeletedAt: t0.Format(archive.TimeFormat), EventID: "x"})
		_ = f.store.Put(t.Context(), archive.TombstoneKey("LEDGER", f.names[i]), raw, "")
	}
	writeTomb(0)
	_ = f.store.Delete(t.Context(), archive.SegmentKey("LEDGER", f.names[0]))
	if r := f.verify(t); !r.OK() || r.Tombstones != 1 || r.Segments != 2 {
		t.Fatalf("a deletion in progress: %d tombstones, %d segments, problems %v", r.Tombstones, r.Segments, r.Problems)
	}
	tomb(0)
	if r := f.verify(t); !r.OK() || r.Tombstones != 1 || r.Segments != 2 {
		t.Fatalf("after a retention deletion: %+v", r)
	}
	// Retention deletes the next segment while a verify is reading (a
	// running rotator): the segment listed whole is then gone, and its
	// tombstone stands for it.
	r, err := archive.Verify(t.Context(), f.store, "LEDGER", archive.Options{Keys: f.keys, Now: t0.Add(400 * 24 * time.Hour),
		Retention: 24 * time.Hour, Segment: func(m archive.Manifest, _ []archive.Message) error {
			if m.Name == f.names[1] {
				tomb(2)
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() || r.Tombstones != 2 || r.Segments != 1 {
		t.Fatalf("retention during a verify: %d tombstones, %d segments, problems %v", r.Tombstones, r.Segments, r.Problems)
	}
	r, err = archive.Verify(t.Context(), f.store, "LEDGER", archive.Options{Keys: f.keys, Now: t0.Add(24 * time.Hour), Retention: 365 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if r.OK() || !strings.Contains(r.Problems[0].Reason, "before its retention") {
		t.Fatalf("early deletion not reported: %v", r.Problems)
	}
}

func TestBuildRefusesGapsAndBadInput(t *testing.T) {
	msgs := ledgerMsgs(t, 5)
	if _, err := archive.Build("LEDGER", nil, nil, t0); err == nil {
		t.Error("empty segment accepted")
	}
	gap := append([]archive.Message{}, msgs[0], msgs[2])
	if _, err := archive.Build("LEDGER", gap, nil, t0); err == nil || !strings.Contains(err.Error(), "consecutive") {
		t.Errorf("gap: %v", err)
	}
	bad := append([]archive.Message{}, msgs...)
	bad[1].Data = "\xff"
	if _, err := archive.Build("LEDGER", bad, nil, t0); err == nil {
		t.Error("non-UTF-8 data accepted")
	}
	b, _ := archive.Build("LEDGER", msgs[:2], nil, t0)
	prev, _ := json.Marshal(b.Manifest)
	if _, err := archive.Build("LEDGER", msgs[3:], prev, t0); err == nil || !strings.Contains(err.Error(), "previous one ended") {
		t.Errorf("discontinuous segment: %v", err)
	}
	for _, n := range []string{"", "1-2", "00000000000000000002-00000000000000000001", "0000000000000000000x-00000000000000000001", "00000000000000000000-00000000000000000001"} {
		if _, _, err := archive.ParseName(n); err == nil {
			t.Errorf("ParseName(%q) accepted", n)
		}
	}
}

// FuzzDecode: a hostile segment object never panics and is only accepted
// with the manifest it matches.
func FuzzDecode(f *testing.F) {
	msgs := ledgerMsgs(f, 4)
	b, err := archive.Build("LEDGER", msgs, nil, t0)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b.Segment)
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd})
	f.Fuzz(func(t *testing.T, seg []byte) {
		m := b.Manifest
		m.SegmentSHA256 = archive.Digest(seg) // get past the digest to the parser
		got, err := archive.Decode(seg, m)
		if err == nil && len(got) != len(msgs) {
			t.Fatalf("accepted %d messages for a manifest of %d", len(got), len(msgs))
		}
	})
}

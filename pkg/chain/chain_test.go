package chain

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/claimcheck/claimcheck/pkg/canon"
	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/schemas"
)

func build(t testing.TB, chainName string, k int) [][]byte {
	t.Helper()
	prev := digest.Zero
	var out [][]byte
	for i := 1; i <= k; i++ {
		p := fmt.Sprintf(`{"session_id":%q,"hook_event_name":"PostToolUse","i":%d}`, chainName, i)
		e := &schemas.Entry{
			V: 1, N: uint64(i), PrevHash: prev, Kind: schemas.EntryEvent, Chain: chainName,
			EventID: fmt.Sprintf("01JD%022d", i), SessionID: chainName, HookEvent: "PostToolUse",
			IngestedAt: "2026-11-22T03:04:05.123Z", ReceivedAt: "2026-11-22T03:04:05.100Z",
			Payload: &p, PayloadDigest: digest.SHA256([]byte(p)), PayloadSize: len(p), Bundle: "test",
		}
		b, err := Seal(e)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
		prev = e.Hash
	}
	return out
}

func TestSealProducesCanonicalVerifiableEntries(t *testing.T) {
	entries := build(t, "s1", 50)
	for i, e := range entries {
		if !canon.IsCanonical(e) {
			t.Fatalf("entry %d not canonical: %s", i+1, e)
		}
	}
	if err := Verify("s1", entries); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	v := NewVerifier("s1")
	for _, e := range entries {
		if err := v.Next(e); err != nil {
			t.Fatal(err)
		}
	}
	if n, h := v.Head(); n != 50 || !digest.Valid(h) {
		t.Fatalf("head = %d %s", n, h)
	}
}

func faultAt(t *testing.T, err error) *Fault {
	t.Helper()
	var f *Fault
	if !errors.As(err, &f) || !errors.Is(err, ErrFault) {
		t.Fatalf("error %v is not a *Fault", err)
	}
	return f
}

func TestVerifyReportsFirstBadPosition(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func([][]byte) [][]byte
		wantN   uint64
		wantMsg string
	}{
		{"changed payload", func(e [][]byte) [][]byte {
			e[6] = bytes.Replace(e[6], []byte(`\"i\":7`), []byte(`\"i\":8`), 1)
			return e
		}, 7, "hash mismatch"},
		{"removed middle", func(e [][]byte) [][]byte { return append(e[:4:4], e[5:]...) }, 5, "missing"},
		{"swapped", func(e [][]byte) [][]byte { e[2], e[3] = e[3], e[2]; return e }, 3, "out of order"},
		{"repeated", func(e [][]byte) [][]byte { return append(e[:6:6], e[5:]...) }, 7, "repeated"},
		{"foreign chain", func(e [][]byte) [][]byte { return append(e[:3:3], build(t, "other", 4)[3:]...) }, 4, "prev_hash"},
		{"not canonical", func(e [][]byte) [][]byte { e[1] = append([]byte(" "), e[1]...); return e }, 2, "canonical"},
		{"garbage", func(e [][]byte) [][]byte { e[0] = []byte("{"); return e }, 1, "not valid JSON"},
		{"first entry from elsewhere", func(e [][]byte) [][]byte { return e[1:] }, 1, "missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Verify("s1", tt.mutate(build(t, "s1", 10)))
			f := faultAt(t, err)
			if f.N != tt.wantN || f.Chain != "s1" {
				t.Errorf("fault at %s:%d, want s1:%d (%v)", f.Chain, f.N, tt.wantN, err)
			}
			if !strings.Contains(f.Reason, tt.wantMsg) {
				t.Errorf("reason %q does not mention %q", f.Reason, tt.wantMsg)
			}
		})
	}
}

// sealIDs seals a chain whose entries carry the event ids given.
func sealIDs(t *testing.T, ids ...string) [][]byte {
	t.Helper()
	prev := digest.Zero
	var entries [][]byte
	for i, id := range ids {
		p := `{}`
		e := &schemas.Entry{V: 1, N: uint64(i + 1), PrevHash: prev, Kind: "event", Chain: "s", EventID: id, IngestedAt: "2026-11-22T03:04:05.123Z", Payload: &p, Bundle: "t"}
		b, err := Seal(e)
		if err != nil {
			t.Fatal(err)
		}
		entries, prev = append(entries, b), e.Hash
	}
	return entries
}

func TestVerifyDetectsEventChainedTwice(t *testing.T) {
	const u = "01JD0000000000000000000001"
	tests := []struct {
		name string
		ids  []string
		at   uint64 // 0: no fault
	}{
		{"ULID", []string{u, u, u}, 2},
		{"ULID, later", []string{"01JD0000000000000000000002", u, "7ZZZZZZZZZZZZZZZZZZZZZZZZZ", u}, 4},
		{"the largest ULID", []string{"7ZZZZZZZZZZZZZZZZZZZZZZZZZ", "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"}, 2},
		{"not a ULID", []string{"evt-1", "evt-2", "evt-1"}, 3},
		{"lower case", []string{strings.ToLower(u), strings.ToLower(u)}, 2},
		{"past 128 bits", []string{"8ZZZZZZZZZZZZZZZZZZZZZZZZZ", "8ZZZZZZZZZZZZZZZZZZZZZZZZZ"}, 2},
		// Distinct ids are never taken for one another, whichever map
		// holds them.
		{"distinct", []string{u, strings.ToLower(u), "01JD000000000000000000001", "01JD00000000000000000000010",
			"01JD000000000000000000000I", "01JD000000000000000000000L", "81JD0000000000000000000001",
			"00000000000000000000000000", "7ZZZZZZZZZZZZZZZZZZZZZZZZZ", "7ZZZZZZZZZZZZZZZZZZZZZZZZY", "evt-1"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Verify("s", sealIDs(t, tt.ids...))
			if tt.at == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			f := faultAt(t, err)
			if f.N != tt.at || !strings.Contains(f.Reason, "event "+tt.ids[tt.at-1]+" is chained twice") {
				t.Fatalf("got %v", f)
			}
		})
	}
}

// TestParseULIDIsOneToOne: a canonical ULID is read as the 128 bits its
// digits spell, so two distinct ids never share a key.
func TestParseULIDIsOneToOne(t *testing.T) {
	const digits = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	encode := func(u ulid) string {
		var b [26]byte
		for i := 25; i >= 0; i-- {
			b[i] = digits[u.lo&31]
			u.lo = u.lo>>5 | u.hi<<59
			u.hi >>= 5
		}
		return string(b[:])
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		u := ulid{r.Uint64(), r.Uint64()}
		s := encode(u)
		got, ok := parseULID([]byte(s))
		if !ok || got != u {
			t.Fatalf("parseULID(%s) = %x, %v; want %x", s, got, ok, u)
		}
	}
	for _, s := range []string{"", "01JD000000000000000000001", "01JD00000000000000000000010", "8ZZZZZZZZZZZZZZZZZZZZZZZZZ",
		"01jd0000000000000000000001", "01JD000000000000000000000I", "01JD000000000000000000000U", "01JD00000000000000000000-1"} {
		if _, ok := parseULID([]byte(s)); ok {
			t.Errorf("parseULID(%q) read a ULID", s)
		}
	}
}

func TestHashIgnoresOnlyTheHashMember(t *testing.T) {
	a := []byte(`{"b":1,"hash":"x","a":"y"}`)
	b := []byte(`{"a":"y","b":1}`)
	ha, err := Hash(a)
	if err != nil {
		t.Fatal(err)
	}
	hb, _ := Hash(b)
	if ha != hb {
		t.Fatalf("hash depends on the hash member or on order: %s vs %s", ha, hb)
	}
	hc, _ := Hash([]byte(`{"a":"y","b":2}`))
	if hc == ha {
		t.Fatal("different content, same hash")
	}
}

// TestAnySingleMutationIsDetected is the property: for random chains and any
// single mutation (flip a byte, drop, swap, duplicate), verification fails at
// or before the mutated position.
func TestAnySingleMutationIsDetected(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 300; trial++ {
		k := 2 + r.IntN(20)
		entries := build(t, "p", k)
		i := r.IntN(k)
		var op string
		switch r.IntN(4) {
		case 0:
			op = "flip"
			e := append([]byte(nil), entries[i]...)
			e[r.IntN(len(e))] ^= byte(1 + r.IntN(255))
			entries[i] = e
		case 1:
			op = "drop"
			if i == k-1 {
				continue // tail truncation needs an anchored head (rotator checkpoints)
			}
			entries = append(entries[:i:i], entries[i+1:]...)
		case 2:
			op = "swap"
			if i == k-1 {
				i--
			}
			entries[i], entries[i+1] = entries[i+1], entries[i]
		case 3:
			op = "dup"
			entries = append(entries[:i+1:i+1], entries[i:]...)
			i++
		}
		err := Verify("p", entries)
		if err == nil {
			t.Fatalf("trial %d: %s at %d not detected", trial, op, i)
		}
		if f := faultAt(t, err); f.N > uint64(i+1) {
			t.Fatalf("trial %d: %s at index %d reported late at position %d: %v", trial, op, i, f.N, err)
		}
	}
}

// FuzzVerifier feeds arbitrary bytes as entries; it must never panic, and
// never accept an entry that does not hash to its own hash member.
func FuzzVerifier(f *testing.F) {
	for _, e := range build(f, "f", 3) {
		f.Add(e)
	}
	f.Add([]byte(`{"n":1,"hash":"sha256:00","prev_hash":"x"}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		v := NewVerifier("f")
		if err := v.Next(raw); err != nil {
			return
		}
		h, err := Hash(raw)
		if err != nil {
			t.Fatalf("accepted entry that cannot be hashed: %q", raw)
		}
		if _, head := v.Head(); head != h {
			t.Fatalf("head %s != recomputed %s", head, h)
		}
	})
}

// FuzzSealIsCanonical: whatever strings an entry holds, Seal's output is
// canonical and hashes to its own hash member.
func FuzzSealIsCanonical(f *testing.F) {
	f.Add("s1", "PostToolUse", `{"a":"<>&\u2028\u0000\u001f\"\\"}`, "reason", uint64(1))
	f.Add("x", "é😀", "\x7f\u00ff", "", uint64(1<<53-1))
	f.Fuzz(func(t *testing.T, sess, hook, payload, reason string, seq uint64) {
		if !utf8.ValidString(sess) || !utf8.ValidString(hook) || !utf8.ValidString(payload) || !utf8.ValidString(reason) {
			return
		}
		seq %= 1 << 53
		e := &schemas.Entry{V: 1, N: 1, PrevHash: digest.Zero, Kind: "event", Chain: "c", SessionID: sess, HookEvent: hook,
			Payload: &payload, Reason: reason, ClientSeq: seq, IngestedAt: "2026-11-22T00:00:00Z", Bundle: "b",
			Redactions: []schemas.Redaction{{Rule: reason, Digest: digest.Zero}}}
		if seq%2 == 1 {
			// A SessionStart's hook configuration sorts between hash and hook_event.
			e.HookConfig = &schemas.HookConfig{V: 1, Verdict: reason, Reasons: []string{payload}, Missing: []string{hook},
				Layers: []schemas.HookLayer{{Layer: hook, Path: payload, Present: true, Error: reason, Events: []string{sess}}}}
		}
		sealed, err := Seal(e)
		if err != nil {
			t.Fatal(err)
		}
		if !canon.IsCanonical(sealed) {
			c, _ := canon.Canonicalize(sealed)
			t.Fatalf("not canonical:\n%s\n%s", sealed, c)
		}
		if h, err := Hash(sealed); err != nil || h != e.Hash {
			t.Fatalf("hash %s, recomputed %s (%v)", e.Hash, h, err)
		}
	})
}

// referenceHash is the definition: decode, drop "hash", re-encode,
// canonicalize, SHA-256.
func referenceHash(stored []byte) (string, error) {
	if jsontext.Value(bytes.TrimSpace(stored)).Kind() != '{' {
		return "", errors.New("not an object") // an entry is an object, never null
	}
	var members map[string]jsontext.Value
	if err := json.Unmarshal(stored, &members); err != nil {
		return "", err
	}
	delete(members, "hash")
	b, err := json.Marshal(members)
	if err != nil {
		return "", err
	}
	c, err := canon.Canonicalize(b)
	if err != nil {
		return "", err
	}
	return digest.SHA256(c), nil
}

// FuzzHashMatchesReference holds the byte-cutting Hash to the definition.
func FuzzHashMatchesReference(f *testing.F) {
	for _, s := range []string{
		`{"hash":"x","a":1}`, `{"a":1,"hash":"x"}`, `{"a":1,"hash":"x","z":[1,{"hash":2}]}`, `{"hash":"x"}`,
		`{"b":{"hash":1},"a":"hash"}`, `{}`, `{"a":1e3,"hash":null,"é":"\u00e9"}`, `{"hash":1,"hash":2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		want, werr := referenceHash(in)
		got, gerr := Hash(in)
		if (werr == nil) != (gerr == nil) {
			// The reference decodes into a map: it rejects duplicate
			// names as canonicalization does, and non-objects likewise.
			t.Fatalf("%q: reference err %v, Hash err %v", in, werr, gerr)
		}
		if werr == nil && got != want {
			t.Fatalf("%q: Hash %s, reference %s", in, got, want)
		}
	})
}

func TestVerifierFromAnAnchor(t *testing.T) {
	entries := build(t, "c1", 5)
	h2 := mustHash(t, entries[1])
	anchor := func(n uint64) (string, bool) {
		if n == 2 {
			return h2, true
		}
		return "", false
	}
	// The chain may start after the anchored entry 2...
	v := NewVerifierFrom("c1", anchor)
	for _, e := range entries[2:] {
		if err := v.Next(e); err != nil {
			t.Fatalf("anchored start: %v", err)
		}
	}
	// ...or at entry 1, as before any trim.
	v = NewVerifierFrom("c1", anchor)
	for _, e := range entries {
		if err := v.Next(e); err != nil {
			t.Fatalf("from entry 1: %v", err)
		}
	}
	// Not anywhere else: entries 1..3 missing with no anchor for 3.
	v = NewVerifierFrom("c1", anchor)
	if err := v.Next(entries[3]); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("unanchored start: %v", err)
	}
	// And the anchor's hash must be the predecessor's.
	bad := func(uint64) (string, bool) { return mustHash(t, entries[0]), true }
	v = NewVerifierFrom("c1", bad)
	if err := v.Next(entries[2]); err == nil || !strings.Contains(err.Error(), "prev_hash") {
		t.Fatalf("wrong anchor hash: %v", err)
	}
	// The anchor is asked once, for the first entry only.
	v = NewVerifierFrom("c1", anchor)
	if err := v.Next(entries[2]); err != nil {
		t.Fatal(err)
	}
	if err := v.Next(entries[4]); err == nil {
		t.Fatal("a gap after the anchored start was accepted")
	}
}

func mustHash(t *testing.T, stored []byte) string {
	t.Helper()
	h, err := Hash(stored)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// scanned reports whether Next checks stored on its fast path.
func scanned(stored []byte) bool {
	var f fields
	sc := getScratch()
	defer scratchPool.Put(sc)
	_, ok := sc.scan(stored, &f, nil)
	return ok
}

// TestFastPathCatchesTampering: entries as Seal writes them are checked
// on the fast path, and every defect is still caught there (or, for a
// non-canonical entry, the fast path declines it and the general path
// names it).
func TestFastPathCatchesTampering(t *testing.T) {
	entries := build(t, "s1", 5)
	for i, e := range entries {
		if !scanned(e) {
			t.Fatalf("entry %d is not checked on the fast path: %s", i+1, e)
		}
	}
	h3 := mustHash(t, entries[2])
	tests := []struct {
		name      string
		mutate    func([][]byte) [][]byte
		wantFast  bool
		wantN     uint64
		wantFault string
	}{
		{"changed payload", func(e [][]byte) [][]byte {
			e[3] = bytes.Replace(e[3], []byte(`\"i\":4`), []byte(`\"i\":5`), 1)
			return e
		}, true, 4, "hash mismatch"},
		{"wrong hash member", func(e [][]byte) [][]byte {
			e[3] = bytes.Replace(e[3], []byte(mustHash(t, e[3])), []byte(digest.Zero), 1)
			return e
		}, true, 4, "hash mismatch"},
		{"wrong prev_hash, rehashed", func(e [][]byte) [][]byte {
			e[3] = reseal(t, e[3], func(x *schemas.Entry) { x.PrevHash = digest.Zero })
			return e
		}, true, 4, "prev_hash"},
		{"gap", func(e [][]byte) [][]byte { return append(e[:2], e[3:]...) }, true, 3, "missing"},
		{"repeated", func(e [][]byte) [][]byte { return append(e[:3], e[2:]...) }, true, 4, "repeated"},
		{"wrong chain, rehashed", func(e [][]byte) [][]byte {
			e[1] = reseal(t, e[1], func(x *schemas.Entry) { x.Chain = "s2" })
			return e
		}, true, 2, "belongs to chain"},
		{"event chained twice, rehashed", func(e [][]byte) [][]byte {
			e[3] = reseal(t, e[3], func(x *schemas.Entry) { x.EventID = fmt.Sprintf("01JD%022d", 3); x.PrevHash = h3 })
			return e
		}, true, 4, "chained twice"},
		{"whitespace", func(e [][]byte) [][]byte {
			e[3] = bytes.Replace(e[3], []byte(`,"kind":`), []byte(`, "kind":`), 1)
			return e
		}, false, 4, "canonical"},
		{"members out of order", func(e [][]byte) [][]byte {
			e[3] = bytes.Replace(e[3], []byte(`{"bundle":"test",`), []byte(`{`), 1)
			e[3] = append(e[3][:len(e[3])-1:len(e[3])-1], `,"bundle":"test"}`...)
			return e
		}, false, 4, "canonical"},
		{"needless escape", func(e [][]byte) [][]byte {
			e[3] = bytes.Replace(e[3], []byte(`"kind":"event"`), []byte(`"kind":"\u0065vent"`), 1)
			return e
		}, false, 4, "canonical"},
		{"number not in its shortest form", func(e [][]byte) [][]byte {
			e[3] = bytes.Replace(e[3], []byte(`,"prev_hash"`), []byte(`0,"prev_hash"`), 1) // payload_size
			e[3] = bytes.Replace(e[3], []byte(`0,"prev_hash"`), []byte(`.0,"prev_hash"`), 1)
			return e
		}, false, 4, "canonical"},
		{"not JSON", func(e [][]byte) [][]byte { e[3] = e[3][:len(e[3])-1]; return e }, false, 4, "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			es := tt.mutate(build(t, "s1", 5))
			bad := es[tt.wantN-1]
			if got := scanned(bad); got != tt.wantFast {
				t.Fatalf("fast path %v, want %v: %s", got, tt.wantFast, bad)
			}
			f := faultAt(t, Verify("s1", es))
			if f.N != tt.wantN || !strings.Contains(f.Reason, tt.wantFault) {
				t.Fatalf("fault at %d: %s; want %d: %s", f.N, f.Reason, tt.wantN, tt.wantFault)
			}
		})
	}
}

// reseal changes a stored entry and seals it again (a forger who
// recomputes the hash).
func reseal(t *testing.T, stored []byte, change func(*schemas.Entry)) []byte {
	t.Helper()
	var e schemas.Entry
	if err := json.Unmarshal(stored, &e); err != nil {
		t.Fatal(err)
	}
	change(&e)
	b, err := Seal(&e)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzNextMatchesGeneralPath holds Next to its general path: on any bytes,
// after any verified prefix, the same verdict, reason and head.
func FuzzNextMatchesGeneralPath(f *testing.F) {
	es := build(f, "f", 3)
	for i, e := range es {
		f.Add(e, uint8(i))
	}
	f.Add([]byte(`{"chain":"f","event_id":"x","hash":"sha256:00","n":1,"prev_hash":"`+digest.Zero+`","v":1}`), uint8(0))
	f.Add([]byte(`{"chain":"f","hash":"sha256:00","n":1,"prev_hash":"`+digest.Zero+`","v":-1}`), uint8(0))
	f.Add([]byte(`{"Hash":"a","chain":"f","hash":"b","n":2}`), uint8(1))
	f.Add([]byte(`{"hash":"x"}`), uint8(0))
	f.Fuzz(func(t *testing.T, raw []byte, k uint8) {
		k %= uint8(len(es) + 1)
		fast, general := NewVerifier("f"), NewVerifier("f")
		for _, e := range es[:k] {
			if fast.Next(e) != nil || general.nextGeneral(e) != nil {
				t.Fatal("the prefix does not verify")
			}
		}
		sv := NewVerifier("f")
		for _, e := range es[:k] {
			if _, _, err := sv.NextScanned(e, nil); err != nil {
				t.Fatal("the prefix does not verify")
			}
		}
		ef, eg := fast.Next(raw), general.nextGeneral(raw)
		if fmt.Sprint(ef) != fmt.Sprint(eg) {
			t.Fatalf("%q after %d entries:\nNext:    %v\ngeneral: %v", raw, k, ef, eg)
		}
		ms, proved, es := sv.NextScanned(raw, nil)
		if fmt.Sprint(es) != fmt.Sprint(ef) || proved != scanned(raw) || proved && len(ms) == 0 && string(raw) != "{}" {
			t.Fatalf("%q: NextScanned %v %v, Next %v", raw, proved, es, ef)
		}
		fn, fh := fast.Head()
		gn, gh := general.Head()
		if fn != gn || fh != gh || fmt.Sprint(fast.events) != fmt.Sprint(general.events) {
			t.Fatalf("%q after %d entries: heads %d %s %v and %d %s %v", raw, k, fn, fh, fast.events, gn, gh, general.events)
		}
	})
}

// BenchmarkNext checks a chain of entries of ~1.4 kB (the size of the
// bench ledger's), on the fast path and on the general one.
func BenchmarkNext(b *testing.B) {
	big := benchEntries(b)
	size := 0
	for _, e := range big {
		size += len(e)
	}
	for _, path := range []struct {
		name string
		next func(*Verifier, []byte) error
	}{{"fast", (*Verifier).Next}, {"general", (*Verifier).nextGeneral}} {
		b.Run(path.name, func(b *testing.B) {
			b.SetBytes(int64(size / len(big)))
			b.ReportAllocs()
			var v *Verifier
			i := 0
			for b.Loop() {
				if i%len(big) == 0 {
					v = NewVerifier("bench-session")
				}
				if err := path.next(v, big[i%len(big)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// benchEntries is a chain of 64 entries of ~1.9 kB.
func benchEntries(b testing.TB) [][]byte {
	es := build(b, "bench-session", 64)
	big := make([][]byte, len(es))
	prev := digest.Zero
	for i := range es {
		var e schemas.Entry
		if err := json.Unmarshal(es[i], &e); err != nil {
			b.Fatal(err)
		}
		p := *e.Payload + strings.Repeat(`{"tool_input":{"command":"go test ./...\n"}}`, 25)
		e.Payload, e.PrevHash = &p, prev
		s, err := Seal(&e)
		if err != nil {
			b.Fatal(err)
		}
		big[i], prev = s, e.Hash
	}
	return big
}

package bundle

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	tproof "github.com/transparency-dev/formats/proof"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/claimcheck/claimcheck/pkg/attest"
	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/keyring/keyringtest"
	"github.com/claimcheck/claimcheck/pkg/transparency"
	"github.com/claimcheck/claimcheck/schemas"
)

const (
	origin  = "claimcheck.ledger/01jdb3h5kx0000000000000000"
	session = "00893aaf-19fa-41d2-8238-13269b9b3ca0"
)

// fixture is a ledger of one session (five entries in three messages,
// among other sessions' messages), its tree and checkpoint, and an
// attestation citing entries 2, 4 and 5.
type fixture struct {
	key    keyringtest.Key
	msgs   [][]byte
	seqOf  map[uint64]int // entry n → index of its message
	hashes map[uint64]string
	store  *transparency.MemTiles
	tree   tlog.Tree
	signed []byte
	env    []byte
	// rotatorMsg is the index of the message holding the rotator's
	// record of the key.
	rotatorMsg int
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{key: keyringtest.New(t, filepath.Join(t.TempDir(), "keys"), keyring.ECDSA, time.Now()),
		seqOf: map[uint64]int{}, hashes: map[uint64]string{}, store: &transparency.MemTiles{}}
	prev := "sha256:" + strings.Repeat("0", 64)
	payload := `{"x":"y"}`
	block := func(from, to uint64) {
		var lines [][]byte
		for n := from; n <= to; n++ {
			e := schemas.Entry{V: 1, N: n, SessionID: session, PrevHash: prev, Kind: schemas.EntryEvent, HookEvent: "PostToolUse",
				EventID: fmt.Sprintf("01JDB3H5KX00000000000000%02d", n), Host: "dev1", AgentType: "claude-code", AgentID: "a@dev1",
				ReceivedAt: "2026-11-28T03:00:00.000Z", IngestedAt: "2026-11-28T03:00:00.001Z", Bundle: "test",
				PayloadDigest: "sha256:" + strings.Repeat("1", 64), Payload: &payload}
			raw, err := chain.Seal(&e)
			if err != nil {
				t.Fatal(err)
			}
			prev = e.Hash
			f.hashes[n] = e.Hash
			f.seqOf[n] = len(f.msgs)
			lines = append(lines, raw)
		}
		f.msgs = append(f.msgs, bytes.Join(lines, []byte("\n")))
	}
	other := func() { f.msgs = append(f.msgs, []byte(fmt.Sprintf(`{"n":%d,"session_id":"other"}`, len(f.msgs)))) }
	// The rotator's record of the key, as services/rotator writes it.
	k := f.key.Key
	rec := fmt.Sprintf(`{"algorithm":%q,"fingerprint":%q,"keyid":%q,"valid_from":%q}`, k.Algorithm, k.Fingerprint, k.KeyID, k.ValidFrom)
	re := schemas.Entry{V: 1, N: 1, Chain: schemas.RotatorChain, Kind: schemas.EntryRotator, HookEvent: schemas.RotatorKeyRotated,
		EventID: "01JDB3H5KX000000000000ROT1", IngestedAt: "2026-11-28T02:00:00.000Z", Bundle: "rotator",
		PrevHash: "sha256:" + strings.Repeat("0", 64), Payload: &rec, PayloadDigest: "sha256:" + strings.Repeat("3", 64)}
	rraw, err := chain.Seal(&re)
	if err != nil {
		t.Fatal(err)
	}
	f.rotatorMsg = len(f.msgs)
	f.msgs = append(f.msgs, rraw)
	other()
	block(1, 2)
	other()
	block(3, 4)
	block(5, 5)
	other()
	tr := transparency.OpenTree(f.store, 0)
	leaves := make([]tlog.Hash, len(f.msgs))
	for i, m := range f.msgs {
		leaves[i] = transparency.LeafHash(m)
	}
	root, err := tr.Append(t.Context(), leaves)
	if err != nil {
		t.Fatal(err)
	}
	f.tree = tlog.Tree{N: int64(len(f.msgs)), Hash: root}
	s, err := transparency.NoteSigner(origin, f.key.Key, f.key.Raw)
	if err != nil {
		t.Fatal(err)
	}
	if f.signed, err = transparency.Sign(transparency.Body(origin, f.tree), s); err != nil {
		t.Fatal(err)
	}
	attID, err := attest.ID("01JDB3H5KX000000000000REQ1")
	if err != nil {
		t.Fatal(err)
	}
	v := schemas.Verdict{V: 1, AttestationID: attID, Claim: "done", Validator: "test_pass",
		Args: jsontext.Value(`{"command_substring":"go test ./..."}`), SessionID: session, RequestID: "01JDB3H5KX000000000000REQ1",
		Verdict: schemas.Pass, Verifier: "v1", Reasons: []string{"ok"}, Policy: schemas.PolicyRef{Version: "1", Digest: "sha256:" + strings.Repeat("2", 64)},
		Contract: &schemas.Position{N: 2, Hash: f.hashes[2]}, Matched: []schemas.Position{{N: 4, Hash: f.hashes[4]}},
		Range: schemas.Range{From: 1, To: 5, HeadHash: f.hashes[5]}}
	st := attest.Statement(v, nil, time.Now())
	if f.env, _, err = attest.Sign(t.Context(), f.key.Signer, st); err != nil {
		t.Fatal(err)
	}
	return f
}

// proof is the tlog-proof of the message holding entry n of the session.
func (f *fixture) proof(t *testing.T, n uint64) string {
	t.Helper()
	return f.proofOf(t, f.seqOf[n])
}

// proofOf is the tlog-proof of message i.
func (f *fixture) proofOf(t *testing.T, i int) string {
	t.Helper()
	p, err := transparency.ProveRecord(t.Context(), f.store, f.tree, int64(i))
	if err != nil {
		t.Fatal(err)
	}
	out := tproof.TLogProof{Index: uint64(i), Checkpoint: f.signed, ExtraData: f.msgs[i]}
	for _, h := range p {
		out.Hashes = append(out.Hashes, h)
	}
	return string(out.Marshal())
}

func (f *fixture) bundle(t *testing.T, proofs ...string) []byte {
	t.Helper()
	b, err := Marshal(Bundle{Attestation: f.env, Keys: f.key.Keys(), Origin: origin, Proofs: proofs})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBundleChecksOffline: a bundle of a real attestation, its cited
// entries' messages and their proofs checks with nothing else; flipping
// any byte of it, leaving a cited entry out, or asking for a witness's
// cosignature it lacks fails with a reason.
func TestBundleChecksOffline(t *testing.T) {
	f := newFixture(t)
	keyRecord := f.proofOf(t, f.rotatorMsg)
	good := f.bundle(t, keyRecord, f.proof(t, 2), f.proof(t, 4), f.proof(t, 5))
	rep, err := Verify(good, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Session != session || fmt.Sprint(rep.Entries) != "[2 4 5]" || rep.Checkpoint != f.tree {
		t.Fatalf("report %+v", rep)
	}
	if _, err := Verify(f.bundle(t, keyRecord, f.proof(t, 2), f.proof(t, 5)), Options{}); !errors.Is(err, ErrInvalid) ||
		!strings.Contains(err.Error(), "entry 4 of session") {
		t.Errorf("a cited entry left out: %v", err)
	}
	if _, err := Verify(f.bundle(t, f.proof(t, 2), f.proof(t, 4), f.proof(t, 5)), Options{}); !errors.Is(err, ErrInvalid) ||
		!strings.Contains(err.Error(), "the log's record of it") {
		t.Errorf("the key's record left out: %v", err)
	}
	_, wvkey, err := note.GenerateKey(nil, "witness.test/w1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(good, Options{WitnessKeys: []string{wvkey}, MinWitnesses: 1}); !errors.Is(err, ErrInvalid) ||
		!strings.Contains(err.Error(), "0 cosignature(s)") {
		t.Errorf("a witness required: %v", err)
	}
	// Every byte: a bundle changed anywhere must not check. (Whitespace
	// between JSON tokens is not part of what is signed or proved; the
	// bundle is written without any inside its strings.)
	for i := range good {
		c := good[i]
		if c == ' ' || c == '\n' {
			continue
		}
		bad := bytes.Clone(good)
		bad[i] ^= 0x01
		if _, err := Verify(bad, Options{}); err == nil {
			t.Fatalf("byte %d (%q → %q) flipped, and the bundle still checks:\n%s", i, c, bad[i], contextAround(good, i))
		}
	}
}

func contextAround(b []byte, i int) string {
	return string(b[max(0, i-60):i]) + "»" + string(b[i:min(len(b), i+60)])
}

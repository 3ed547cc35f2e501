package transparency

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	tnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/claimcheck/claimcheck/pkg/keyring"
)

// witnessEnv is a log (a tree in memory and its key) and a witness that
// trusts it, served over HTTP.
type witnessEnv struct {
	store  *MemTiles
	tree   *Tree
	signer note.Signer
	w      *Witness
	srv    *httptest.Server
	dir    string
	vkeys  map[string][]string
}

func newWitnessEnv(t *testing.T) *witnessEnv {
	t.Helper()
	s, _, k := logKey(t, keyring.ECDSA)
	vkey, err := VerifierKey(testOrigin, k.Key)
	if err != nil {
		t.Fatal(err)
	}
	e := &witnessEnv{store: &MemTiles{}, signer: s, dir: t.TempDir(), vkeys: map[string][]string{testOrigin: {vkey}}}
	e.tree = OpenTree(e.store, 0)
	e.open(t)
	return e
}

// open (re)opens the witness from its directory and serves it.
func (e *witnessEnv) open(t *testing.T) {
	t.Helper()
	w, err := OpenWitness(e.dir, "witness.test/w1", e.vkeys, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if e.srv != nil {
		e.srv.Close()
	}
	e.w, e.srv = w, httptest.NewServer(w.Handler())
	t.Cleanup(e.srv.Close)
}

// grow appends leaves up to n and returns the signed checkpoint.
func (e *witnessEnv) grow(t *testing.T, n int64) (tlog.Tree, []byte) {
	t.Helper()
	root := grow(t, e.tree, n, func() int64 { return 50 })
	tree := tlog.Tree{N: n, Hash: root}
	signed, err := Sign(Body(testOrigin, tree), e.signer)
	if err != nil {
		t.Fatal(err)
	}
	return tree, signed
}

// post sends an add-checkpoint request and returns the status and body.
func (e *witnessEnv) post(t *testing.T, body []byte) (int, string, string) {
	t.Helper()
	resp, err := http.Post(e.srv.URL+"/add-checkpoint", "text/plain", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header.Get("Content-Type")
}

// request builds an add-checkpoint body.
func request(old int64, proof tlog.TreeProof, signed []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "old %d\n", old)
	for _, h := range proof {
		b.WriteString(base64.StdEncoding.EncodeToString(h[:]) + "\n")
	}
	b.WriteString("\n")
	b.Write(signed)
	return b.Bytes()
}

// TestWitnessCosignsOnlyConsistentExtensions walks the protocol's answers:
// a first checkpoint and a consistent extension are cosigned (and the
// cosignatures verify with the witness's cosignature/v1 key); a stale old
// size gets 409 with the witness's size; a smaller tree, a fork, a bad
// proof, an unknown log, another key's signature and malformed bodies are
// refused with their status codes; the state survives a restart.
func TestWitnessCosignsOnlyConsistentExtensions(t *testing.T) {
	e := newWitnessEnv(t)
	wv, err := tnote.NewVerifierForCosignatureV1(e.w.VerifierKey())
	if err != nil {
		t.Fatal(err)
	}
	cosigned := func(t *testing.T, signed []byte, sigs string) {
		t.Helper()
		cp, err := Open(append(append([]byte(nil), signed...), sigs...), testOrigin, e.keys(t), []note.Verifier{wv})
		if err != nil || len(cp.Witnesses) != 1 || cp.Witnesses[0] != "witness.test/w1" {
			t.Fatalf("cosigned checkpoint: %+v, %v", cp, err)
		}
	}
	_, c100 := e.grow(t, 100)
	code, body, _ := e.post(t, request(0, nil, c100))
	if code != http.StatusOK {
		t.Fatalf("first checkpoint: %d %s", code, body)
	}
	cosigned(t, c100, body)

	t300, c300 := e.grow(t, 300)
	proof, err := ProveTree(t.Context(), e.store, t300, 100)
	if err != nil {
		t.Fatal(err)
	}
	if code, body, ctype := e.post(t, request(0, nil, c300)); code != http.StatusConflict || body != "100\n" || ctype != "text/x.tlog.size" {
		t.Fatalf("stale old size: %d %q %s, want 409 \"100\" text/x.tlog.size", code, body, ctype)
	}
	code, body, _ = e.post(t, request(100, proof, c300))
	if code != http.StatusOK {
		t.Fatalf("consistent extension: %d %s", code, body)
	}
	cosigned(t, c300, body)

	// A fork: another tree of 300 leaves (leaf 150 differs).
	forkStore := &MemTiles{}
	fork := OpenTree(forkStore, 0)
	grow(t, fork, 150, func() int64 { return 150 })
	if _, err := fork.Append(t.Context(), []tlog.Hash{LeafHash([]byte("rewritten"))}); err != nil {
		t.Fatal(err)
	}
	forkRoot := grow(t, fork, 300, func() int64 { return 149 })
	forked, err := Sign(Body(testOrigin, tlog.Tree{N: 300, Hash: forkRoot}), e.signer)
	if err != nil {
		t.Fatal(err)
	}
	forkRoot4 := grow(t, fork, 400, func() int64 { return 100 })
	forked400, err := Sign(Body(testOrigin, tlog.Tree{N: 400, Hash: forkRoot4}), e.signer)
	if err != nil {
		t.Fatal(err)
	}
	forkProof, err := ProveTree(t.Context(), forkStore, tlog.Tree{N: 400, Hash: forkRoot4}, 300)
	if err != nil {
		t.Fatal(err)
	}
	other, _, _ := logKey(t, keyring.ECDSA)
	otherSigned, err := Sign(Body(testOrigin, t300), other)
	if err != nil {
		t.Fatal(err)
	}
	unknown, err := Sign(Body("claimcheck.test/unknown", t300), e.signer)
	if err != nil {
		t.Fatal(err)
	}
	tooMany := request(100, make(tlog.TreeProof, 64), c300)
	for _, tc := range []struct {
		name string
		body []byte
		code int
	}{
		{"a smaller tree", request(300, nil, c100), http.StatusBadRequest},
		{"the same size with another root (fork)", request(300, nil, forked), http.StatusConflict},
		{"an extension of a fork", request(300, forkProof, forked400), http.StatusUnprocessableEntity},
		{"a bad proof", request(300, proof, forked400), http.StatusUnprocessableEntity},
		{"an unknown log", request(300, nil, unknown), http.StatusNotFound},
		{"another key's signature", request(300, nil, otherSigned), http.StatusForbidden},
		{"no empty line", []byte("old 300\n" + string(c300)), http.StatusBadRequest},
		{"a bad old line", request(0, nil, c300)[3:], http.StatusBadRequest},
		{"old with a leading zero", bytes.Replace(request(300, nil, c300), []byte("old 300"), []byte("old 0300"), 1), http.StatusBadRequest},
		{"64 proof lines", tooMany, http.StatusBadRequest},
		{"a proof from size 0", request(0, proof, c300), http.StatusBadRequest},
	} {
		if code, body, _ := e.post(t, tc.body); code != tc.code {
			t.Errorf("%s: %d %q, want %d", tc.name, code, body, tc.code)
		}
	}
	if resp, err := http.Get(e.srv.URL + "/healthz"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("healthz: %v %v", resp, err)
	} else {
		_ = resp.Body.Close()
	}
	// The state is on disk: a restarted witness keeps its size and key.
	vkey := e.w.VerifierKey()
	e.open(t)
	if e.w.VerifierKey() != vkey {
		t.Fatal("the witness's key changed across a restart")
	}
	if code, body, _ := e.post(t, request(100, proof, c300)); code != http.StatusConflict || body != "300\n" {
		t.Fatalf("after a restart: %d %q, want 409 \"300\"", code, body)
	}
	if code, _, _ := e.post(t, request(300, nil, c300)); code != http.StatusOK {
		t.Fatalf("the same checkpoint again: %d, want 200", code)
	}
}

func (e *witnessEnv) keys(t *testing.T) []note.Verifier {
	t.Helper()
	var out []note.Verifier
	for _, k := range e.vkeys[testOrigin] {
		v, err := tnote.NewVerifier(k)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// TestWitnessChecksAndPersistsAtomically: requests racing from the same old
// size get one cosignature; the others learn the new size (409).
func TestWitnessChecksAndPersistsAtomically(t *testing.T) {
	e := newWitnessEnv(t)
	_, c10 := e.grow(t, 10)
	if code, _, _ := e.post(t, request(0, nil, c10)); code != http.StatusOK {
		t.Fatal(code)
	}
	var bodies [][]byte
	for _, n := range []int64{20, 30, 40, 50} {
		tree, signed := e.grow(t, n)
		p, err := ProveTree(t.Context(), e.store, tree, 10)
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, request(10, p, signed))
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		codes = map[int]int{}
	)
	for _, b := range bodies {
		wg.Go(func() {
			code, _, _ := e.post(t, b)
			mu.Lock()
			codes[code]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if codes[http.StatusOK] != 1 || codes[http.StatusConflict] != 3 {
		t.Fatalf("racing requests: %v, want one 200 and three 409", codes)
	}
}

// FuzzAddCheckpoint: no body makes the witness cosign something that is not
// a consistent extension signed by the log, nor panic.
func FuzzAddCheckpoint(f *testing.F) {
	f.Add([]byte("old 0\n\nclaimcheck.test/ledger/01JDB3H5KX\n1\nAAAA\n\n— x y\n"))
	f.Add([]byte("old 5\nAAAA\n\n"))
	f.Add([]byte(strings.Repeat("old 1\n", 3)))
	f.Fuzz(func(t *testing.T, body []byte) {
		e := newWitnessEnv(t)
		if _, _, err := e.w.AddCheckpoint(body); err == nil {
			t.Fatalf("cosigned a body no log key signed: %q", body)
		}
	})
}

// TestSplitViewIsCaught: a log that shows two verifiers two histories of
// the same size (it holds the key) gets only the first cosigned; the
// second has no witness behind it, and a verifier holding the first
// checkpoint names the second a fork.
func TestSplitViewIsCaught(t *testing.T) {
	e := newWitnessEnv(t)
	treeA, signedA := e.grow(t, 200)
	otherStore := &MemTiles{}
	other := OpenTree(otherStore, 0)
	grow(t, other, 199, func() int64 { return 199 })
	rootB, err := other.Append(t.Context(), []tlog.Hash{LeafHash([]byte("a different last message"))})
	if err != nil {
		t.Fatal(err)
	}
	treeB := tlog.Tree{N: 200, Hash: rootB}
	signedB, err := Sign(Body(testOrigin, treeB), e.signer)
	if err != nil {
		t.Fatal(err)
	}
	codeA, sigsA, _ := e.post(t, request(0, nil, signedA))
	codeB, bodyB, _ := e.post(t, request(200, nil, signedB))
	if codeA != http.StatusOK || codeB != http.StatusConflict {
		t.Fatalf("view A: %d; view B: %d %q; want 200 and 409", codeA, codeB, bodyB)
	}
	wv, err := tnote.NewVerifierForCosignatureV1(e.w.VerifierKey())
	if err != nil {
		t.Fatal(err)
	}
	a, err := Open(append(append([]byte(nil), signedA...), sigsA...), testOrigin, e.keys(t), []note.Verifier{wv})
	if err != nil || len(a.Witnesses) != 1 {
		t.Fatalf("view A: %+v, %v; want it cosigned", a, err)
	}
	b, err := Open(signedB, testOrigin, e.keys(t), []note.Verifier{wv})
	if err != nil || len(b.Witnesses) != 0 {
		t.Fatalf("view B: %+v, %v; want it signed by the log alone", b, err)
	}
	if err := Consistent(t.Context(), otherStore, treeB, treeA); !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "fork") {
		t.Fatalf("a verifier holding A, shown B: %v, want a fork named", err)
	}
}

package transparency

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"golang.org/x/mod/sumdb/tlog"
)

// entryHash is the hash of the i-th test entry.
func entryHash(i int64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(i))
	h := sha256.Sum256(b[:])
	return h[:]
}

// reference builds the root of the first n leaves with
// transparency-dev/merkle's compact range (RFC 6962 hashing).
func reference(t testing.TB, n int64) []byte {
	t.Helper()
	f := compact.RangeFactory{Hash: rfc6962.DefaultHasher.HashChildren}
	r := f.NewEmptyRange(0)
	for i := range n {
		if err := r.Append(rfc6962.DefaultHasher.HashLeaf(entryHash(i)), nil); err != nil {
			t.Fatal(err)
		}
	}
	root, err := r.GetRootHash(nil)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// grow appends leaves [tree size, n) in batches of the given sizes.
func grow(t testing.TB, tr *Tree, n int64, batch func() int64) tlog.Hash {
	t.Helper()
	root, err := tr.Root(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for tr.Size() < n {
		k := min(batch(), n-tr.Size())
		leaves := make([]tlog.Hash, k)
		for i := range k {
			leaves[i] = LeafHash(entryHash(tr.Size() + i))
		}
		if root, err = tr.Append(t.Context(), leaves); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestTreeMatchesTheReference: appended in batches of any size, reopened
// from the tiles alone, the tree's roots are the reference's, and its
// inclusion and consistency proofs verify with transparency-dev/merkle's
// verifier.
func TestTreeMatchesTheReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	store := &MemTiles{}
	tr := OpenTree(store, 0)
	var trees []tlog.Tree
	for _, n := range []int64{1, 2, 3, 7, 255, 256, 257, 600, 65535, 65537, 70000} {
		root := grow(t, tr, n, func() int64 { return 1 + rng.Int64N(700) })
		if want := reference(t, n); string(root[:]) != string(want) {
			t.Fatalf("root of %d leaves %x, want %x", n, root, want)
		}
		trees = append(trees, tlog.Tree{N: n, Hash: root})
		// A tree reopened from the store alone goes on the same way.
		tr = OpenTree(store, n)
	}
	for i, tree := range trees {
		for _, leaf := range []int64{0, tree.N / 2, tree.N - 1} {
			p, err := ProveRecord(t.Context(), store, tree, leaf)
			if err != nil {
				t.Fatal(err)
			}
			if err := proof.VerifyInclusion(rfc6962.DefaultHasher, uint64(leaf), uint64(tree.N),
				rfc6962.DefaultHasher.HashLeaf(entryHash(leaf)), hashes(p), tree.Hash[:]); err != nil {
				t.Errorf("inclusion of %d in %d: %v", leaf, tree.N, err)
			}
		}
		for _, old := range trees[:i] {
			p, err := ProveTree(t.Context(), store, tree, old.N)
			if err != nil {
				t.Fatal(err)
			}
			if err := proof.VerifyConsistency(rfc6962.DefaultHasher, uint64(old.N), uint64(tree.N), hashes(p),
				old.Hash[:], tree.Hash[:]); err != nil {
				t.Errorf("consistency %d → %d: %v", old.N, tree.N, err)
			}
		}
	}
}

func hashes[T ~[]tlog.Hash](p T) [][]byte {
	out := make([][]byte, len(p))
	for i := range p {
		out[i] = p[i][:]
	}
	return out
}

// TestTamperedTilesAreDetected: a tile changed in the store fails every
// read checked against a checkpoint's tree, and a lost one is named.
func TestTamperedTilesAreDetected(t *testing.T) {
	store := &MemTiles{}
	tr := OpenTree(store, 0)
	root := grow(t, tr, 1000, func() int64 { return 100 })
	tree := tlog.Tree{N: 1000, Hash: root}
	tile := tlog.TileForIndex(TileHeight, tlog.StoredHashIndex(0, 300))
	data, err := store.ReadTiles(t.Context(), []tlog.Tile{tile})
	if err != nil {
		t.Fatal(err)
	}
	bad := append([]byte(nil), data[0]...)
	bad[5] ^= 1
	store.Set(tile, bad)
	if _, err := ProveRecord(t.Context(), store, tree, 300); err == nil {
		t.Error("a proof read from a changed tile verified")
	}
	if _, err := LeafAt(t.Context(), store, tree, 301); err == nil {
		t.Error("a leaf read from a changed tile verified")
	}
	store.Set(tile, nil)
	if _, err := LeafAt(t.Context(), store, tree, 301); !errors.Is(err, ErrTileMissing) {
		t.Errorf("lost tile: %v, want ErrTileMissing", err)
	}
}

// FuzzProofs checks inclusion and consistency proofs of random trees
// against transparency-dev/merkle's verifier, and that a proof for one
// leaf does not verify for another.
func FuzzProofs(f *testing.F) {
	f.Add(uint16(1), uint16(0), uint16(0))
	f.Add(uint16(300), uint16(299), uint16(256))
	f.Add(uint16(1000), uint16(7), uint16(513))
	f.Fuzz(func(t *testing.T, size, leaf, old uint16) {
		n := int64(size%2000) + 1
		l, o := int64(leaf)%n, int64(old)%(n+1)
		store := &MemTiles{}
		tr := OpenTree(store, 0)
		oldRoot := tlog.Hash{}
		if o > 0 {
			oldRoot = grow(t, tr, o, func() int64 { return 97 })
		}
		root := grow(t, tr, n, func() int64 { return 131 })
		tree := tlog.Tree{N: n, Hash: root}
		p, err := ProveRecord(t.Context(), store, tree, l)
		if err != nil {
			t.Fatal(err)
		}
		h := rfc6962.DefaultHasher
		if err := proof.VerifyInclusion(h, uint64(l), uint64(n), h.HashLeaf(entryHash(l)), hashes(p), root[:]); err != nil {
			t.Fatalf("inclusion of %d in %d: %v", l, n, err)
		}
		if err := tlog.CheckRecord(p, n, root, l, LeafHash(entryHash(l))); err != nil {
			t.Fatalf("tlog.CheckRecord of %d in %d: %v", l, n, err)
		}
		if n > 1 {
			other := (l + 1) % n
			if proof.VerifyInclusion(h, uint64(other), uint64(n), h.HashLeaf(entryHash(other)), hashes(p), root[:]) == nil {
				t.Fatalf("the proof of %d verified leaf %d", l, other)
			}
		}
		if o > 0 {
			c, err := ProveTree(t.Context(), store, tree, o)
			if err != nil {
				t.Fatal(err)
			}
			if err := proof.VerifyConsistency(h, uint64(o), uint64(n), hashes(c), oldRoot[:], root[:]); err != nil {
				t.Fatalf("consistency %d → %d: %v", o, n, err)
			}
		}
	})
}

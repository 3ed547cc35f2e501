package transparency

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/mod/sumdb/tlog"
)

// tileKey is a tile's key in a store: level and number (its width is not
// part of it; the store keeps the widest).
func tileKey(t tlog.Tile) string { return fmt.Sprintf("%d.%d", t.L, t.N) }

// prefix returns the first t.W hashes of data, or ErrTileMissing.
func prefix(t tlog.Tile, data []byte) ([]byte, error) {
	want := t.W * tlog.HashSize
	if len(data) < want {
		return nil, fmt.Errorf("%w: %s: the store holds %d hashes", ErrTileMissing, t.Path(), len(data)/tlog.HashSize)
	}
	return data[:want], nil
}

// MemTiles is a TileStore in memory (tests, and tools that rebuild a tree).
type MemTiles struct {
	mu    sync.Mutex
	tiles map[string][]byte
}

// ReadTiles implements TileStore.
func (m *MemTiles) ReadTiles(_ context.Context, tiles []tlog.Tile) ([][]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		d, err := prefix(t, m.tiles[tileKey(t)])
		if err != nil {
			return nil, err
		}
		out[i] = d
	}
	return out, nil
}

// SaveTiles implements TileStore.
func (m *MemTiles) SaveTiles(_ context.Context, tiles []tlog.Tile, data [][]byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tiles == nil {
		m.tiles = map[string][]byte{}
	}
	for i, t := range tiles {
		if k := tileKey(t); len(data[i]) >= len(m.tiles[k]) {
			m.tiles[k] = append([]byte(nil), data[i]...)
		}
	}
	return nil
}

// Set replaces a tile's data as stored (tests of a tampered store).
func (m *MemTiles) Set(t tlog.Tile, data []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tiles[tileKey(t)] = data
}

// KVTiles is a TileStore on a JetStream key-value bucket. It keeps
// TilesPerValue neighbouring tiles of a level in one value (a tile's
// hashes at a fixed offset), so that an append that completes or widens a
// few tiles writes one or two values: with the store's fsync before every
// acknowledgement, each value written is one more fsync beside ingest's.
type KVTiles struct {
	KV jetstream.KeyValue
}

// TilesPerValue is how many neighbouring tiles of a level share a value.
const TilesPerValue = 4

// tileBytes is a full tile's size.
const tileBytes = (1 << TileHeight) * tlog.HashSize

// groupKey is the key of the value holding tile t.
func groupKey(t tlog.Tile) string { return fmt.Sprintf("%d.%d", t.L, t.N/TilesPerValue) }

// ReadTiles implements TileStore.
func (s KVTiles) ReadTiles(ctx context.Context, tiles []tlog.Tile) ([][]byte, error) {
	return s.readTiles(ctx, tiles, "")
}

func (s KVTiles) readTiles(ctx context.Context, tiles []tlog.Tile, keyPrefix string) ([][]byte, error) {
	// The values holding the tiles, read concurrently: a proof's tiles
	// (one per level it climbs) then cost one round trip, not one each.
	values := map[string][]byte{}
	var keys []string
	for _, t := range tiles {
		if k := keyPrefix + groupKey(t); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	got := make([][]byte, len(keys))
	errs := make([]error, len(keys))
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for i, k := range keys {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			e, err := s.KV.Get(ctx, k)
			switch {
			case errors.Is(err, jetstream.ErrKeyNotFound):
			case err != nil:
				errs[i] = fmt.Errorf("read tiles %s: %w", k, err)
			default:
				got[i] = e.Value()
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for i, k := range keys {
		values[k] = got[i]
	}
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		v := values[keyPrefix+groupKey(t)]
		off := int(t.N%TilesPerValue) * tileBytes
		if len(v) < off {
			return nil, fmt.Errorf("%w: %s", ErrTileMissing, t.Path())
		}
		var err error
		if out[i], err = prefix(t, v[off:]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// SaveTiles implements TileStore. One writer (the log) saves tiles, each
// as wide as the tree it appended to; a narrower copy than the stored one
// comes only from re-appending after a crash, below the stored checkpoint,
// and the next appends widen it again.
func (s KVTiles) SaveTiles(ctx context.Context, tiles []tlog.Tile, data [][]byte) error {
	return s.saveTiles(ctx, tiles, data, "")
}

func (s KVTiles) saveTiles(ctx context.Context, tiles []tlog.Tile, data [][]byte, keyPrefix string) error {
	values := map[string][]byte{}
	var order []string
	// Within a value, tiles in order: each replaces the value from its
	// offset on.
	idx := make([]int, len(tiles))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if c := cmp.Compare(tiles[a].L, tiles[b].L); c != 0 {
			return c
		}
		return cmp.Compare(tiles[a].N, tiles[b].N)
	})
	for _, i := range idx {
		t := tiles[i]
		k := keyPrefix + groupKey(t)
		v, ok := values[k]
		if !ok {
			e, err := s.KV.Get(ctx, k)
			switch {
			case errors.Is(err, jetstream.ErrKeyNotFound):
			case err != nil:
				return fmt.Errorf("save tile %s: %w", t.Path(), err)
			default:
				v = bytes.Clone(e.Value())
			}
			order = append(order, k)
		}
		off := int(t.N%TilesPerValue) * tileBytes
		if len(v) < off {
			// The tiles before it in the value are full (tiles fill in
			// order); only a crash's re-append can leave less.
			return fmt.Errorf("save tile %s: the tiles before it are not stored", t.Path())
		}
		// The tile replaces what the value held from its offset on: the
		// tiles after it in the value do not exist yet.
		values[k] = append(v[:off:off], data[i]...)
	}
	for _, k := range order {
		if _, err := s.KV.Put(ctx, k, values[k]); err != nil {
			return fmt.Errorf("save tiles %s: %w", k, err)
		}
	}
	return nil
}

// Cached keeps up to n tiles of store in memory, by level, number and
// width: a tile's first W hashes never change once written (a wider copy
// starts with them), so a process that proves many entries (or audits the
// ledger twice) reads each from the store once.
func Cached(store TileStore, n int) TileStore {
	c, err := lru.New[string, []byte](max(n, 1))
	if err != nil {
		return store // only for n <= 0, excluded above
	}
	return &cachedTiles{store: store, lru: c}
}

type cachedTiles struct {
	store TileStore
	lru   *lru.Cache[string, []byte]
}

func (c *cachedTiles) ReadTiles(ctx context.Context, tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	var miss []tlog.Tile
	var at []int
	for i, t := range tiles {
		if d, ok := c.lru.Get(t.Path()); ok {
			out[i] = d
			continue
		}
		miss, at = append(miss, t), append(at, i)
	}
	if len(miss) == 0 {
		return out, nil
	}
	got, err := c.store.ReadTiles(ctx, miss)
	if err != nil {
		return nil, err
	}
	for k, i := range at {
		out[i] = got[k]
		c.lru.Add(miss[k].Path(), got[k])
	}
	return out, nil
}

func (c *cachedTiles) SaveTiles(ctx context.Context, tiles []tlog.Tile, data [][]byte) error {
	return c.store.SaveTiles(ctx, tiles, data)
}

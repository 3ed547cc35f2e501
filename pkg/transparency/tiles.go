package transparency

import (
	"context"
	"errors"
	"fmt"
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

// KVTiles is a TileStore on a JetStream key-value bucket (stream.TilesBucket).
type KVTiles struct {
	KV jetstream.KeyValue
}

// ReadTiles implements TileStore.
func (s KVTiles) ReadTiles(ctx context.Context, tiles []tlog.Tile) ([][]byte, error) {
	return s.readTiles(ctx, tiles, "")
}

func (s KVTiles) readTiles(ctx context.Context, tiles []tlog.Tile, keyPrefix string) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		e, err := s.KV.Get(ctx, keyPrefix+tileKey(t))
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return nil, fmt.Errorf("%w: %s", ErrTileMissing, t.Path())
		}
		if err != nil {
			return nil, fmt.Errorf("read tile %s: %w", t.Path(), err)
		}
		if out[i], err = prefix(t, e.Value()); err != nil {
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
	for i, t := range tiles {
		if _, err := s.KV.Put(ctx, keyPrefix+tileKey(t), data[i]); err != nil {
			return fmt.Errorf("save tile %s: %w", t.Path(), err)
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

package ledger

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/stream"
)

// Start is a position a trimmed chain may begin after: entry N and its hash.
type Start struct {
	N    uint64 `json:"n"`
	Hash string `json:"hash"`
}

// Anchor is the rotator's record, in the heads bucket, of where a chain's
// hot entries begin after retention moved older ones to the archive. It
// keeps the start in effect and the one being put into effect (a trim is
// the anchor update, then the purge: a crash between them leaves the old
// start valid).
type Anchor struct {
	Chain   string  `json:"chain"`
	Starts  []Start `json:"starts"`  // newest first, at most two
	Segment string  `json:"segment"` // the archive segment holding the newest start's entry
	At      string  `json:"at"`
}

// Anchors reads and writes anchors. A nil *Anchors knows none.
type Anchors struct {
	js jetstream.JetStream
	mu sync.Mutex
	kv jetstream.KeyValue
}

// NewAnchors uses the heads bucket through js.
func NewAnchors(js jetstream.JetStream) *Anchors { return &Anchors{js: js} }

func anchorKey(chainName string) string { return "chain." + chainName }

func (a *Anchors) bucket(ctx context.Context) (jetstream.KeyValue, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.kv != nil {
		return a.kv, nil
	}
	kv, err := a.js.KeyValue(ctx, stream.BucketHeads)
	if err != nil {
		return nil, fmt.Errorf("heads bucket: %w", err)
	}
	a.kv = kv
	return kv, nil
}

// Get returns a chain's anchor and its revision (0, false when none).
func (a *Anchors) Get(ctx context.Context, chainName string) (Anchor, uint64, bool, error) {
	var out Anchor
	if a == nil {
		return out, 0, false, nil
	}
	kv, err := a.bucket(ctx)
	if err != nil {
		return out, 0, false, err
	}
	e, err := kv.Get(ctx, anchorKey(chainName))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return out, 0, false, nil
	}
	if err != nil {
		return out, 0, false, fmt.Errorf("anchor of %s: %w", chainName, err)
	}
	if err := json.Unmarshal(e.Value(), &out); err != nil {
		return out, 0, false, fmt.Errorf("anchor of %s: %w", chainName, err)
	}
	return out, e.Revision(), true, nil
}

// Put writes an anchor with compare-and-set against rev (0: must not exist).
func (a *Anchors) Put(ctx context.Context, an Anchor, rev uint64) error {
	kv, err := a.bucket(ctx)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(an, json.Deterministic(true))
	if err != nil {
		return err
	}
	if rev == 0 {
		_, err = kv.Create(ctx, anchorKey(an.Chain), raw)
	} else {
		_, err = kv.Update(ctx, anchorKey(an.Chain), raw, rev)
	}
	if err != nil {
		return fmt.Errorf("anchor of %s: %w", an.Chain, err)
	}
	return nil
}

// StartOf returns the chain.StartFunc for a chain, reading its anchor the
// first time it is asked (only for a chain whose first stored entry is
// not entry 1). Errors count as "no anchor": verification then reports
// the missing entries.
func (a *Anchors) StartOf(ctx context.Context, chainName string) chain.StartFunc {
	if a == nil {
		return nil
	}
	return func(n uint64) (string, bool) {
		an, _, ok, err := a.Get(ctx, chainName)
		if err != nil || !ok {
			return "", false
		}
		for _, s := range an.Starts {
			if s.N == n {
				return s.Hash, true
			}
		}
		return "", false
	}
}

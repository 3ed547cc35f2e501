package ledger

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/schemas"
)

// MaxAtomicBatch is the server's default bound on one atomic batch.
const MaxAtomicBatch = stream.MaxAtomicBatch

// Group is one chain's entries for AppendBatch.
type Group struct {
	Chain   string
	Entries []*schemas.Entry
}

// BatchResult is AppendBatch's outcome for one group.
type BatchResult struct {
	Appended
	// Done is false when the batch did not write the group: nothing of it
	// was chained by AppendBatch, and the caller appends it with Append.
	Done bool
}

// AppendBatch chains several chains' entries with JetStream atomic batch
// publishes. Each chain's new entries become one block carrying that chain's
// own compare-and-set (expected last subject sequence) and message id,
// exactly as Append writes it; the server checks every block's
// compare-and-set and stores all the blocks of a batch or none, with one
// fsync for the batch under sync_interval always instead of one per chain.
//
// The server refuses a batch as a whole when one chain's head moved (another
// writer appended) or one block repeats a message id; nothing of it is
// stored, and AppendBatch tries each half again while the halves are not
// below AtomicMin (stream.AtomicBatches), so a conflict costs a few more
// commits and leaves its chain, with fewer than 2·AtomicMin neighbours, to
// Append.
// A group whose block no batch took (that conflict, a block above
// MaxBlockBytes, a chain that cannot be loaded, the stream without
// allow_atomic, an unknown outcome) is returned with Done false and nothing
// of it written by this call; the caller hands it to Append, which resolves
// conflicts and duplicates chain by chain. The error, if any, says why a
// batch was not committed (the first three reasons).
// Chains must be distinct. Fewer groups than AppenderConfig.AtomicMin are
// left to Append (a small batch costs more than plain publishes).
func (a *Appender) AppendBatch(ctx context.Context, groups []Group) ([]BatchResult, error) {
	out := make([]BatchResult, len(groups))
	if a.cfg.AtomicBatch < 2 || len(groups) < min(a.cfg.AtomicMin, a.cfg.AtomicBatch) || a.atomicOff.Load() {
		return out, nil
	}
	order := make([]int, len(groups))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int { return cmp.Compare(groups[x].Chain, groups[y].Chain) })
	for k := 1; k < len(order); k++ {
		if groups[order[k]].Chain == groups[order[k-1]].Chain {
			return out, fmt.Errorf("append batch: chain %q given twice", groups[order[k]].Chain)
		}
	}
	// Lock every chain in name order (Append locks one, so no cycle).
	states := make([]*chainState, len(groups))
	for _, i := range order {
		states[i] = a.state(groups[i].Chain)
		states[i].mu.Lock()
	}
	defer func() {
		for _, st := range states {
			st.mu.Unlock()
		}
	}()
	a.loadAll(ctx, states)

	// One sealed block per chain that can take its entries in one.
	type pending struct {
		group int
		todo  []*schemas.Entry
		msg   *nats.Msg
		n     uint64
		hash  string
	}
	var ready []pending
	for i, g := range groups {
		st := states[i]
		if !st.loaded {
			continue // Append loads it again and reports the error
		}
		todo := st.fresh(g.Entries, &out[i].Duplicates)
		if len(todo) == 0 {
			out[i].Done, out[i].N, out[i].Hash = true, st.n, st.hash
			continue
		}
		body, n, hash, ok := a.seal(st, todo)
		if !ok {
			out[i].Duplicates = 0
			continue
		}
		ready = append(ready, pending{group: i, todo: todo, msg: st.block(st.n+1, body), n: n, hash: hash})
	}
	msgs := make([]*nats.Msg, len(ready))
	for k, p := range ready {
		msgs[k] = p.msg
	}
	var errs []error
	stream.AtomicBatches(ctx, a.js.Conn(), msgs, min(a.cfg.AtomicMin, a.cfg.AtomicBatch), a.cfg.AtomicBatch, a.cfg.BatchTimeout,
		func(idx []int, ack stream.AtomicAck) {
			consecutive := ack.Count == uint64(len(idx))
			for k, i := range idx {
				p := ready[i]
				st := states[p.group]
				for _, e := range p.todo {
					if e.EventID != "" {
						st.events[e.EventID] = struct{}{}
					}
				}
				st.n, st.hash = p.n, p.hash
				// An atomic batch is stored under the stream's isolation
				// lock: its messages take consecutive sequences, the
				// commit last.
				st.seq = ack.Sequence - uint64(len(idx)-1-k)
				if !consecutive {
					a.unload(st)
				}
				r := &out[p.group]
				r.Done, r.Entries, r.N, r.Hash = true, p.todo, p.n, p.hash
			}
			if !consecutive {
				errs = append(errs,
					fmt.Errorf(
						"append batch: the server acknowledged %d messages, %d were sent; the chains are read again", ack.Count, len(idx)))
			}
		},
		func(idx []int, err error) {
			var apiErr *jetstream.APIError
			refused := errors.As(err, &apiErr)
			if refused && apiErr.ErrorCode == stream.ErrCodeAtomicDisabled && !a.atomicOff.Swap(true) {
				a.cfg.Logger.WarnContext(ctx,
					"ledger: the stream does not allow atomic batches (allow_atomic); appending chain by chain", slog.Any("err", err))
			}
			if err != nil && len(errs) < 3 {
				errs = append(errs, err)
			}
			for _, i := range idx {
				p := ready[i]
				out[p.group].Duplicates = 0 // left to Append
				if err != nil && !refused {
					// Unknown outcome (the commit may have been stored):
					// reload these chains before their next append.
					a.unload(states[p.group])
				}
			}
		})
	return out, errors.Join(errs...)
}

// loadAll loads the chains not yet loaded, several at a time; a chain that
// cannot be loaded stays unloaded (read again at its next append).
func (a *Appender) loadAll(ctx context.Context, states []*chainState) {
	sem := make(chan struct{}, 32)
	var wg sync.WaitGroup
	for _, st := range states {
		if st.loaded {
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := a.load(ctx, st); err != nil {
				a.unload(st)
			}
		})
	}
	wg.Wait()
}

// seal seals todo after the chain's head into one block, without changing
// the chain's state; ok is false when they do not fit in one block or an
// entry names another chain.
func (a *Appender) seal(st *chainState, todo []*schemas.Entry) (body []byte, n uint64, hash string, ok bool) {
	n, hash = st.n, st.hash
	// Sealed entries are joined once, at their exact size: growing the
	// body entry by entry copied it again and again (~4% of ingest's CPU).
	sealed := make([][]byte, 0, len(todo))
	size := -1 // n entries take n-1 separators
	for _, e := range todo {
		if e.Chain != st.name {
			return nil, 0, "", false
		}
		e.N, e.PrevHash = n+1, hash
		b, err := chain.Seal(e)
		if err != nil {
			return nil, 0, "", false
		}
		sealed = append(sealed, b)
		if size += len(b) + 1; size > a.cfg.MaxBlockBytes {
			return nil, 0, "", false
		}
		n, hash = e.N, e.Hash
	}
	return bytes.Join(sealed, []byte{'\n'}), n, hash, true
}

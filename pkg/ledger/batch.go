package ledger

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/schemas"
)

// JetStream's atomic batch publish headers (nats-server 2.12+, ADR-50).
const (
	batchIDHeader     = "Nats-Batch-Id"
	batchSeqHeader    = "Nats-Batch-Sequence"
	batchCommitHeader = "Nats-Batch-Commit"
)

// jsAtomicPublishDisabled is the server's error code for a batch sent to a
// stream without allow_atomic.
const jsAtomicPublishDisabled jetstream.ErrorCode = 10174

// jsAtomicPublishDuplicate refuses a batch holding a message id the stream
// has seen within its duplicate window.
const jsAtomicPublishDuplicate jetstream.ErrorCode = 10201

// MaxAtomicBatch is the server's default bound on one atomic batch
// (jetstream limit max_batch_size).
const MaxAtomicBatch = 1000

// MaxAtomicBatchBytes bounds the blocks' bytes in one batch (the server
// stages a batch until its commit).
const MaxAtomicBatchBytes = 8 << 20

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
// stored, and AppendBatch tries each half again, so a conflict costs a few
// more commits and leaves its chain (with at most two others) to Append.
// A group whose block no batch took (that conflict, a block above
// MaxBlockBytes, a chain that cannot be loaded, the stream without
// allow_atomic, an unknown outcome) is returned with Done false and nothing
// of it written by this call; the caller hands it to Append, which resolves
// conflicts and duplicates chain by chain. The error, if any, says why a
// batch was not committed (the first three reasons).
// Chains must be distinct. Groups of fewer than two chains are left to
// Append (a batch of one costs more than a plain publish).
func (a *Appender) AppendBatch(ctx context.Context, groups []Group) ([]BatchResult, error) {
	out := make([]BatchResult, len(groups))
	if a.cfg.AtomicBatch < 2 || len(groups) < 2 || a.atomicOff.Load() {
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
	size := min(a.cfg.AtomicBatch, MaxAtomicBatch)
	var chunks [][]pending
	for len(ready) > 0 {
		k, bytes := 0, 0
		for k < len(ready) && k < size && (k == 0 || bytes+len(ready[k].msg.Data) <= MaxAtomicBatchBytes) {
			bytes += len(ready[k].msg.Data)
			k++
		}
		chunks = append(chunks, ready[:k])
		ready = ready[k:]
	}
	var errs []error
	for len(chunks) > 0 {
		chunk := chunks[0]
		chunks = chunks[1:]
		if len(chunk) < 2 {
			out[chunk[0].group].Duplicates = 0 // left to Append
			continue
		}
		msgs := make([]*nats.Msg, len(chunk))
		for k, p := range chunk {
			msgs[k] = p.msg
		}
		ack, err := a.publishAtomic(ctx, msgs)
		if err != nil {
			if len(errs) < 3 {
				errs = append(errs, err)
			}
			var apiErr *jetstream.APIError
			refused := errors.As(err, &apiErr)
			if refused && apiErr.ErrorCode == jsAtomicPublishDisabled {
				a.atomicOff.Store(true)
				a.cfg.Logger.Warn("ledger: the stream does not allow atomic batches (allow_atomic); appending chain by chain", "err", err)
				refused = false // nothing more to try
			}
			if refused && len(chunk) >= 4 && (isConflict(err) || apiErr.ErrorCode == jsAtomicPublishDuplicate) {
				// Refused as a whole (one chain's head moved, one repeated
				// message id): nothing was stored, so try each half; the
				// offending chain ends in a small chunk left to Append.
				h := len(chunk) / 2
				chunks = append(chunks, chunk[:h], chunk[h:])
				continue
			}
			for _, p := range chunk {
				out[p.group].Duplicates = 0
				if errors.As(err, &apiErr) {
					continue
				}
				// Unknown outcome (the commit may have been stored):
				// reload these chains before their next append.
				states[p.group].loaded = false
				a.Forget(groups[p.group].Chain)
			}
			continue
		}
		consecutive := ack.Count == uint64(len(chunk))
		for k, p := range chunk {
			st := states[p.group]
			for _, e := range p.todo {
				if e.EventID != "" {
					st.events[e.EventID] = struct{}{}
				}
			}
			st.n, st.hash = p.n, p.hash
			// An atomic batch is stored under the stream's isolation lock:
			// its messages take consecutive sequences, the commit last.
			st.seq = ack.Sequence - uint64(len(chunk)-1-k)
			if !consecutive {
				st.loaded = false
				a.Forget(st.name)
			}
			r := &out[p.group]
			r.Done, r.Entries, r.N, r.Hash = true, p.todo, p.n, p.hash
		}
		if !consecutive {
			errs = append(errs, fmt.Errorf("append batch: the server acknowledged %d messages, %d were sent; the chains are read again", ack.Count, len(chunk)))
		}
	}
	return out, errors.Join(errs...)
}

// loadAll loads the chains not yet loaded, several at a time; a chain that
// cannot be loaded stays unloaded (and is forgotten).
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
				st.loaded = false
				a.Forget(st.name)
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
	for _, e := range todo {
		if e.Chain != st.name {
			return nil, 0, "", false
		}
		e.N, e.PrevHash = n+1, hash
		sealed, err := chain.Seal(e)
		if err != nil {
			return nil, 0, "", false
		}
		if len(body) > 0 {
			body = append(body, '\n')
		}
		body = append(body, sealed...)
		if len(body) > a.cfg.MaxBlockBytes {
			return nil, 0, "", false
		}
		n, hash = e.N, e.Hash
	}
	return body, n, hash, true
}

// batchAck is the acknowledgement of an atomic batch's commit (nats.go's
// PubAck has no batch fields).
type batchAck struct {
	Stream   string `json:"stream"`
	Sequence uint64 `json:"seq"`
	BatchID  string `json:"batch"`
	Count    uint64 `json:"count"`
	Error    *struct {
		Code        int    `json:"code"`
		ErrorCode   uint16 `json:"err_code"`
		Description string `json:"description"`
	} `json:"error"`
}

// publishAtomic sends msgs as one atomic batch: every message but the last
// without a reply (the server stages them), the last with the commit header
// as a request whose answer is the batch's acknowledgement. Messages of one
// connection reach the server in order. A refusal is a *jetstream.APIError
// (the batch stored nothing); any other error leaves the outcome unknown.
func (a *Appender) publishAtomic(ctx context.Context, msgs []*nats.Msg) (batchAck, error) {
	nc := a.js.Conn()
	id := nuid.Next()
	last := len(msgs) - 1
	for k, m := range msgs {
		m.Header.Set(batchIDHeader, id)
		m.Header.Set(batchSeqHeader, strconv.Itoa(k+1))
		if k == last {
			m.Header.Set(batchCommitHeader, "1")
			break
		}
		m.Header.Del(batchCommitHeader) // it may have closed a refused batch
		if err := nc.PublishMsg(m); err != nil {
			return batchAck{}, fmt.Errorf("append batch of %d blocks: %w", len(msgs), err)
		}
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.cfg.BatchTimeout)
		defer cancel()
	}
	resp, err := nc.RequestMsgWithContext(ctx, msgs[last])
	if err != nil {
		return batchAck{}, fmt.Errorf("append batch of %d blocks: %w", len(msgs), err)
	}
	var ack batchAck
	if err := json.Unmarshal(resp.Data, &ack); err != nil {
		return batchAck{}, fmt.Errorf("append batch of %d blocks: unreadable acknowledgement %q: %w", len(msgs), resp.Data, err)
	}
	if ack.Error != nil {
		return batchAck{}, fmt.Errorf("append batch of %d blocks: %w", len(msgs), &jetstream.APIError{
			Code: ack.Error.Code, ErrorCode: jetstream.ErrorCode(ack.Error.ErrorCode), Description: ack.Error.Description,
		})
	}
	if ack.Sequence == 0 || ack.BatchID != id {
		return batchAck{}, fmt.Errorf("append batch of %d blocks: acknowledgement %q is not this batch's", len(msgs), resp.Data)
	}
	return ack, nil
}

package ledger

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
)

// ErrChainUnreadable is returned by Append when the chain's last entry
// cannot be read, so no entry can be chained after it. The caller records
// the entries elsewhere (ingest: the _rejected chain) and raises an alarm.
var ErrChainUnreadable = errors.New("chain head unreadable")

// AppenderConfig tunes an Appender.
type AppenderConfig struct {
	// MaxBlockBytes bounds one message (default 512 KiB, must be below the
	// server's max_payload).
	MaxBlockBytes int
	// MaxChains bounds the chains whose state (head and event ids) is kept in
	// memory; evicted chains are reloaded from the stream on next use.
	MaxChains int
	// MaxConflicts bounds the retries after a concurrent writer moved a head.
	MaxConflicts int
	// Logger receives chain faults found while loading.
	Logger *slog.Logger
	// OnFault is called (if set) for every fault found in a loaded chain.
	OnFault func(*chain.Fault)
	// AtomicBatch bounds the blocks AppendBatch commits in one atomic batch
	// (default 500, at most MaxAtomicBatch; negative: AppendBatch writes
	// nothing and leaves every group to Append).
	AtomicBatch int
	// AtomicMin is the fewest chains AppendBatch commits in one atomic batch
	// (default stream.MinAtomicBatch, right for R1: smaller batches cost more
	// than they save on R1 file storage; stream.MinAtomicBatchFor gives the
	// value for replicated streams); fewer are left to Append.
	AtomicMin int
	// BatchTimeout bounds the wait for an atomic batch's acknowledgement
	// when the caller's context has no deadline (default 10s).
	BatchTimeout time.Duration
}

// Appender appends entries to chains. Appends to one chain are serialised in
// this process and protected by the server's per-subject compare-and-set
// against other processes; appends to different chains run concurrently.
// An event id already in a chain is never chained again.
type Appender struct {
	js  jetstream.JetStream
	cfg AppenderConfig
	r   *Reader
	// anchors say where chains trimmed by the rotator begin.
	anchors *Anchors

	// atomicOff is set once the stream refused an atomic batch.
	atomicOff atomic.Bool

	mu     sync.Mutex
	chains map[string]*list.Element // of *chainState
	lru    *list.List
}

type chainState struct {
	name   string
	mu     sync.Mutex
	loaded bool
	n      uint64
	hash   string
	seq    uint64 // stream sequence of the chain's last block; 0 = empty
	events map[string]struct{}
}

// NewAppender returns an Appender writing with js.
func NewAppender(js jetstream.JetStream, cfg AppenderConfig) *Appender {
	if cfg.MaxBlockBytes <= 0 {
		cfg.MaxBlockBytes = 512 << 10
	}
	if cfg.MaxChains <= 0 {
		cfg.MaxChains = 10000
	}
	if cfg.MaxConflicts <= 0 {
		cfg.MaxConflicts = 16
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.AtomicBatch == 0 {
		cfg.AtomicBatch = 500
	}
	if cfg.AtomicMin < 2 {
		cfg.AtomicMin = stream.MinAtomicBatch
	}
	if cfg.BatchTimeout <= 0 {
		cfg.BatchTimeout = 10 * time.Second
	}
	return &Appender{js: js, cfg: cfg, r: NewReader(js, stream.Ledger), anchors: NewAnchors(js),
		chains: map[string]*list.Element{}, lru: list.New()}
}

func (a *Appender) state(name string) *chainState {
	a.mu.Lock()
	defer a.mu.Unlock()
	if el, ok := a.chains[name]; ok {
		a.lru.MoveToFront(el)
		return el.Value.(*chainState)
	}
	st := &chainState{name: name}
	a.chains[name] = a.lru.PushFront(st)
	for a.lru.Len() > a.cfg.MaxChains {
		old := a.lru.Back()
		a.lru.Remove(old)
		delete(a.chains, old.Value.(*chainState).name)
	}
	return st
}

// Prime hands the appender the state of a chain its caller has just read
// and verified (head position and hash, the stream sequence of its last
// block, its event ids), so that the next Append to it need not read the
// chain again. A chain already loaded here takes the primed state only when
// it is further along (another process appended, and the caller read it):
// the next Append then succeeds at once instead of failing its
// compare-and-set and reading the same blocks again. A stale primed state
// is harmless (the compare-and-set fails and the appender catches up).
func (a *Appender) Prime(name string, n uint64, hash string, seq uint64, eventIDs iter.Seq[string]) {
	st := a.state(name)
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.loaded && seq <= st.seq {
		return
	}
	st.n, st.hash, st.seq = n, hash, seq
	if n == 0 {
		st.hash = digest.Zero
	}
	if st.events == nil {
		st.events = map[string]struct{}{}
	}
	for e := range eventIDs {
		st.events[e] = struct{}{}
	}
	st.loaded = true
}

// unload makes the next append read the chain's head again (its outcome is
// unknown, or its state stale), keeping the event ids known to be chained:
// once retention has trimmed their entries, nothing else remembers them.
// The caller holds st.mu.
func (a *Appender) unload(st *chainState) { st.loaded = false }

// Forget drops the cached state of a chain (it is reloaded on next use).
func (a *Appender) Forget(name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if el, ok := a.chains[name]; ok {
		a.lru.Remove(el)
		delete(a.chains, name)
	}
}

// Appended reports the outcome of one Append.
type Appended struct {
	// Entries that were chained, sealed (N, PrevHash, Hash set), in order.
	Entries []*schemas.Entry
	// Duplicates counts entries skipped because their event id was already
	// in the chain (or earlier in the same call).
	Duplicates int
	// Head is the chain's last position and hash after the call.
	N    uint64
	Hash string
	// Conflicts counts failed compare-and-sets: another writer had moved
	// the head, and the appender read what it wrote before retrying.
	Conflicts int
}

// Append chains entries (whose N, PrevHash and Hash are ignored and set here)
// onto chainName in order. Entries with an EventID already in the chain are
// skipped. Every entry's Chain must equal chainName.
func (a *Appender) Append(ctx context.Context, chainName string, entries []*schemas.Entry) (Appended, error) {
	st := a.state(chainName)
	st.mu.Lock()
	defer st.mu.Unlock()
	var out Appended
	if !st.loaded {
		if err := a.load(ctx, st); err != nil {
			a.unload(st)
			return out, err
		}
	}
	todo := st.fresh(entries, &out.Duplicates)
	for len(todo) > 0 {
		done, err := a.publish(ctx, st, todo)
		out.Entries = append(out.Entries, todo[:done]...)
		todo = todo[done:]
		if err == nil {
			continue
		}
		if !stream.IsWrongLastSequence(err) && !errors.Is(err, errDuplicateBlock) {
			a.unload(st) // unknown outcome: reload before the next append
			return out, err
		}
		out.Conflicts++
		if out.Conflicts > a.cfg.MaxConflicts {
			a.unload(st)
			return out, fmt.Errorf("append to %s: head kept moving after %d retries: %w", chainName, out.Conflicts, err)
		}
		// Another writer (or our own earlier, unacknowledged attempt) moved
		// the head: read what it appended, then drop what is now chained.
		if err := a.catchUp(ctx, st); err != nil {
			a.unload(st)
			return out, err
		}
		todo = st.fresh(todo, &out.Duplicates)
	}
	out.N, out.Hash = st.n, st.hash
	return out, nil
}

// fresh returns the entries whose event id is not yet in the chain, marking
// nothing; dups counts the rest.
func (st *chainState) fresh(entries []*schemas.Entry, dups *int) []*schemas.Entry {
	seen := map[string]struct{}{}
	out := make([]*schemas.Entry, 0, len(entries))
	for _, e := range entries {
		if e.EventID != "" {
			if _, ok := st.events[e.EventID]; ok {
				*dups++
				continue
			}
			if _, ok := seen[e.EventID]; ok {
				*dups++
				continue
			}
			seen[e.EventID] = struct{}{}
		}
		out = append(out, e)
	}
	return out
}

var errDuplicateBlock = errors.New("block already stored")

// publish seals and writes todo in blocks; it returns how many entries were
// durably chained.
func (a *Appender) publish(ctx context.Context, st *chainState, todo []*schemas.Entry) (int, error) {
	done := 0
	for done < len(todo) {
		n, prev := st.n, st.hash
		var body []byte
		k := done
		for ; k < len(todo); k++ {
			e := todo[k]
			if e.Chain != st.name {
				return done, fmt.Errorf("append: entry for chain %q passed to chain %q", e.Chain, st.name)
			}
			e.N, e.PrevHash = n+1, prev
			sealed, err := chain.Seal(e)
			if err != nil {
				return done, err
			}
			if len(body) > 0 && len(body)+1+len(sealed) > a.cfg.MaxBlockBytes {
				break
			}
			if len(body) > 0 {
				body = append(body, '\n')
			}
			body = append(body, sealed...)
			n, prev = e.N, e.Hash
		}
		first := todo[done].N
		ack, err := a.js.PublishMsg(ctx, st.block(first, body))
		if err != nil {
			return done, fmt.Errorf("append to %s at n=%d: %w", st.name, first, err)
		}
		if ack.Duplicate {
			return done, errDuplicateBlock
		}
		for i := done; i < k; i++ {
			if id := todo[i].EventID; id != "" {
				st.events[id] = struct{}{}
			}
		}
		st.n, st.hash, st.seq = n, prev, ack.Sequence
		done = k
	}
	return done, nil
}

// block is the message of one block of st whose first entry is at
// position first: deduplicated by chain and position, and chained only
// while the chain's last block is still the one st knows.
func (st *chainState) block(first uint64, body []byte) *nats.Msg {
	msg := nats.NewMsg(subject.Ledger(st.name))
	msg.Data = body
	msg.Header.Set(jetstream.MsgIDHeader, st.name+":"+strconv.FormatUint(first, 10))
	msg.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(st.seq, 10))
	return msg
}

// load reads a chain from the stream: its head and every event id in it.
// Event ids known from before (a reload after an unknown outcome) are
// kept: retention may have trimmed those entries from the hot stream, yet
// they are chained.
func (a *Appender) load(ctx context.Context, st *chainState) error {
	st.n, st.hash, st.seq = 0, digest.Zero, 0
	if st.events == nil {
		st.events = map[string]struct{}{}
	}
	if err := a.readFrom(ctx, st, 0, chain.NewVerifierFrom(st.name, a.anchors.StartOf(ctx, st.name))); err != nil {
		return err
	}
	st.loaded = true
	return nil
}

// catchUp reads the blocks appended after st.seq by someone else.
func (a *Appender) catchUp(ctx context.Context, st *chainState) error {
	return a.readFrom(ctx, st, st.seq, chain.NewVerifierAt(st.name, st.n, st.hash))
}

func (a *Appender) readFrom(ctx context.Context, st *chainState, after uint64, v *chain.Verifier) error {
	faulted := false
	err := a.r.Walk(ctx, st.name, after, func(s Stored) error {
		var h struct {
			N       uint64 `json:"n"`
			Hash    string `json:"hash"`
			EventID string `json:"event_id"`
		}
		if !faulted {
			if err := v.Next(s.Raw); err != nil {
				faulted = true
				var f *chain.Fault
				if errors.As(err, &f) {
					a.cfg.Logger.ErrorContext(ctx, "ledger chain fault", slog.String("chain", f.Chain), slog.Any("n", f.N),
						slog.String("reason", f.Reason))
					if a.cfg.OnFault != nil {
						a.cfg.OnFault(f)
					}
				}
			}
		}
		if err := json.Unmarshal(s.Raw, &h); err != nil || h.N == 0 || !digest.Valid(h.Hash) {
			return fmt.Errorf("%w: %s: entry in block %d cannot be read", ErrChainUnreadable, st.name, s.Seq)
		}
		if h.EventID != "" {
			st.events[h.EventID] = struct{}{}
		}
		st.n, st.hash, st.seq = h.N, h.Hash, s.Seq
		return nil
	})
	if err != nil && !errors.Is(err, ErrChainUnreadable) {
		return fmt.Errorf("load chain %s: %w", st.name, err)
	}
	return err
}

package replay

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/canon"
)

// The replay's pipeline. Messages are read in ledger order into a queue:
// their entries split out, and each chain's first entry started there (in
// order: starting may read the predecessor from the stream). The queue's
// entries are then checked against their chains on GOMAXPROCS goroutines,
// each chain's entries in order on one of them (chains are independent),
// and emitted in ledger order on the reading goroutine: counted, placed in
// the window, filtered and passed to the callback. The summary, the faults
// and the records are those of checking one entry after the other.
//
// The queue is flushed when it holds maxQueued entries, when no message is
// waiting to be read (so a replay that follows the ledger passes each
// entry on as soon as it is read), and at the end.

const (
	// maxQueued bounds the entries of one flush.
	maxQueued = 4096
	// minParallel is the fewest entries worth spreading over goroutines.
	minParallel = 64
)

// queued is one message read into the queue.
type queued struct {
	seq        uint64
	src        Source
	first, end int  // its entries in queue.slots
	block      bool // a block of entries (else a restored copy, or not a chain's)
	restored   bool
	final      bool // the last message the replay reads
}

// slot is one entry in the queue.
type slot struct {
	rec     Record
	st      *chainState
	decoded bool // rec.Head is decoded
	terr    error
}

type queue struct {
	msgs  []queued
	slots []slot
	// The entries of each chain in this flush, in order.
	groups map[*chainState]int
	lists  [][]int
}

func (q *queue) full() bool { return len(q.slots) >= maxQueued }

// add queues a message; block messages have their entries split out and
// chains that start in them started.
func (r *replayer) add(ctx context.Context, m queued, chainName string, data []byte) {
	q := &r.q
	m.first = len(q.slots)
	if m.block {
		i, rest := 0, data
		for {
			raw := rest
			cut := bytes.IndexByte(rest, '\n')
			if cut >= 0 {
				raw, rest = rest[:cut], rest[cut+1:]
			}
			i++
			q.slots = append(q.slots, slot{rec: Record{Pos: Pos{Seq: m.seq, Index: i}, Source: m.src, Chain: chainName, Raw: raw}})
			s := &q.slots[len(q.slots)-1]
			st := r.chains[chainName]
			if st == nil {
				herr := decodeHead(s.rec.Raw, &s.rec.Head, nil)
				s.decoded = true
				st = r.start(ctx, m.src, m.seq, &s.rec, herr)
				r.chains[chainName] = st
			}
			s.st = st
			if cut < 0 {
				break
			}
		}
	}
	m.end = len(q.slots)
	q.msgs = append(q.msgs, m)
}

// flush checks the queued entries and emits them; done reports the end
// of the replay (the final message, or past until). The queue is empty
// afterwards.
func (r *replayer) flush(until time.Time) (done bool, err error) {
	q := &r.q
	defer func() {
		clear(q.slots) // drop the references to the messages
		q.slots, q.msgs = q.slots[:0], q.msgs[:0]
	}()
	q.check()
	for _, m := range q.msgs {
		if m.restored {
			r.sum.Restored++
		}
		if m.block {
			err := r.emit(q.slots[m.first:m.end])
			if r.cfg.Progress != nil {
				r.cfg.Progress(m.seq, r.end)
			}
			if err != nil {
				return true, err
			}
		}
		if !until.IsZero() && r.blockTime.After(until) {
			return true, nil // past the window (by ingested_at, as it was placed)
		}
		if m.final {
			return true, nil
		}
	}
	return false, nil
}

// check checks every queued entry against its chain: the chains spread
// over up to GOMAXPROCS goroutines, each chain's entries in order.
func (q *queue) check() {
	if q.groups == nil {
		q.groups = map[*chainState]int{}
	}
	clear(q.groups)
	n := 0
	for i := range q.slots {
		g, ok := q.groups[q.slots[i].st]
		if !ok {
			g = n
			q.groups[q.slots[i].st] = g
			if n++; n > len(q.lists) {
				q.lists = append(q.lists, nil)
			}
			q.lists[g] = q.lists[g][:0]
		}
		q.lists[g] = append(q.lists[g], i)
	}
	workers := min(runtime.GOMAXPROCS(0), n)
	if len(q.slots) < minParallel {
		workers = 1
	}
	var next atomic.Int64
	work := func() {
		var ms []canon.Member
		for {
			g := int(next.Add(1) - 1)
			if g >= n {
				return
			}
			for _, i := range q.lists[g] {
				checkSlot(&q.slots[i], &ms)
			}
		}
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}

// checkSlot decodes and checks one entry, on its chain's goroutine.
func checkSlot(s *slot, ms *[]canon.Member) {
	rec := &s.rec
	rec.Check, rec.Reason = check(s.st, rec, s.decoded, ms)
	t, err := time.Parse(time.RFC3339Nano, rec.Head.IngestedAt)
	if err == nil {
		rec.Time = t
	}
	s.terr = err
}

// emit counts, places and passes on the checked entries of one message,
// in order.
func (r *replayer) emit(slots []slot) error {
	for i := range slots {
		s := &slots[i]
		rec := &s.rec
		r.sum.Read++
		if st := s.st; !st.counted {
			st.counted = true
			r.sum.Starts[st.how]++
			if st.unanchored {
				r.sum.Unanchored = append(r.sum.Unanchored, rec.Chain)
			}
		}
		if rec.Check == CheckFault {
			r.fault(rec)
		}
		if s.terr == nil {
			r.blockTime = rec.Time
		}
		if !r.cfg.After.Less(rec.Pos) || (s.terr == nil && !r.cfg.Window.Contains(rec.Time)) {
			continue
		}
		if !r.cfg.Filter.Match(&rec.Head) {
			continue
		}
		if s.terr != nil && rec.Check != CheckFault {
			// Not placeable in time: shown, never dropped.
			rec.Check, rec.Reason = CheckFault, fmt.Sprintf("ingested_at %q is not an RFC 3339 time", rec.Head.IngestedAt)
			r.fault(rec)
		}
		if err := r.fn(rec); err != nil {
			return err
		}
		// Counted once the callback took it: Last is where a resumed
		// export goes on.
		r.sum.Emitted++
		if rec.Source == SourceArchive {
			r.sum.FromArchive++
		} else {
			r.sum.FromHot++
		}
		r.sum.Last = rec.Pos
	}
	return nil
}

// decodeHead decodes the head of an entry. An entry canon.ScanObject
// proves canonical, whose head members are plain (strings without
// escapes, n a small integer), is read from its members as stored; any
// other is decoded with json.Unmarshal, which decodes those the same way
// (TestDecodeHeadMatchesUnmarshal).
func decodeHead(raw []byte, h *Head, ms *[]canon.Member) error {
	var scratch []canon.Member
	if ms == nil {
		ms = &scratch
	}
	*h = Head{}
	members, ok := canon.ScanObject(raw, (*ms)[:0])
	*ms = members
	if ok && headFrom(members, h) {
		return nil
	}
	*h = Head{}
	return json.Unmarshal(raw, h, json.RejectUnknownMembers(false))
}

// headFrom fills h from an object's members; false when one is not plain.
func headFrom(ms []canon.Member, h *Head) bool {
	for _, m := range ms {
		var dst *string
		switch string(m.Name) {
		case "n":
			v := m.Value
			if len(v) == 0 || v[0] < '0' || v[0] > '9' {
				return false
			}
			var n uint64
			for _, c := range v { // at most 15 digits (ScanObject)
				n = n*10 + uint64(c-'0')
			}
			h.N = n
			continue
		case "prev_hash":
			dst = &h.PrevHash
		case "hash":
			dst = &h.Hash
		case "chain":
			dst = &h.Chain
		case "host":
			dst = &h.Host
		case "kind":
			dst = &h.Kind
		case "hook_event":
			dst = &h.HookEvent
		case "ingested_at":
			dst = &h.IngestedAt
		default:
			continue
		}
		v := m.Value
		if len(v) < 2 || v[0] != '"' {
			return false
		}
		v = v[1 : len(v)-1]
		for _, c := range v {
			if c == '\\' {
				return false
			}
		}
		*dst = string(v)
	}
	return true
}

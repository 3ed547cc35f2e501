package verifier

import (
	"container/list"
	"context"
	"fmt"
	"sync"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/evidence"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/schemas"
)

// sessionView is a session's ledger as the verifier reads it: evidence
// entries in order, indexed by event id, with claims and verdicts decoded.
// It only grows; a view is used under its session's lock.
type sessionView struct {
	mu       sync.Mutex
	name     string
	chain    *chain.Verifier // every entry read is verified: attestations name these hashes
	entries  []evidence.Entry
	index    map[string]int
	claims   map[string]*schemas.Claim
	verdicts map[string]*schemas.Verdict
	lastSeq  uint64
	loop     evidence.Loop // which tool results are the agent's own
}

// refresh reads the blocks appended since the last read, verifying the
// hash chain as it goes (a fault is returned as a *chain.Fault).
func (v *sessionView) refresh(ctx context.Context, r *ledger.Reader, anchors *ledger.Anchors) error {
	if v.chain == nil {
		v.chain = chain.NewVerifierFrom(v.name, anchors.StartOf(ctx, v.name))
	}
	return r.Walk(ctx, v.name, v.lastSeq, func(s ledger.Stored) error {
		if err := v.chain.Next(s.Raw); err != nil {
			return err
		}
		var e schemas.Entry
		if err := json.Unmarshal(s.Raw, &e); err != nil {
			return fmt.Errorf("session %s: unreadable entry in block %d: %w", v.name, s.Seq, err)
		}
		v.lastSeq = s.Seq
		if e.EventID != "" {
			v.index[e.EventID] = len(v.entries)
		}
		if e.Claim != nil {
			v.claims[e.EventID] = e.Claim
		}
		if e.Verdict != nil {
			v.verdicts[e.EventID] = e.Verdict
		}
		ev := evidence.Decode(e)
		for _, r := range v.loop.Observe(&ev) {
			v.revoke(r)
		}
		v.entries = append(v.entries, ev)
		return nil
	})
}

// revoke marks an earlier tool result as not the agent's own (see
// evidence.Loop).
func (v *sessionView) revoke(r evidence.Revoked) {
	for i := len(v.entries) - 1; i >= 0; i-- {
		if v.entries[i].N == r.N {
			v.entries[i].Untrusted = r.Reason
			return
		}
	}
}

// head returns the view's last position and hash.
func (v *sessionView) head() (uint64, string) {
	return v.chain.Head()
}

// eventIDs lists the event ids in the view.
func (v *sessionView) eventIDs(yield func(string) bool) {
	for id := range v.index {
		if !yield(id) {
			return
		}
	}
}

// sessionCache keeps the most recently used sessions' views.
type sessionCache struct {
	r       *ledger.Reader
	anchors *ledger.Anchors
	max     int

	mu  sync.Mutex
	m   map[string]*list.Element
	lru *list.List
}

func newSessionCache(r *ledger.Reader, anchors *ledger.Anchors, max int) *sessionCache {
	return &sessionCache{r: r, anchors: anchors, max: max, m: map[string]*list.Element{}, lru: list.New()}
}

func (c *sessionCache) view(name string) *sessionView {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[name]; ok {
		c.lru.MoveToFront(el)
		return el.Value.(*sessionView)
	}
	v := &sessionView{name: name, index: map[string]int{}, claims: map[string]*schemas.Claim{}, verdicts: map[string]*schemas.Verdict{}}
	c.m[name] = c.lru.PushFront(v)
	for c.lru.Len() > c.max {
		old := c.lru.Back()
		c.lru.Remove(old)
		delete(c.m, old.Value.(*sessionView).name)
	}
	return v
}

// with runs fn on the session's view, holding its lock, after making sure
// the view contains the entry eventID.
func (c *sessionCache) with(ctx context.Context, session, eventID string, fn func(*sessionView) error) error {
	v := c.view(session)
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, ok := v.index[eventID]; !ok {
		if err := v.refresh(ctx, c.r, c.anchors); err != nil {
			return err
		}
		if _, ok := v.index[eventID]; !ok {
			return fmt.Errorf("session %s has no entry %s yet", session, eventID)
		}
	}
	return fn(v)
}

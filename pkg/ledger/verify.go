package ledger

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/claimcheck/claimcheck/pkg/canon"
	"github.com/claimcheck/claimcheck/pkg/chain"
)

// VerifyConfig is one verification of a ledger stream's chains.
type VerifyConfig struct {
	// Chain, when set, is the only chain verified.
	Chain string
	// Start, when set, tells where a chain trimmed by retention may begin
	// (Anchors.StartOf).
	Start func(chainName string) chain.StartFunc
	// Check, when set, is run on every entry whose chain checks pass (the
	// entry schema): concurrently, on any goroutine. ms are the entry's
	// top-level members when the chain check proved it canonical
	// (chain.Verifier.NextScanned), else nil. Its error fails the chain at
	// that entry.
	Check func(raw []byte, ms []canon.Member) error
}

// VerifyResult is what Verify found.
type VerifyResult struct {
	Chains  int // chains read
	Entries int // entries checked (a chain's entries after its first fault are not)
	// Faults are the first fault of each broken chain, in ledger order.
	Faults []*chain.Fault
}

// verifyBatch is how many entries are read before they are checked.
const verifyBatch = 4096

// Verify checks every chain of the stream (or cfg.Chain) from its first
// stored entry: hashes, positions, links and event ids (chain.Verifier),
// then cfg.Check of each entry. It reports each broken chain's first fault
// and goes on with the others. The result is that of checking the entries
// one after the other in ledger order; the work is spread over GOMAXPROCS
// goroutines: each chain's entries in order on one of them (chains are
// independent), cfg.Check on any, while the next entries are read.
func (r *Reader) Verify(ctx context.Context, cfg VerifyConfig) (VerifyResult, error) {
	var res VerifyResult
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan []Stored, 2)
	var rerr error
	go func() {
		defer close(batches)
		var b []Stored
		send := func() error {
			select {
			case batches <- b:
				b = make([]Stored, 0, verifyBatch)
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		fn := func(s Stored) error {
			if b = append(b, s); len(b) >= verifyBatch {
				return send()
			}
			return nil
		}
		if cfg.Chain != "" {
			rerr = r.Walk(ctx, cfg.Chain, 0, fn)
		} else {
			rerr = r.WalkAll(ctx, fn)
		}
		if rerr == nil && len(b) > 0 {
			rerr = send()
		}
	}()
	v := verification{cfg: cfg, chains: map[string]*verified{}}
	for b := range batches {
		v.batch(b, &res)
	}
	res.Chains = len(v.chains)
	return res, rerr
}

type verified struct {
	v      *chain.Verifier
	failed bool
	broken bool // its verifier found a fault in this batch
}

type verification struct {
	cfg    VerifyConfig
	chains map[string]*verified
	// per batch
	of     []*verified // each entry's chain
	chainE []error     // each entry's chain check
	pos    []uint64    // each entry's position, once its chain check passed
	checkE []error     // each entry's cfg.Check
	groups map[*verified]int
	lists  [][]int
}

// batch checks a batch of entries and merges the results in order.
func (v *verification) batch(b []Stored, res *VerifyResult) {
	v.of, v.chainE, v.pos, v.checkE = v.of[:0], v.chainE[:0], v.pos[:0], v.checkE[:0]
	if v.groups == nil {
		v.groups = map[*verified]int{}
	}
	clear(v.groups)
	n := 0
	for i, s := range b {
		c := v.chains[s.Chain]
		if c == nil {
			c = &verified{}
			var start chain.StartFunc
			if v.cfg.Start != nil {
				start = v.cfg.Start(s.Chain)
			}
			c.v = chain.NewVerifierFrom(s.Chain, start)
			v.chains[s.Chain] = c
		}
		v.of = append(v.of, c)
		v.chainE, v.pos, v.checkE = append(v.chainE, nil), append(v.pos, 0), append(v.checkE, nil)
		if c.failed {
			continue
		}
		g, ok := v.groups[c]
		if !ok {
			g = n
			v.groups[c] = g
			if n++; n > len(v.lists) {
				v.lists = append(v.lists, nil)
			}
			v.lists[g] = v.lists[g][:0]
		}
		v.lists[g] = append(v.lists[g], i)
	}
	// A group each chain; the entries' checks with their chain, from the
	// members its check read, or, with fewer chains than goroutines, in
	// runs of their own.
	const run = 64
	procs := runtime.GOMAXPROCS(0)
	inline := v.cfg.Check != nil && n >= 2*procs
	runs := 0
	if v.cfg.Check != nil && !inline {
		runs = (len(b) + run - 1) / run
	}
	var next atomic.Int64
	work := func() {
		var ms []canon.Member
		for {
			k := int(next.Add(1) - 1)
			switch {
			case k < n:
				for _, i := range v.lists[k] {
					c := v.of[i]
					if c.broken {
						break
					}
					var err error
					var proved bool
					if ms, proved, err = c.v.NextScanned(b[i].Raw, ms); err != nil {
						v.chainE[i], c.broken = err, true
						continue
					}
					v.pos[i], _ = c.v.Head()
					if inline {
						var scanned []canon.Member
						if proved {
							scanned = ms
						}
						v.checkE[i] = v.cfg.Check(b[i].Raw, scanned)
					}
				}
			case k < n+runs:
				for i := (k - n) * run; i < min(len(b), (k-n+1)*run); i++ {
					if !v.of[i].failed {
						v.checkE[i] = v.cfg.Check(b[i].Raw, nil)
					}
				}
			default:
				return
			}
		}
	}
	workers := min(procs, n+runs)
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	// In ledger order: the first fault of each chain.
	for i, s := range b {
		c := v.of[i]
		if c.failed {
			continue
		}
		res.Entries++
		err := v.chainE[i]
		if err == nil && v.checkE[i] != nil {
			err = &chain.Fault{Chain: s.Chain, N: v.pos[i], Reason: v.checkE[i].Error()}
		}
		if err != nil {
			var f *chain.Fault
			if !errors.As(err, &f) {
				f = &chain.Fault{Chain: s.Chain, Reason: err.Error()}
			}
			c.failed = true
			res.Faults = append(res.Faults, f)
		}
	}
}

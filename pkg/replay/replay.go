// Package replay reads the ledger in ledger order over a window of time,
// across the archive and the hot stream, and checks every entry against
// its chain while it streams: the replay behind `claimcheck ledger replay`
// and `claimcheck export`.
//
// Ledger order is stream order. The archive is a prefix of the LEDGER
// stream (segments of consecutive sequences), so a replay reads the
// archived segments that overlap the window, then the hot stream after the
// archive's last sequence — or, when the window starts after everything
// archived, from the window's start time with a JetStream ordered consumer
// (no scan of older messages). Entries are placed in the window by their
// ingested_at; the hot read starts Slack before the window, so entries whose
// ingested_at (ingest's clock) is slightly ahead of the stream's own time
// (the server's clock) are not missed.
//
// Each chain is verified from its first entry read: entry 1 from the zero
// hash; an entry n > 1 against its predecessor, fetched from the hot stream
// (its hash recomputed), or the rotator's anchor, or the last entry of an
// archived segment's signed manifest. When none can be found the chain is
// reported unanchored: its entries are verified among themselves, but not
// linked to what came before the replay.
package replay

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/archive"
	"github.com/claimcheck/claimcheck/pkg/canon"
	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/stream"
)

// DefaultSlack is how far before the window the hot read starts, and how
// far past its end it reads.
const DefaultSlack = time.Minute

// Source says where an entry was read.
type Source string

// Sources.
const (
	SourceArchive Source = "archive"
	SourceHot     Source = "hot"
)

// Check is the outcome of checking one entry against its chain.
type Check string

// Checks.
const (
	// CheckOK: the hash was recomputed, position and prev_hash link it to
	// a verified predecessor.
	CheckOK Check = "ok"
	// CheckUnanchored: verified like CheckOK from the chain's first entry
	// in this replay on, but that entry's link to its predecessor could
	// not be checked (Summary.Unanchored names the chain).
	CheckUnanchored Check = "unanchored"
	// CheckFault: this entry is where the chain breaks (Record.Reason).
	CheckFault Check = "fault"
	// CheckUnverified: the chain broke earlier in this replay.
	CheckUnverified Check = "unverified"
)

// Head is what a replay decodes of every entry.
type Head struct {
	N          uint64 `json:"n"`
	PrevHash   string `json:"prev_hash"`
	Hash       string `json:"hash"`
	Chain      string `json:"chain"`
	Host       string `json:"host"`
	Kind       string `json:"kind"`
	HookEvent  string `json:"hook_event"`
	IngestedAt string `json:"ingested_at"`
}

// Record is one entry of a replay. The callback must not keep the
// *Record; Raw stays valid.
type Record struct {
	Pos    Pos
	Source Source
	Chain  string
	Raw    []byte // the entry as stored (canonical JSON)
	Head   Head
	Time   time.Time // ingested_at; zero when unreadable (Check is then CheckFault)
	Check  Check
	Reason string // why, for CheckFault, CheckUnanchored and CheckUnverified
}

// Fault is a chain that broke, or an entry that could not be read.
type Fault struct {
	Chain  string `json:"chain"`
	N      uint64 `json:"n"`
	Pos    string `json:"pos"`
	Reason string `json:"reason"`
}

// Summary says what a replay read.
type Summary struct {
	Read        int            `json:"read"`    // entries read and checked (inside the window or not)
	Emitted     int            `json:"emitted"` // entries passed to the callback
	FromArchive int            `json:"from_archive"`
	FromHot     int            `json:"from_hot"`
	Segments    int            `json:"segments"` // archive segments read
	Starts      map[string]int `json:"starts"`   // how chains were anchored: genesis, hot, anchor, archive, unanchored
	Unanchored  []string       `json:"unanchored,omitempty"`
	Faults      []Fault        `json:"faults,omitempty"`
	// Gaps are parts of the window the replay could not read: segments
	// retention deleted, ranges missing from the archive.
	Gaps     []string `json:"gaps,omitempty"`
	Restored int      `json:"restored_copies_skipped,omitempty"`
	Last     Pos      `json:"-"` // the last entry emitted
	LastPos  string   `json:"last_pos,omitempty"`
}

// Config is one replay.
type Config struct {
	JS     jetstream.JetStream
	Stream string // default stream.Ledger
	// Archive, when set, is read for the part of the window it holds; Keys
	// verifies its checkpoints (required with Archive).
	Archive *archive.Store
	Keys    *keyring.Set
	// Anchors, when set, vouch for the starts of chains the rotator trimmed.
	Anchors *ledger.Anchors
	Window  Window
	Filter  Filter
	// After skips every entry up to and including this position.
	After Pos
	// Follow keeps reading new entries until ctx ends (or Window.Until).
	Follow bool
	Slack  time.Duration // default DefaultSlack
	Batch  int           // messages asked for ahead of the one being read; default 512
	// Now is the clock Follow checks Window.Until against (default time.Now).
	Now func() time.Time
	// Progress, when set, is told after each block the stream sequence
	// read and the stream's last sequence when the replay began.
	Progress func(seq, last uint64)
}

// Run replays cfg, calling fn for every entry that passes the window, the
// filter and After, in ledger order. Chain faults do not stop it: they are
// in the records and the summary. err is for what stops the replay: the
// stream or archive unreadable, ctx, or fn's error.
func Run(ctx context.Context, cfg Config, fn func(*Record) error) (*Summary, error) {
	if err := cfg.Window.Check(); err != nil {
		return nil, err
	}
	if err := cfg.Filter.Check(); err != nil {
		return nil, err
	}
	if cfg.Archive != nil && cfg.Keys == nil {
		return nil, errors.New("replay: an archive needs the key set that verifies its checkpoints")
	}
	if cfg.Stream == "" {
		cfg.Stream = stream.Ledger
	}
	if cfg.Archive != nil && cfg.Stream != stream.Ledger {
		return nil, fmt.Errorf("replay: the archive holds %s, not %s", stream.Ledger, cfg.Stream)
	}
	if cfg.Slack <= 0 {
		cfg.Slack = DefaultSlack
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 512
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	r := &replayer{cfg: cfg, fn: fn, reader: ledger.NewReader(cfg.JS, cfg.Stream),
		sum: &Summary{Starts: map[string]int{}}, chains: map[string]*chainState{}}
	if s, err := cfg.JS.Stream(ctx, cfg.Stream); err != nil {
		return r.sum, fmt.Errorf("stream %s: %w", cfg.Stream, err)
	} else if info, err := s.Info(ctx); err != nil {
		return r.sum, fmt.Errorf("stream %s info: %w", cfg.Stream, err)
	} else {
		r.end = info.State.LastSeq
	}
	var from uint64
	if cfg.Archive != nil {
		var err error
		if from, err = r.readArchive(ctx); err != nil {
			return r.sum, err
		}
	}
	err := r.readHot(ctx, from)
	if !r.sum.Last.IsZero() {
		r.sum.LastPos = r.sum.Last.String()
	}
	return r.sum, err
}

type replayer struct {
	cfg    Config
	fn     func(*Record) error
	reader *ledger.Reader
	sum    *Summary
	chains map[string]*chainState
	// heads are the last entries of each chain in every archived segment's
	// signed manifest (chain → n → hash), for anchoring mid-chain starts.
	heads map[string]map[uint64]string
	// blockTime is the ingested_at of the last entry read.
	blockTime time.Time
	// end is the stream's last sequence when the replay began.
	end uint64
	// q is the messages read and not yet emitted (pipeline.go).
	q queue
}

type chainState struct {
	v          *chain.Verifier
	broken     uint64 // the position where it broke; 0 while intact
	unanchored bool
	// how the chain was anchored (a key of Summary.Starts), counted when
	// its first entry is emitted in ledger order.
	how     string
	counted bool
}

func (r *replayer) fault(rec *Record) {
	r.sum.Faults = append(r.sum.Faults, Fault{Chain: rec.Chain, N: rec.Head.N, Pos: rec.Pos.String(), Reason: rec.Reason})
}

// check verifies one entry against its chain: on the chain's worker, in
// the chain's order (pipeline.go). rec.Head is decoded unless decoded is
// set; ms is scratch.
func check(st *chainState, rec *Record, decoded bool, ms *[]canon.Member) (Check, string) {
	if st.broken != 0 {
		if !decoded {
			_ = decodeHead(rec.Raw, &rec.Head, ms)
		}
		return CheckUnverified, fmt.Sprintf("the chain broke at position %d earlier in this replay", st.broken)
	}
	members, proved, err := st.v.NextScanned(rec.Raw, *ms)
	*ms = members
	if !decoded {
		// The head from the members Next read, or decoded.
		if rec.Head = (Head{}); !proved || !headFrom(members, &rec.Head) {
			_ = decodeHead(rec.Raw, &rec.Head, ms) // an entry that does not decode has failed its check
		}
	}
	if err != nil {
		var f *chain.Fault
		reason := err.Error()
		if errors.As(err, &f) {
			reason = f.Reason
			st.broken = max(f.N, 1)
		} else {
			st.broken = max(rec.Head.N, 1)
		}
		return CheckFault, reason
	}
	if st.unanchored {
		return CheckUnanchored, "the link to the entry before this replay's first entry of the chain could not be checked"
	}
	return CheckOK, ""
}

// start begins verifying a chain at its first entry in this replay.
// It runs as the entry is read, in ledger order (it may read the
// predecessor from the stream); how the chain started is counted in the
// summary when the entry is emitted.
func (r *replayer) start(ctx context.Context, src Source, seq uint64, rec *Record, herr error) *chainState {
	h := rec.Head
	if herr != nil || h.N <= 1 {
		return &chainState{v: chain.NewVerifier(rec.Chain), how: "genesis"} // entry 1, or a fault Next reports
	}
	prevN := h.N - 1
	if src == SourceHot {
		p, err := r.reader.Before(ctx, rec.Chain, seq)
		if err == nil {
			var ph Head
			if json.Unmarshal(p.Raw, &ph, json.RejectUnknownMembers(false)) == nil {
				if computed, herr := chain.Hash(p.Raw); herr == nil && computed == ph.Hash {
					// Next checks that this entry follows it (position, prev_hash).
					return &chainState{v: chain.NewVerifierAt(rec.Chain, ph.N, computed), how: "hot"}
				}
			}
			return &chainState{v: chain.NewVerifierAt(rec.Chain, prevN, "(predecessor at sequence "+
				strconv.FormatUint(p.Seq, 10)+" does not hash to its own hash)"), how: "hot"}
		}
		if r.cfg.Anchors != nil {
			if hash, ok := r.cfg.Anchors.StartOf(ctx, rec.Chain)(prevN); ok {
				return &chainState{v: chain.NewVerifierAt(rec.Chain, prevN, hash), how: "anchor"}
			}
		}
	}
	if hash, ok := r.heads[rec.Chain][prevN]; ok {
		return &chainState{v: chain.NewVerifierAt(rec.Chain, prevN, hash), how: "archive"}
	}
	return &chainState{v: chain.NewVerifierAt(rec.Chain, prevN, h.PrevHash), unanchored: true, how: "unanchored"}
}

// readHot reads the hot stream from sequence from (0: from the window's
// start time), skipping what the archive part already covered.
func (r *replayer) readHot(ctx context.Context, from uint64) error {
	s, err := r.cfg.JS.Stream(ctx, r.cfg.Stream)
	if err != nil {
		return fmt.Errorf("stream %s: %w", r.cfg.Stream, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return fmt.Errorf("stream %s info: %w", r.cfg.Stream, err)
	}
	subs := info.Config.Subjects
	if len(subs) != 1 || !strings.HasSuffix(subs[0], ".>") {
		return fmt.Errorf("stream %s: subjects %v: want exactly one \"<prefix>.>\" subject", r.cfg.Stream, subs)
	}
	prefix := strings.TrimSuffix(subs[0], ".>")
	filter := subs[0]
	if r.cfg.Filter.Session != "" {
		filter = prefix + "." + r.cfg.Filter.Session
	}
	from = max(from, r.cfg.After.Seq)
	oc := jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter}}
	switch {
	case from > 0:
		oc.DeliverPolicy, oc.OptStartSeq = jetstream.DeliverByStartSequencePolicy, from
	case !r.cfg.Window.Since.IsZero():
		oc.DeliverPolicy, oc.OptStartTime = jetstream.DeliverByStartTimePolicy, ptr(r.cfg.Window.Since.Add(-r.cfg.Slack))
	default:
		oc.DeliverPolicy = jetstream.DeliverAllPolicy
	}
	last := info.State.LastSeq
	if !r.cfg.Follow && (info.State.Msgs == 0 || last < from ||
		(oc.OptStartTime != nil && info.State.LastTime.Before(*oc.OptStartTime))) {
		return nil
	}
	cons, err := s.OrderedConsumer(ctx, oc)
	if err != nil {
		return fmt.Errorf("read %s: %w", r.cfg.Stream, err)
	}
	return r.consume(ctx, cons, prefix, from, last)
}

func ptr[T any](v T) *T { return &v }

// consume reads the ordered consumer until the snapshot's last sequence
// (or, following, until ctx ends or the window closes). A goroutine keeps
// a continuous pull running (up to Batch messages asked ahead), so the
// server reads the next messages while this one checks the last.
func (r *replayer) consume(ctx context.Context, cons jetstream.Consumer, prefix string, from, last uint64) error {
	until := time.Time{}
	if !r.cfg.Window.Until.IsZero() {
		until = r.cfg.Window.Until.Add(r.cfg.Slack)
	}
	wait := time.Second
	if r.cfg.Follow {
		wait = 5 * time.Second
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(r.cfg.Batch))
	if err != nil {
		return fmt.Errorf("read %s: %w", r.cfg.Stream, err)
	}
	msgs, stop := make(chan jetstream.Msg, r.cfg.Batch), make(chan struct{})
	var rerr error // set before msgs is closed
	go func() {
		defer close(msgs)
		for {
			m, err := it.Next()
			if err != nil {
				if !errors.Is(err, jetstream.ErrMsgIteratorClosed) {
					rerr = err
				}
				return
			}
			select {
			case msgs <- m:
			case <-stop:
				return
			}
		}
	}()
	defer func() {
		close(stop)
		it.Stop()
		for range msgs { // until the goroutine has ended
		}
	}()
	idle := time.NewTimer(wait)
	defer idle.Stop()
	for {
		idle.Reset(wait)
		var m jetstream.Msg
		select {
		case m = <-msgs:
			if m == nil {
				if r.cfg.Follow && ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("read %s: %w", r.cfg.Stream, cmp.Or(rerr, errors.New("the consumer stopped")))
			}
		case <-ctx.Done():
			if r.cfg.Follow {
				return nil // following ends when the caller stops it
			}
			return ctx.Err()
		case <-idle.C:
			if r.cfg.Follow {
				if !until.IsZero() && r.cfg.Now().After(until) {
					return nil
				}
				continue
			}
			// Nothing within the wait: done when the consumer has nothing left.
			ci, err := cons.Info(ctx)
			if err != nil {
				return fmt.Errorf("read %s: %w", r.cfg.Stream, err)
			}
			if ci.NumPending == 0 {
				return nil
			}
			continue
		}
		// This message and those already waiting, then a flush.
		for m != nil {
			final, err := r.addHot(ctx, m, prefix, from, last)
			if err != nil {
				if done, ferr := r.flush(until); ferr != nil || done {
					return ferr
				}
				return err
			}
			m = nil
			if !final && !r.q.full() {
				select {
				case m = <-msgs: // nil once the reader stopped: the next receive reports it
				default:
				}
			}
		}
		if done, err := r.flush(until); err != nil || done {
			return err
		}
	}
}

// addHot queues a message of the hot stream; final reports the last
// message the replay reads.
func (r *replayer) addHot(ctx context.Context, m jetstream.Msg, prefix string, from, last uint64) (final bool, err error) {
	meta, err := m.Metadata()
	if err != nil {
		return true, fmt.Errorf("read %s: %w", r.cfg.Stream, err)
	}
	q := queued{seq: meta.Sequence.Stream, src: SourceHot}
	q.final = !r.cfg.Follow && (q.seq >= last || meta.NumPending == 0)
	c, ok := chainOf(prefix, m.Subject())
	switch {
	case !ok, q.seq < from:
	case r.cfg.Archive != nil && m.Headers().Get(archive.RestoredHeader) != "":
		// A copy archive restore put back: its original is archived.
		q.restored = true
	default:
		q.block = true
	}
	r.add(ctx, q, c, m.Data())
	return q.final, nil
}

func chainOf(prefix, subj string) (string, bool) {
	c, ok := strings.CutPrefix(subj, prefix+".")
	if !ok || c == "" || strings.Contains(c, ".") {
		return "", false
	}
	return c, true
}

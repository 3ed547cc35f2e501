// Package ledger reads and appends claimcheck's hash chains in the LEDGER
// stream.
//
// Storage: chain C lives on subject cc.ledger.C. Each message is a block of
// one or more consecutive entries of C, each entry in canonical JSON,
// separated by '\n'. Packing consecutive entries of one chain into one
// message is claimcheck's group commit: with sync_interval always every
// message costs an fsync, so a busy session's events share one. Verification
// never depends on the packing: it sees the entries in order.
//
// Appends use Nats-Expected-Last-Subject-Sequence, so two writers can never
// both extend the same head: no chain can fork.
package ledger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/stream"
)

// Stored is one entry as read from the stream.
type Stored struct {
	Chain string
	Seq   uint64 // stream sequence of the block holding the entry
	Raw   []byte // the canonical entry bytes
}

// SplitBlock returns the entries of a block message body.
func SplitBlock(data []byte) [][]byte {
	if len(data) == 0 {
		return nil
	}
	return bytes.Split(data, []byte{'\n'})
}

// Reader reads chains from a ledger stream. It looks the stream up once
// (a stream info request per read would double the cost of reading a short
// chain) and is safe for concurrent use.
type Reader struct {
	js     jetstream.JetStream
	stream string

	mu     sync.Mutex
	s      jetstream.Stream
	prefix string
}

// NewReader reads from the named stream: stream.Ledger, or a copy of it whose
// single subject filter is "<prefix>.>" with chains as the next token.
func NewReader(js jetstream.JetStream, streamName string) *Reader {
	if streamName == "" {
		streamName = stream.Ledger
	}
	return &Reader{js: js, stream: streamName}
}

// open returns the stream and its chain subject prefix ("cc.ledger" for LEDGER).
func (r *Reader) open(ctx context.Context) (jetstream.Stream, string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.s != nil {
		return r.s, r.prefix, nil
	}
	s, err := r.js.Stream(ctx, r.stream)
	if err != nil {
		return nil, "", fmt.Errorf("stream %s: %w", r.stream, err)
	}
	subs := s.CachedInfo().Config.Subjects
	if len(subs) != 1 || !strings.HasSuffix(subs[0], ".>") {
		return nil, "", fmt.Errorf("stream %s: subjects %v: want exactly one \"<prefix>.>\" subject", r.stream, subs)
	}
	r.s, r.prefix = s, strings.TrimSuffix(subs[0], ".>")
	return r.s, r.prefix, nil
}

func chainOf(prefix, subject string) (string, bool) {
	c, ok := strings.CutPrefix(subject, prefix+".")
	if !ok || c == "" || strings.Contains(c, ".") {
		return "", false
	}
	return c, true
}

// ErrEmpty is returned by Last for a chain with no entries.
var ErrEmpty = errors.New("chain has no entries")

// Chains lists the chains in the stream, sorted.
func (r *Reader) Chains(ctx context.Context) ([]string, error) {
	s, prefix, err := r.open(ctx)
	if err != nil {
		return nil, err
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(prefix+".>"))
	if err != nil {
		return nil, fmt.Errorf("stream %s info: %w", r.stream, err)
	}
	var chains []string
	for subj := range info.State.Subjects {
		if c, ok := chainOf(prefix, subj); ok {
			chains = append(chains, c)
		}
	}
	sort.Strings(chains)
	return chains, nil
}

// Last returns the last entry of chain and the stream sequence of its block.
func (r *Reader) Last(ctx context.Context, chain string) (Stored, error) {
	s, prefix, err := r.open(ctx)
	if err != nil {
		return Stored{}, err
	}
	m, err := s.GetLastMsgForSubject(ctx, prefix+"."+chain)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return Stored{}, ErrEmpty
	}
	if err != nil {
		return Stored{}, fmt.Errorf("last block of %s: %w", chain, err)
	}
	entries := SplitBlock(m.Data)
	if len(entries) == 0 {
		return Stored{}, fmt.Errorf("last block of %s (seq %d) is empty", chain, m.Sequence)
	}
	return Stored{Chain: chain, Seq: m.Sequence, Raw: entries[len(entries)-1]}, nil
}

// Walk calls fn for every entry of chain stored in blocks with stream
// sequence > afterSeq, in order. It returns fn's first error.
func (r *Reader) Walk(ctx context.Context, chain string, afterSeq uint64, fn func(Stored) error) error {
	return r.walk(ctx, chain, afterSeq, fn)
}

// WalkAll calls fn for every entry of every chain, in stream order (entries
// of one chain are in chain order).
func (r *Reader) WalkAll(ctx context.Context, fn func(Stored) error) error {
	return r.walk(ctx, "", 0, fn)
}

// walk reads one chain (with batched direct gets, or one get per block
// when the stream has no direct gets; no consumer), or all when chain is ""
// (with one ordered consumer).
func (r *Reader) walk(ctx context.Context, chain string, afterSeq uint64, fn func(Stored) error) error {
	s, prefix, err := r.open(ctx)
	if err != nil {
		return err
	}
	if chain != "" {
		subject := prefix + "." + chain
		if s.CachedInfo().Config.AllowDirect {
			return r.walkChain(ctx, subject, chain, afterSeq, fn)
		}
		// Without direct gets (a copy of a ledger made by hand, say):
		// one stream API request per block.
		for seq := afterSeq + 1; ; {
			m, err := s.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject))
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("read %s after seq %d: %w", chain, seq-1, err)
			}
			for _, e := range SplitBlock(m.Data) {
				if err := fn(Stored{Chain: chain, Seq: m.Sequence, Raw: e}); err != nil {
					return err
				}
			}
			seq = m.Sequence + 1
		}
	}
	info, err := s.Info(ctx)
	if err != nil {
		return fmt.Errorf("stream %s info: %w", r.stream, err)
	}
	last := info.State.LastSeq
	if info.State.Msgs == 0 || last <= afterSeq {
		return nil
	}
	cons, err := s.OrderedConsumer(ctx,
		jetstream.OrderedConsumerConfig{FilterSubjects: []string{prefix + ".>"}, DeliverPolicy: jetstream.DeliverAllPolicy})
	if err != nil {
		return fmt.Errorf("read %s: %w", r.stream, err)
	}
	for {
		// The fetch's goroutine ends with fctx when this returns before the
		// batch is complete (at the stream's last message).
		fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		batch, err := cons.Fetch(512, jetstream.FetchContext(fctx))
		if err != nil {
			return fmt.Errorf("read %s: %w", r.stream, err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			meta, err := m.Metadata()
			if err != nil {
				return fmt.Errorf("read %s: %w", r.stream, err)
			}
			if c, ok := chainOf(prefix, m.Subject()); ok {
				for _, e := range SplitBlock(m.Data()) {
					if err := fn(Stored{Chain: c, Seq: meta.Sequence.Stream, Raw: e}); err != nil {
						return err
					}
				}
			}
			if meta.Sequence.Stream >= last || meta.NumPending == 0 {
				return nil
			}
		}
		if err := batch.Error(); err != nil {
			return fmt.Errorf("read %s: %w", r.stream, err)
		}
		if n == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			return fmt.Errorf("read %s: no data before sequence %d arrived within 5s", r.stream, last)
		}
	}
}

// walkBatch and walkBatchBytes bound one batched read of a chain.
const (
	walkBatch      = 256
	walkBatchBytes = 4 << 20
)

// directGet is a batched direct get request (ADR-31; nats-server 2.11+):
// up to Batch messages of one subject from Seq on, then an end-of-batch
// status saying how many more there are.
type directGet struct {
	Seq      uint64 `json:"seq"`
	NextFor  string `json:"next_by_subj"`
	Batch    int    `json:"batch"`
	MaxBytes int    `json:"max_bytes"`
}

// walkChain reads one chain's blocks after afterSeq with batched direct
// gets: one request returns up to walkBatch blocks (walkBatchBytes), where
// a get per block cost a round trip each (a 500-block session took 500).
func (r *Reader) walkChain(ctx context.Context, subject, chain string, afterSeq uint64, fn func(Stored) error) error {
	nc := r.js.Conn()
	inbox := nc.NewInbox()
	// A channel just large enough for one batch and its end: a plain
	// synchronous subscription allocates (and clears) room for 64k messages.
	ch := make(chan *nats.Msg, walkBatch+1)
	sub, err := nc.ChanSubscribe(inbox, ch)
	if err != nil {
		return fmt.Errorf("read %s: %w", chain, err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	_, deadline := ctx.Deadline()
	api := r.apiPrefix() + "DIRECT.GET." + r.stream
	for seq := afterSeq + 1; ; {
		req, err := json.Marshal(directGet{Seq: seq, NextFor: subject, Batch: walkBatch, MaxBytes: walkBatchBytes})
		if err != nil {
			return err
		}
		if err := nc.PublishRequest(api, inbox, req); err != nil {
			return fmt.Errorf("read %s after seq %d: %w", chain, seq-1, err)
		}
		rctx, cancel := ctx, context.CancelFunc(func() {})
		if !deadline { // bound each request, not the whole (maybe long) walk
			rctx, cancel = context.WithTimeout(ctx, r.timeout())
		}
		more, err := readBatch(rctx, ch, chain, &seq, fn)
		cancel()
		if err != nil || !more {
			return err
		}
	}
}

// numPendingHeader says, on the end-of-batch status, how many messages
// matching the request are left.
const numPendingHeader = "Nats-Num-Pending"

// readBatch reads one batched direct get's answer, advancing *seq past
// each block; more reports that the chain has blocks the batch did not
// carry.
func readBatch(ctx context.Context, ch <-chan *nats.Msg, chain string, seq *uint64, fn func(Stored) error) (more bool, err error) {
	for {
		var m *nats.Msg
		select {
		case m = <-ch:
		case <-ctx.Done():
			return false, fmt.Errorf("read %s after seq %d: %w", chain, *seq-1, ctx.Err())
		}
		switch status := m.Header.Get("Status"); status {
		case "":
		case "404": // nothing (more) of the chain
			return false, nil
		case "204": // end of batch
			return m.Header.Get(numPendingHeader) != "0", nil
		default:
			return false, fmt.Errorf("read %s after seq %d: status %s %s", chain, *seq-1, status, m.Header.Get("Description"))
		}
		n, err := strconv.ParseUint(m.Header.Get(jetstream.SequenceHeader), 10, 64)
		if err != nil || n < *seq {
			return false, fmt.Errorf("read %s after seq %d: a block with sequence %q", chain, *seq-1,
				m.Header.Get(jetstream.SequenceHeader))
		}
		for _, e := range SplitBlock(m.Data) {
			if err := fn(Stored{Chain: chain, Seq: n, Raw: e}); err != nil {
				return false, err
			}
		}
		*seq = n + 1
	}
}

// apiPrefix is the JetStream API prefix of r's JetStream context.
func (r *Reader) apiPrefix() string {
	o := r.js.Options()
	switch {
	case o.APIPrefix != "":
		return strings.TrimSuffix(o.APIPrefix, ".") + "."
	case o.Domain != "":
		return "$JS." + o.Domain + ".API."
	}
	return jetstream.DefaultAPIPrefix
}

// timeout bounds one read request when the caller's context has no
// deadline.
func (r *Reader) timeout() time.Duration {
	if t := r.js.Options().DefaultTimeout; t > 0 {
		return t
	}
	return 5 * time.Second
}

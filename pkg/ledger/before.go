package ledger

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// multiLast is a direct get of the last message of each subject stored at
// or below a sequence (ADR-31; nats-server 2.11+).
type multiLast struct {
	Subjects []string `json:"multi_last"`
	UpToSeq  uint64   `json:"up_to_seq"`
	Batch    int      `json:"batch"`
}

// Before returns the last entry of chain stored in a block with stream
// sequence below seq: the predecessor of a chain's entries in the block at
// seq, for a reader that starts mid-chain. ErrEmpty when the hot stream
// holds none (the chain starts at seq, or its earlier blocks were trimmed
// to the archive). It costs one request with direct gets, and a walk of
// the chain's earlier blocks without them.
func (r *Reader) Before(ctx context.Context, chain string, seq uint64) (Stored, error) {
	s, prefix, err := r.open(ctx)
	if err != nil {
		return Stored{}, err
	}
	if seq <= 1 {
		return Stored{}, ErrEmpty
	}
	subject := prefix + "." + chain
	if !s.CachedInfo().Config.AllowDirect {
		var last Stored
		found := false
		err := r.walk(ctx, chain, 0, func(st Stored) error {
			if st.Seq >= seq {
				return errStop
			}
			last, found = st, true
			return nil
		})
		if err != nil && !errors.Is(err, errStop) {
			return Stored{}, err
		}
		if !found {
			return Stored{}, ErrEmpty
		}
		return last, nil
	}
	req, err := json.Marshal(multiLast{Subjects: []string{subject}, UpToSeq: seq - 1, Batch: 1})
	if err != nil {
		return Stored{}, err
	}
	rctx := ctx
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, r.timeout())
		defer cancel()
	}
	nc := r.js.Conn()
	inbox := nc.NewInbox()
	ch := make(chan *nats.Msg, 4)
	sub, err := nc.ChanSubscribe(inbox, ch)
	if err != nil {
		return Stored{}, fmt.Errorf("read %s before seq %d: %w", chain, seq, err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := nc.PublishRequest(r.apiPrefix()+"DIRECT.GET."+r.stream, inbox, req); err != nil {
		return Stored{}, fmt.Errorf("read %s before seq %d: %w", chain, seq, err)
	}
	var out Stored
	found := false
	for {
		var m *nats.Msg
		select {
		case m = <-ch:
		case <-rctx.Done():
			return Stored{}, fmt.Errorf("read %s before seq %d: %w", chain, seq, rctx.Err())
		}
		switch status := m.Header.Get("Status"); status {
		case "":
		case "404":
			// Also the answer when seq-1 lies past the stream's end.
			return r.lastBelow(ctx, s, subject, chain, seq)
		case "204":
			if !found {
				return Stored{}, ErrEmpty
			}
			return out, nil
		default:
			return Stored{}, fmt.Errorf("read %s before seq %d: status %s %s", chain, seq, status, m.Header.Get("Description"))
		}
		n, err := strconv.ParseUint(m.Header.Get(jetstream.SequenceHeader), 10, 64)
		entries := SplitBlock(m.Data)
		if err != nil || n >= seq || len(entries) == 0 {
			return Stored{}, fmt.Errorf("read %s before seq %d: an answer with sequence %q and %d entries", chain, seq,
				m.Header.Get(jetstream.SequenceHeader), len(entries))
		}
		out, found = Stored{Chain: chain, Seq: n, Raw: entries[len(entries)-1]}, true
	}
}

// errStop ends a walk early.
var errStop = errors.New("stop")

// lastBelow is Before by the chain's last block, when it lies below seq.
func (r *Reader) lastBelow(ctx context.Context, s jetstream.Stream, subject, chain string, seq uint64) (Stored, error) {
	m, err := s.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return Stored{}, ErrEmpty
	}
	if err != nil {
		return Stored{}, fmt.Errorf("read %s before seq %d: %w", chain, seq, err)
	}
	entries := SplitBlock(m.Data)
	if m.Sequence >= seq || len(entries) == 0 {
		return Stored{}, ErrEmpty
	}
	return Stored{Chain: chain, Seq: m.Sequence, Raw: entries[len(entries)-1]}, nil
}

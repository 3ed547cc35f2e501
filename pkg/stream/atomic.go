package stream

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// JetStream's atomic batch publish headers (nats-server 2.12+, ADR-50).
const (
	batchIDHeader     = "Nats-Batch-Id"
	batchSeqHeader    = "Nats-Batch-Sequence"
	batchCommitHeader = "Nats-Batch-Commit"
)

// ErrCodeAtomicDisabled is the server's error code for a batch sent to a
// stream without allow_atomic.
const ErrCodeAtomicDisabled jetstream.ErrorCode = 10174

// ErrCodeAtomicDuplicate refuses a batch holding a message id the stream
// has seen within its duplicate window.
const ErrCodeAtomicDuplicate jetstream.ErrorCode = 10201

// MaxAtomicBatch is the server's default bound on one atomic batch
// (jetstream limit max_batch_size).
const MaxAtomicBatch = 1000

// MinAtomicBatch is the smallest batch worth committing atomically on R1
// file storage, where the server stages every batch in a file store of its
// own (created with synced metadata, then removed): about 7 ms of fixed
// cost on these machines, repaid only from 12–16 messages on against
// 0.6 ms per single synced publish (BenchmarkAtomicBatch). Replicated
// streams stage batches in memory, where a batch of two already pays
// (MinAtomicBatchFor).
const MinAtomicBatch = 16

// MinAtomicBatchFor is the smallest batch worth committing atomically to a
// stream with this many replicas. BenchmarkAtomicBatch, 2026-11-23: R1
// single publishes 1.6k msgs/s, batches of 2 0.3k, 16 2.1k; R3 (three
// servers on the same two cores) singles 0.64k, batches of 2 1.2k, 8 2.6k,
// 16 3.6k.
func MinAtomicBatchFor(replicas int) int {
	if replicas > 1 {
		return 2
	}
	return MinAtomicBatch
}

// MaxAtomicBatchBytes bounds the messages' bytes in one batch (the server
// stages a batch until its commit).
const MaxAtomicBatchBytes = 8 << 20

// AtomicAck is the acknowledgement of an atomic batch's commit (nats.go's
// PubAck has no batch fields): the commit's sequence and how many messages
// the batch stored.
type AtomicAck struct {
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

// PublishAtomic sends msgs as one atomic batch: every message but the last
// without a reply (the server stages them), the last with the commit header
// as a request whose answer is the batch's acknowledgement. Messages of one
// connection reach the server in order. A refusal is a *jetstream.APIError
// (the batch stored nothing); any other error leaves the outcome unknown.
// timeout bounds the wait when ctx has no deadline.
func PublishAtomic(ctx context.Context, nc *nats.Conn, msgs []*nats.Msg, timeout time.Duration) (AtomicAck, error) {
	if len(msgs) == 0 {
		return AtomicAck{}, errors.New("atomic batch: no messages")
	}
	id := nuid.Next()
	last := len(msgs) - 1
	for k, m := range msgs {
		if m.Header == nil {
			m.Header = nats.Header{}
		}
		m.Header.Set(batchIDHeader, id)
		m.Header.Set(batchSeqHeader, strconv.Itoa(k+1))
		if k == last {
			m.Header.Set(batchCommitHeader, "1")
			break
		}
		m.Header.Del(batchCommitHeader) // it may have closed a refused batch
		if err := nc.PublishMsg(m); err != nil {
			return AtomicAck{}, fmt.Errorf("atomic batch of %d: %w", len(msgs), err)
		}
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	resp, err := nc.RequestMsgWithContext(ctx, msgs[last])
	if err != nil {
		return AtomicAck{}, fmt.Errorf("atomic batch of %d: %w", len(msgs), err)
	}
	var ack AtomicAck
	if err := json.Unmarshal(resp.Data, &ack); err != nil {
		return AtomicAck{}, fmt.Errorf("atomic batch of %d: unreadable acknowledgement %q: %w", len(msgs), resp.Data, err)
	}
	if ack.Error != nil {
		return AtomicAck{}, fmt.Errorf("atomic batch of %d: %w", len(msgs), &jetstream.APIError{
			Code: ack.Error.Code, ErrorCode: jetstream.ErrorCode(ack.Error.ErrorCode), Description: ack.Error.Description,
		})
	}
	if ack.Sequence == 0 || ack.BatchID != id {
		return AtomicAck{}, fmt.Errorf("atomic batch of %d: acknowledgement %q is not this batch's", len(msgs), resp.Data)
	}
	return ack, nil
}

// IsWrongLastSequence reports a refused compare-and-set: the subject's (or
// stream's) last sequence was not the one the message expected.
func IsWrongLastSequence(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
			apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant
	}
	return false
}

// AtomicBatches commits msgs in atomic batches of at least minSize (at
// least 2) and at most maxSize messages (and MaxAtomicBatchBytes; maxSize is
// capped at MaxAtomicBatch). A batch the
// server refuses as a whole because one message's compare-and-set failed or
// one message id was seen before stored nothing, so it is split in halves
// and each half is tried again while both halves have at least minSize
// messages: the offending message ends in a small remainder.
//
// committed is called with the indexes (into msgs) of every stored batch,
// in order, and its acknowledgement; left with the indexes no batch stored
// (their batch headers removed)
// (including runs shorter than minSize, which cost more as a batch than as
// plain publishes) and the reason: nil for those never tried, a
// *jetstream.APIError when the server refused them (nothing stored; code
// ErrCodeAtomicDisabled means the stream does not take batches at all), any
// other error when the outcome is unknown (the commit may have been
// stored). The callers publish what is left one message at a time.
func AtomicBatches(ctx context.Context, nc *nats.Conn, msgs []*nats.Msg, minSize, maxSize int, timeout time.Duration,
	committed func(idx []int, ack AtomicAck), left func(idx []int, err error),
) {
	minSize = max(minSize, 2)
	size := min(maxSize, MaxAtomicBatch)
	var chunks [][]int
	for i := 0; i < len(msgs); {
		k, bytes := i, 0
		for k < len(msgs) && k-i < size && (k == i || bytes+len(msgs[k].Data) <= MaxAtomicBatchBytes) {
			bytes += len(msgs[k].Data)
			k++
		}
		chunk := make([]int, 0, k-i)
		for j := i; j < k; j++ {
			chunk = append(chunk, j)
		}
		chunks = append(chunks, chunk)
		i = k
	}
	leave := func(idx []int, err error) {
		for _, i := range idx {
			ClearBatchHeaders(msgs[i])
		}
		left(idx, err)
	}
	for len(chunks) > 0 {
		chunk := chunks[0]
		chunks = chunks[1:]
		if len(chunk) < minSize {
			leave(chunk, nil)
			continue
		}
		batch := make([]*nats.Msg, len(chunk))
		for k, i := range chunk {
			batch[k] = msgs[i]
		}
		ack, err := PublishAtomic(ctx, nc, batch, timeout)
		if err == nil {
			committed(chunk, ack)
			continue
		}
		var apiErr *jetstream.APIError
		if errors.As(err, &apiErr) && apiErr.ErrorCode == ErrCodeAtomicDisabled {
			// Nothing more to try: leave this and every later chunk.
			leave(chunk, err)
			for _, c := range chunks {
				leave(c, err)
			}
			return
		}
		if len(chunk) >= max(4, 2*minSize) &&
			(IsWrongLastSequence(err) || errors.As(err, &apiErr) && apiErr.ErrorCode == ErrCodeAtomicDuplicate) {
			h := len(chunk) / 2
			chunks = append(chunks, chunk[:h], chunk[h:])
			continue
		}
		leave(chunk, err)
	}
}

// ClearBatchHeaders removes the atomic batch headers, so that a message a
// batch did not store can be published on its own.
func ClearBatchHeaders(m *nats.Msg) {
	for _, h := range []string{batchIDHeader, batchSeqHeader, batchCommitHeader} {
		m.Header.Del(h)
	}
}

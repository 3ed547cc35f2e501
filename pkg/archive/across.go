package archive

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/subject"
)

// ChainReport is the outcome of VerifyChains.
type ChainReport struct {
	Archive  *Report
	Chains   int // chains verified end to end
	Entries  int // entries verified (archive and hot)
	HotOnly  int // chains only in the hot stream
	Problems []Problem
	// Lost lists chains the archive holds whose hot entries are gone
	// (the rotator always keeps a chain's last message hot).
	Lost []string
}

// OK reports whether no problem was found.
func (r *ChainReport) OK() bool { return r.Archive.OK() && len(r.Problems) == 0 }

// VerifyChains verifies every chain of LEDGER across the archive and the
// hot stream: the archive as Verify does, then each chain's hot entries
// continuing from its last archived entry. A hot message that the archive
// also holds must be byte-identical to the archived copy; an archived chain
// with no hot message left was lost from JetStream.
func VerifyChains(ctx context.Context, st *Store, js jetstream.JetStream, streamName string, o Options) (*ChainReport, error) {
	seen := map[uint64][32]byte{}
	inner := o.Segment
	o.Segment = func(m Manifest, msgs []Message) error {
		for _, msg := range msgs {
			seen[msg.Seq] = digestArray([]byte(msg.Data))
		}
		if inner != nil {
			return inner(m, msgs)
		}
		return nil
	}
	ar, err := Verify(ctx, st, streamName, o)
	if err != nil {
		return nil, err
	}
	out := &ChainReport{Archive: ar}
	verifiers := map[string]*chain.Verifier{}
	broken := map[string]bool{}
	hot := map[string]bool{}
	for name, h := range ar.Heads {
		verifiers[name] = chain.NewVerifierAt(name, h.N, h.Hash)
	}
	problem := func(c, format string, args ...any) {
		out.Problems = append(out.Problems, Problem{Segment: "chain " + c, Reason: fmt.Sprintf(format, args...)})
	}
	err = eachMessage(ctx, js, streamName, func(seq uint64, subj string, data []byte, restored uint64) error {
		name, ok := subject.ChainOf(subj)
		if !ok {
			return nil
		}
		hot[name] = true
		if seq <= ar.Last {
			d, archived := seen[seq]
			switch {
			case !archived && ar.Tombstones == 0:
				problem(name, "hot message %d is inside the archived range but not in the archive", seq)
			case archived && d != digestArray(data):
				problem(name, "hot message %d differs from its archived copy (edited in JetStream or in the archive)", seq)
				broken[name] = true
			}
			return nil
		}
		if broken[name] {
			return nil
		}
		if restored != 0 {
			// Put back by restore: only as a copy of an archived message.
			if d, ok := seen[restored]; ok && d == digestArray(data) {
				return nil
			}
			if _, ok := seen[restored]; ok || restored > ar.Last {
				problem(name, "hot message %d claims to restore archived message %d but is not a copy of it", seq, restored)
				broken[name] = true
			}
			return nil
		}
		v := verifiers[name]
		if v == nil {
			v = chain.NewVerifier(name)
			verifiers[name] = v
			out.HotOnly++
		}
		for raw := range bytes.SplitSeq(data, []byte{'\n'}) {
			out.Entries++
			if err := v.Next(raw); err != nil {
				problem(name, "%v", err)
				broken[name] = true
				break
			}
		}
		return nil
	})
	if err != nil {
		return out, err
	}
	for name := range ar.Heads {
		if !hot[name] {
			out.Lost = append(out.Lost, name)
		}
	}
	sort.Strings(out.Lost)
	for _, name := range out.Lost {
		problem(name,
			"no entry left in the hot stream (the rotator keeps each chain's last message): lost from JetStream; `claimcheck archive restore` brings it back")
	}
	out.Entries += ar.Entries
	out.Chains = len(verifiers) - len(broken)
	return out, nil
}

func digestArray(b []byte) [32]byte { return sha256.Sum256(b) }

// eachMessage reads a stream in order with one ordered consumer.
func eachMessage(ctx context.Context, js jetstream.JetStream, streamName string,
	fn func(seq uint64, subj string, data []byte, restored uint64) error) error {
	s, err := js.Stream(ctx, streamName)
	if err != nil {
		return fmt.Errorf("stream %s: %w", streamName, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return err
	}
	if info.State.Msgs == 0 {
		return nil
	}
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy})
	if err != nil {
		return err
	}
	last, left := info.State.LastSeq, info.State.Msgs
	for {
		// The fetch's own goroutine ends with fctx, whatever path leaves.
		fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		batch, err := cons.Fetch(int(min(left, 500)), jetstream.FetchContext(fctx))
		if err != nil {
			return err
		}
		got := 0
		for m := range batch.Messages() {
			got++
			meta, err := m.Metadata()
			if err != nil {
				return err
			}
			restored, _ := strconv.ParseUint(m.Headers().Get(RestoredHeader), 10, 64)
			if err := fn(meta.Sequence.Stream, m.Subject(), m.Data(), restored); err != nil {
				return err
			}
			left--
			if meta.Sequence.Stream >= last || left == 0 {
				return nil
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
			return err
		}
		if got == 0 {
			return fmt.Errorf("stream %s: no messages before sequence %d", streamName, last)
		}
	}
}

// Restored says what Restore did.
type Restored struct {
	Chains   []string
	Messages int
}

// Restore appends the archived messages of chains that have no message
// left in the hot stream back into it, in order, each append guarded by
// the chain's expected last sequence (so a chain written meanwhile is not
// touched). only limits it to one chain. The restored messages keep their
// bytes, so their entries verify as before; chains whose first archived
// entries were deleted by retention begin at their tombstone's head, and
// the caller must anchor them (starts returns those heads).
func Restore(ctx context.Context, st *Store, js jetstream.JetStream, streamName, only string, o Options) (Restored,
	map[string]Head, error) {
	var out Restored
	cr, err := VerifyChains(ctx, st, js, streamName, Options{Keys: o.Keys, Now: o.Now, Retention: o.Retention})
	if err != nil {
		return out, nil, err
	}
	if !cr.Archive.OK() {
		return out, nil, fmt.Errorf("the archive does not verify (%d problems, first: %s): refusing to restore from it",
			len(cr.Archive.Problems), cr.Archive.Problems[0])
	}
	lost := map[string]bool{}
	for _, c := range cr.Lost {
		if only == "" || c == only {
			lost[c] = true
		}
	}
	if only != "" && !lost[only] {
		return out, nil, fmt.Errorf("chain %s is not lost (it has hot entries, or the archive does not hold it): nothing to restore", only)
	}
	if len(lost) == 0 {
		return out, nil, nil
	}
	// Where each lost chain's archived entries begin (after a tombstone).
	starts := map[string]Head{}
	expected := map[string]uint64{}
	first := map[string]bool{}
	o.Segment = func(_ Manifest, msgs []Message) error {
		for _, m := range msgs {
			name, ok := subject.ChainOf(m.Subject)
			if !ok || !lost[name] {
				continue
			}
			if !first[name] {
				first[name] = true
				var h struct {
					N    uint64 `json:"n"`
					Prev string `json:"prev_hash"`
				}
				if e := bytes.SplitN([]byte(m.Data), []byte{'\n'}, 2)[0]; jsonUnmarshal(e, &h) == nil && h.N > 1 {
					starts[name] = Head{N: h.N - 1, Hash: h.Prev}
				}
			}
			msg := nats.NewMsg(m.Subject)
			msg.Data = []byte(m.Data)
			msg.Header.Set(RestoredHeader, strconv.FormatUint(m.Seq, 10))
			msg.Header.Set(jetstream.ExpectedLastSubjSeqHeader, fmt.Sprint(expected[name]))
			ack, err := js.PublishMsg(ctx, msg)
			if err != nil {
				return fmt.Errorf("restore %s (archived seq %d): %w", name, m.Seq, err)
			}
			expected[name] = ack.Sequence
			out.Messages++
		}
		return nil
	}
	o.Retention = 0
	if _, err := Verify(ctx, st, streamName, o); err != nil {
		return out, nil, err
	}
	for c := range lost {
		out.Chains = append(out.Chains, c)
	}
	sort.Strings(out.Chains)
	return out, starts, nil
}

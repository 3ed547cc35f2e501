package rotator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/claimcheck/claimcheck/pkg/archive"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/transparency"
)

// openLog opens the ledger's Merkle tree log (package transparency),
// which signs its checkpoints with the registry's active keys.
func (s *Service) openLog(ctx context.Context, js jetstream.JetStream) (*transparency.Log, error) {
	kv, err := transparency.OpenBucket(ctx, js)
	if err != nil {
		return nil, fmt.Errorf("rotator: %w", err)
	}
	var witnesses []*transparency.WitnessClient
	for _, w := range s.cfg.Witnesses {
		c, err := transparency.NewWitnessClient(w.URL, w.Key)
		if err != nil {
			return nil, fmt.Errorf("rotator: %w", err)
		}
		witnesses = append(witnesses, c)
	}
	return &transparency.Log{JS: js, KV: kv, Every: s.cfg.CheckpointEvery, Interval: s.cfg.CheckpointInterval,
		Signers: s.noteSigners, Logger: s.set.Logger, Witnesses: witnesses,
		Issued: func(_ []byte, tree tlog.Tree) {
			s.m.checkpoints.Inc()
			s.m.logged.Set(float64(tree.N))
		},
		WitnessFailed: func(*transparency.WitnessClient, error) { s.m.witnessErrors.Inc() }}, nil
}

// noteSigners are the note signers of the registry's keys in force now
// (two during a rotation's overlap, as for attestations).
func (s *Service) noteSigners(ctx context.Context, origin string) ([]note.Signer, error) {
	keys, err := s.reg.List(ctx)
	if err != nil {
		return nil, err
	}
	now := s.set.Clock.Now()
	var out []note.Signer
	for _, k := range keys {
		if keyring.Status(k, now) != keyring.Active {
			continue
		}
		sv, err := keyring.Dir{Path: s.cfg.KeyDir}.Load(k)
		if err != nil {
			return nil, fmt.Errorf("key %s: %w", k.KeyID, err)
		}
		ns, err := transparency.NoteSigner(origin, k, sv)
		if err != nil {
			return nil, err
		}
		out = append(out, ns)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no active key at %s", now.Format(time.RFC3339))
	}
	return out, nil
}

// runLog issues checkpoints until ctx ends; after a failure (logged and
// counted) it starts over from the stored checkpoint an interval later.
func (s *Service) runLog(ctx context.Context) {
	for ctx.Err() == nil {
		err := s.tlog.Run(ctx)
		if ctx.Err() != nil {
			return
		}
		s.m.logErrors.Inc()
		s.set.Logger.ErrorContext(ctx, "rotator: the ledger's Merkle tree log stopped; it starts over from its checkpoint",
			slog.Any("err", err))
		select {
		case <-ctx.Done():
		case <-time.After(s.cfg.CheckpointInterval):
		}
	}
}

// archiveCheckpoint keeps the log's newest checkpoint in the archive
// (transparency.ArchiveKey), once the archived one is shown to be a prefix
// of it. A log that does not extend what the archive holds (the NATS store
// rolled back to an older copy, the log's state lost or rewritten) fails
// the pass before anything is trimmed, naming both sizes.
func (s *Service) archiveCheckpoint(ctx context.Context) error {
	signed, _, err := transparency.Latest(ctx, s.tlog.KV)
	if errors.Is(err, transparency.ErrNoCheckpoint) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("tlog: %w", err)
	}
	origin, err := transparency.ReadOrigin(ctx, s.tlog.KV)
	if err != nil {
		return fmt.Errorf("tlog: %w", err)
	}
	cur, err := transparency.ParseUnverified(signed, origin)
	if err != nil {
		return fmt.Errorf("tlog: the log's checkpoint: %w", err)
	}
	held, err := s.store.Get(ctx, transparency.ArchiveKey)
	switch {
	case errors.Is(err, archive.ErrNotFound):
	case err != nil:
		return err
	default:
		if o, _, _ := strings.Cut(string(held), "\n"); o != origin {
			s.m.tlogRollbacks.Inc()
			return fmt.Errorf("tlog: the archive's %s is a checkpoint of log %q, this log is %q: "+
				"the log's state (the tlog bucket) was lost and the log started over; restore the bucket, or move the archived "+
				"checkpoint aside to accept the new log", transparency.ArchiveKey, o, origin)
		}
		prev, err := transparency.ParseUnverified(held, origin)
		if err != nil {
			return fmt.Errorf("tlog: the archive's %s: %w", transparency.ArchiveKey, err)
		}
		if err := transparency.Consistent(ctx, transparency.Tiles(s.tlog.KV), cur.Tree, prev.Tree); err != nil {
			s.m.tlogRollbacks.Inc()
			return fmt.Errorf("tlog: against the checkpoint in the archive (%s): %w", transparency.ArchiveKey, err)
		}
		if prev.Tree.N >= cur.Tree.N {
			return nil
		}
	}
	return s.store.Put(ctx, transparency.ArchiveKey, signed, "text/plain; charset=utf-8")
}

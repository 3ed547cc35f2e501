package rotator

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/archive"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"

	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/schemas"
)

// KeyChange is the payload of KeyRotated and KeyRevoked records.
type KeyChange struct {
	KeyID       string  `json:"keyid"`
	Algorithm   string  `json:"algorithm"`
	Fingerprint string  `json:"fingerprint,omitempty"`
	ValidFrom   string  `json:"valid_from"`
	ValidUntil  *string `json:"valid_until,omitempty"`
	RevokedAt   *string `json:"revoked_at,omitempty"`
	Scheduled   bool    `json:"scheduled,omitempty"`
}

// rotateKeys makes a new signing key when the newest is key_rotation_period
// old (the older ones keep signing for key_overlap, then verify only), and
// records every registry change not yet in the ledger: each key's
// registration (with the window it ended up with) and each revocation. The
// records' event ids come from the key and its times, so a crash between a
// change and its record is repaired by the next pass, and nothing is
// recorded twice.
func (s *Service) rotateKeys(ctx context.Context, now time.Time) (string, error) {
	keys, err := s.reg.List(ctx)
	if err != nil {
		return "", err
	}
	rotated := ""
	if s.cfg.KeyRotationPeriod > 0 && len(keys) > 0 {
		var newest time.Time
		for _, k := range keys {
			if k.RevokedAt != nil {
				continue
			}
			if t, err := time.Parse(keyring.TimeFormat, k.ValidFrom); err == nil && t.After(newest) {
				newest = t
			}
		}
		if newest.IsZero() || !now.Before(newest.Add(s.cfg.KeyRotationPeriod)) {
			r, err := keyring.Rotate(ctx, s.reg, keyring.Dir{Path: s.cfg.KeyDir},
				keyring.NewKey{Algorithm: s.cfg.KeyAlgorithm}, s.cfg.KeyOverlap, now)
			if err != nil {
				return "", fmt.Errorf("scheduled key rotation: %w", err)
			}
			rotated = r.New.KeyID
			s.set.Logger.InfoContext(ctx, "rotator: rotated the signing key", slog.String("new", r.New.KeyID),
				slog.Duration("overlap", s.cfg.KeyOverlap), slog.Int("retired", len(r.Retired)))
		}
	}
	return rotated, s.recordKeys(ctx, now, rotated)
}

// recordKeys puts every registry change not yet in the ledger there (and
// re-signs checkpoints after a revocation).
func (s *Service) recordKeys(ctx context.Context, now time.Time, rotated string) error {
	keys, err := s.reg.List(ctx)
	if err != nil {
		return err
	}
	for _, k := range keys {
		from, err := time.Parse(keyring.TimeFormat, k.ValidFrom)
		if err != nil {
			continue
		}
		c := KeyChange{KeyID: k.KeyID, Algorithm: k.Algorithm, Fingerprint: k.Fingerprint, ValidFrom: k.ValidFrom,
			ValidUntil: k.ValidUntil, Scheduled: k.KeyID == rotated}
		if _, err := s.rec.record(ctx, now, from, schemas.RotatorKeyRotated, k.KeyID+"\x00"+k.ValidFrom,
			fmt.Sprintf("signing key %s (%s) valid from %s", k.KeyID, k.Algorithm, k.ValidFrom), c); err != nil {
			return err
		}
		if k.ValidUntil != nil {
			if until, err := time.Parse(keyring.TimeFormat, *k.ValidUntil); err == nil {
				if _, err := s.rec.record(ctx, now, until, schemas.RotatorKeyRetired, k.KeyID+"\x00"+*k.ValidUntil,
					fmt.Sprintf("signing key %s signs until %s, verifies what it signed before for ever", k.KeyID,
						*k.ValidUntil), c); err != nil {
					return err
				}
			}
		}
		if k.RevokedAt != nil {
			at, err := time.Parse(keyring.TimeFormat, *k.RevokedAt)
			if err != nil {
				continue
			}
			c.RevokedAt = k.RevokedAt
			if _, err := s.rec.record(ctx, now, at, schemas.RotatorKeyRevoked, k.KeyID+"\x00"+*k.RevokedAt,
				fmt.Sprintf("signing key %s revoked from %s: its signatures from then on do not verify", k.KeyID,
					*k.RevokedAt), c); err != nil {
				return err
			}
			if err := s.recheckpoint(ctx, now, k, at); err != nil {
				return err
			}
		}
	}
	return nil
}

// recheckpoint re-signs, after a revocation, the checkpoints the revoked
// key made after its compromise time: those no longer count. It re-signs
// a segment only when the archive's sole problem with it is that
// signature: its digests, its manifest's link to the previous one and its
// chains' continuity across the archive and the hot stream all verify
// (a segment forged with the stolen key would break one of them). A
// marker in the heads bucket makes it run once per revocation.
func (s *Service) recheckpoint(ctx context.Context, now time.Time, k schemas.Key, at time.Time) error {
	kv, err := s.js.KeyValue(ctx, stream.BucketHeads)
	if err != nil {
		return err
	}
	marker := fmt.Sprintf("revocation.%s.%d", k.KeyID, at.UnixNano())
	if _, err := kv.Get(ctx, marker); err == nil {
		return nil
	} else if !errors.Is(err, jetstream.ErrKeyNotFound) {
		return err
	}
	keys, err := s.reg.List(ctx)
	if err != nil {
		return err
	}
	set, err := keyring.NewSet(keys)
	if err != nil {
		return err
	}
	signer, err := keyring.NewSigner(keys, keyring.Dir{Path: s.cfg.KeyDir}, now)
	if err != nil {
		return fmt.Errorf("re-checkpoint signer: %w", err)
	}
	resigned := 0
	for _, name := range []string{stream.Ledger, stream.Attest} {
		o := archive.Options{Keys: set, Now: now, Retention: s.cfg.ArchiveRetention}
		var rep *archive.Report
		if name == stream.Ledger {
			cr, err := archive.VerifyChains(ctx, s.store, s.js, name, o)
			if err != nil {
				return err
			}
			rep = cr.Archive
			if len(cr.Problems) > 0 {
				return fmt.Errorf(
					"re-checkpoint after revoking %s: the ledger does not verify across archive and hot stream (%s); not re-signing", k.KeyID, cr.Problems[0])
			}
		} else if rep, err = archive.Verify(ctx, s.store, name, o); err != nil {
			return err
		}
		bad := map[string]bool{}
		sigOnly := map[string]bool{}
		for _, p := range rep.Problems {
			if p.Signature {
				sigOnly[p.Segment] = true
			} else {
				bad[p.Segment] = true
			}
		}
		for seg := range sigOnly {
			if bad[seg] {
				s.set.Logger.ErrorContext(ctx,
					"rotator: a checkpoint by the revoked key covers a segment that does not verify; not re-signing it", slog.String(
						"stream", name), slog.Any("segment", seg), slog.String("key", k.KeyID))
				continue
			}
			cpRaw, err := s.store.Get(ctx, archive.CheckpointKey(name, seg))
			if err != nil {
				return err
			}
			var env struct {
				Payload string `json:"payload"`
			}
			if err := json.Unmarshal(cpRaw, &env, json.RejectUnknownMembers(false)); err != nil {
				return err
			}
			payload, err := base64.StdEncoding.DecodeString(env.Payload)
			if err != nil {
				return err
			}
			var cp archive.Checkpoint
			if err := json.Unmarshal(payload, &cp); err != nil {
				return err
			}
			cp.SignedAt = now.UTC().Format(archive.TimeFormat)
			np, err := json.Marshal(cp, json.Deterministic(true))
			if err != nil {
				return err
			}
			signed, err := signer.SignAt(ctx, now, archive.CheckpointType, np)
			if err != nil {
				return err
			}
			if err := s.store.Put(ctx, archive.CheckpointKey(name, seg), signed, "application/json"); err != nil {
				return err
			}
			resigned++
		}
	}
	if _, err := kv.Put(ctx, marker, []byte(now.UTC().Format(archive.TimeFormat))); err != nil {
		return err
	}
	if resigned > 0 {
		s.set.Logger.WarnContext(ctx, "rotator: re-signed checkpoints made by a revoked key after its compromise time",
			slog.String("key", k.KeyID), slog.Any("compromise", at), slog.Any("segments", resigned))
	}
	return nil
}

// serveKeys answers `claimcheck keys rotate|revoke` (subject.RotatorKeys):
// the rotator is the only writer of the key registry, and records every
// change in its chain before it answers.
func (s *Service) serveKeys(ctx context.Context) (*nats.Subscription, error) {
	return s.set.Conn.QueueSubscribe(subject.RotatorKeys, "rotator", func(m *nats.Msg) {
		rep := s.keyRequest(ctx, m.Data)
		raw, err := json.Marshal(rep)
		if err != nil {
			return
		}
		_ = m.Respond(raw)
	})
}

func (s *Service) keyRequest(ctx context.Context, data []byte) schemas.KeyReply {
	fail := func(format string, args ...any) schemas.KeyReply {
		return schemas.KeyReply{Error: fmt.Sprintf(format, args...)}
	}
	var req schemas.KeyRequest
	if err := json.Unmarshal(data, &req); err != nil {
		return fail("not a key request: %v", err)
	}
	now := s.set.Clock.Now()
	s.keysMu.Lock()
	defer s.keysMu.Unlock()
	var out schemas.KeyReply
	switch req.Op {
	case "rotate":
		overlap := s.cfg.KeyOverlap
		if req.Overlap != "" {
			d, err := time.ParseDuration(req.Overlap)
			if err != nil || d < 0 {
				return fail("overlap %q: want a non-negative Go duration like 10m", req.Overlap)
			}
			overlap = d
		}
		alg := req.Algorithm
		if alg == "" {
			alg = s.cfg.KeyAlgorithm
		}
		r, err := keyring.Rotate(ctx, s.reg, keyring.Dir{Path: s.cfg.KeyDir},
			keyring.NewKey{Algorithm: alg, KMSRef: req.KMSRef}, overlap, now)
		if err != nil {
			return fail("%v", err)
		}
		out.Key, out.Retired = &r.New, r.Retired
	case "revoke":
		at, err := time.Parse(time.RFC3339Nano, req.At)
		if err != nil {
			return fail("at %q: want an RFC 3339 time", req.At)
		}
		k, err := keyring.Revoke(ctx, s.reg, req.KeyID, at)
		if err != nil {
			return fail("%v", err)
		}
		out.Key = &k
	default:
		return fail("unknown op %q (rotate, revoke)", req.Op)
	}
	if err := s.recordKeys(ctx, now, ""); err != nil {
		out.Error = fmt.Sprintf("the registry changed but recording the change in the ledger failed (the next pass retries): %v", err)
	}
	return out
}

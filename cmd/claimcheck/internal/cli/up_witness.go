package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/transparency"
	"github.com/claimcheck/claimcheck/services/rotator"
)

// upWitness configures the witness `claimcheck up` runs beside the log.
type upWitness struct {
	// Enabled runs a local witness (default true). It holds its state in
	// <data_dir>/witness, apart from the NATS store: a store restored from
	// an older copy no longer gets its checkpoints cosigned. A witness on
	// another host, run by someone else, is stronger (rotator.witnesses).
	Enabled bool   `mapstructure:"enabled"`
	Listen  string `mapstructure:"listen"`
}

// startLocalWitness starts the local witness, trusting the log's origin
// with the registry's keys (and the keys added later), and returns it as
// the rotator's witness.
func startLocalWitness(ctx context.Context, js jetstream.JetStream, keys *keyring.Registry, cfg upConfig,
	log *slog.Logger) (rotator.Witness, error) {
	kv, err := transparency.OpenBucket(ctx, js)
	if err != nil {
		return rotator.Witness{}, err
	}
	origin, err := transparency.Origin(ctx, kv)
	if err != nil {
		return rotator.Witness{}, err
	}
	logKeys := func() ([]string, error) {
		list, err := keys.List(ctx)
		if err != nil {
			return nil, err
		}
		var out []string
		for _, k := range keyring.Export(list, time.Now()) {
			if k.Status == keyring.Revoked {
				continue
			}
			vk, err := transparency.VerifierKey(origin, k)
			if err != nil {
				return nil, err
			}
			out = append(out, vk)
		}
		if len(out) == 0 {
			return nil, errors.New("no key in the registry")
		}
		return out, nil
	}
	vkeys, err := logKeys()
	if err != nil {
		return rotator.Witness{}, fmt.Errorf("local witness: %w", err)
	}
	w, err := transparency.OpenWitness(filepath.Join(cfg.DataDir, "witness"), "claimcheck.witness/local",
		map[string][]string{origin: vkeys}, log)
	if err != nil {
		return rotator.Witness{}, err
	}
	ln, err := net.Listen("tcp", cfg.Witness.Listen)
	if err != nil {
		return rotator.Witness{}, fmt.Errorf("witness.listen %s: %w", cfg.Witness.Listen, err)
	}
	go func() {
		if err := serveWitness(ctx, ln, w); err != nil && ctx.Err() == nil {
			log.ErrorContext(ctx, "the local witness stopped", slog.Any("err", err))
		}
	}()
	if err := keys.Watch(ctx, func() {
		if vkeys, err := logKeys(); err != nil {
			log.WarnContext(ctx, "local witness: the log's keys", slog.Any("err", err))
		} else if err := w.SetLog(origin, vkeys); err != nil {
			log.WarnContext(ctx, "local witness: the log's keys", slog.Any("err", err))
		}
	}); err != nil {
		log.WarnContext(ctx, "local witness: cannot watch the key registry; it will refuse checkpoints of new keys", slog.Any("err", err))
	}
	url := "http://" + ln.Addr().String()
	// `ledger verify` on this machine checks the log against the witness.
	if err := os.WriteFile(filepath.Join(cfg.DataDir, "witness", "url"), []byte(url+"\n"), 0o600); err != nil {
		log.WarnContext(ctx, "local witness: cannot write its URL for ledger verify", slog.Any("err", err))
	}
	log.InfoContext(ctx, "local witness running", slog.String("url", url), slog.String("key", w.VerifierKey()),
		slog.String("origin", origin))
	return rotator.Witness{URL: url, Key: w.VerifierKey()}, nil
}

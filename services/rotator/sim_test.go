package rotator_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/archive"
	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/clock"
	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/service"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/services/rotator"
)

const day = 24 * time.Hour

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// env is one JetStream server, a key registry with v1, an archive
// directory and a rotator driven by a fake clock.
type env struct {
	t     *testing.T
	srv   interface{ ClientURL() string }
	nc    *nats.Conn
	js    jetstream.JetStream
	clock *clock.Fake
	cfg   rotator.Config
	reg   *keyring.Registry
	keys  keyring.Dir
	app   *ledger.Appender
	gen   *id.Generator
	rot   *rotator.Service
	store *archive.Store
}

func newEnv(t *testing.T, mutate func(*rotator.Config)) *env {
	t.Helper()
	return newEnvWith(t, mutate, nil)
}

// newEnvWith runs before (if any) on the fresh server, before the streams
// are ensured.
func newEnvWith(t *testing.T, mutate func(*rotator.Config), before func(jetstream.JetStream)) *env {
	t.Helper()
	s := natstest.RunServer(t)
	nc, js := natstest.Connect(t, s.ClientURL())
	if before != nil {
		before(js)
	}
	natstest.Bootstrap(t, js, nil)
	e := &env{t: t, srv: s, nc: nc, js: js, clock: clock.NewFake(t0)}
	dir := t.TempDir()
	e.keys = keyring.Dir{Path: filepath.Join(dir, "keys")}
	var err error
	if e.reg, err = keyring.OpenRegistry(t.Context(), js); err != nil {
		t.Fatal(err)
	}
	if _, _, err := keyring.EnsureFirst(t.Context(), e.reg, e.keys, keyring.ECDSA, t0); err != nil {
		t.Fatal(err)
	}
	e.cfg = rotator.DefaultConfig()
	e.cfg.ArchiveURL = (&url.URL{Scheme: "file", Path: filepath.Join(dir, "archive")}).String()
	e.cfg.KeyDir = e.keys.Path
	if mutate != nil {
		mutate(&e.cfg)
	}
	e.app = ledger.NewAppender(js, ledger.AppenderConfig{})
	e.gen = id.NewGenerator(e.clock, id.FastEntropy{})
	e.rot = e.newRotator()
	if e.store, err = archive.Open(t.Context(), e.cfg.ArchiveURL); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.store.Close() })
	return e
}

func (e *env) newRotator() *rotator.Service {
	e.t.Helper()
	r, err := rotator.New(e.cfg, service.Settings{Conn: e.nc, Clock: e.clock, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := r.Open(e.t.Context()); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = r.Close() })
	return r
}

// add chains k entries to c at the clock's time (as ingest would).
func (e *env) add(c string, k int) {
	e.t.Helper()
	now := e.clock.Now().UTC().Format(time.RFC3339Nano)
	var entries []*schemas.Entry
	for i := range k {
		eid, _ := e.gen.New()
		p := fmt.Sprintf(`{"session_id":%q,"hook_event_name":"PostToolUse","tool_name":"Bash","i":%d,"output":"ok ok ok ok ok"}`, c, i)
		entries = append(entries, &schemas.Entry{V: 1, Kind: schemas.EntryEvent, Chain: c, SessionID: c, EventID: eid, HookEvent: "PostToolUse",
			ToolName: "Bash", IngestedAt: now, ReceivedAt: now, Payload: &p, PayloadDigest: digest.SHA256([]byte(p)), PayloadSize: len(p), Bundle: "test"})
	}
	if _, err := e.app.Append(e.t.Context(), c, entries); err != nil {
		e.t.Fatalf("append to %s: %v", c, err)
	}
}

// fill adds two entries a day to chains s0..s<chains-1> for days days from
// t0, then sets the clock to day 45.
func (e *env) fill(days, chains int) {
	e.t.Helper()
	for d := range days {
		e.clock.Set(t0.Add(time.Duration(d) * day))
		for i := range chains {
			e.add(fmt.Sprintf("s%d", i), 2)
		}
	}
	e.clock.Set(t0.Add(45 * day))
}

func (e *env) pass() rotator.PassReport {
	e.t.Helper()
	rep, err := e.rot.Pass(e.t.Context())
	if err != nil {
		e.t.Fatalf("pass at %s: %v", e.clock.Now().Format(time.DateOnly), err)
	}
	return rep
}

func (e *env) keySet() *keyring.Set {
	e.t.Helper()
	set, err := e.reg.Set(e.t.Context())
	if err != nil {
		e.t.Fatal(err)
	}
	return set
}

func (e *env) verifyChains() *archive.ChainReport {
	e.t.Helper()
	cr, err := archive.VerifyChains(e.t.Context(), e.store, e.js, stream.Ledger, archive.Options{Keys: e.keySet(), Now: e.clock.Now(), Retention: e.cfg.ArchiveRetention})
	if err != nil {
		e.t.Fatal(err)
	}
	return cr
}

// hotMessages lists LEDGER's messages by chain: sequence and entry time.
func (e *env) hotMessages() map[string][]hotMsg {
	e.t.Helper()
	out := map[string][]hotMsg{}
	r := ledger.NewReader(e.js, stream.Ledger)
	chains, err := r.Chains(e.t.Context())
	if err != nil {
		e.t.Fatal(err)
	}
	for _, c := range chains {
		err := r.Walk(e.t.Context(), c, 0, func(s ledger.Stored) error {
			var h struct {
				N          uint64 `json:"n"`
				IngestedAt string `json:"ingested_at"`
			}
			if err := json.Unmarshal(s.Raw, &h, json.RejectUnknownMembers(false)); err != nil {
				return err
			}
			at, _ := time.Parse(time.RFC3339Nano, h.IngestedAt)
			if l := out[c]; len(l) > 0 && l[len(l)-1].seq == s.Seq {
				l[len(l)-1].at = at
				return nil
			}
			out[c] = append(out[c], hotMsg{seq: s.Seq, n: h.N, at: at})
			return nil
		})
		if err != nil {
			e.t.Fatal(err)
		}
	}
	return out
}

type hotMsg struct {
	seq, n uint64
	at     time.Time
}

type signed struct {
	env []byte
	at  time.Time
	key string
}

// Four hundred simulated days: sessions come and go, one runs throughout,
// keys rotate every 90 days and one is revoked. At the end the hot stream
// holds the window, protected chains and each chain's last message; the
// archive the rest; every chain verifies across both; segments past 365
// days are gone with a ledger record each; every key generation's
// signatures verify except the revoked key's after its compromise.
func TestFourHundredSimulatedDays(t *testing.T) {
	e := newEnv(t, func(c *rotator.Config) { c.Interval = day })
	ctx := t.Context()
	const sessions, spread, span = 60, 6, 10
	var sigs []signed
	var revoked string
	var compromise time.Time
	totalMsgs := 0
	for d := range 400 {
		e.clock.Set(t0.Add(time.Duration(d)*day + 12*time.Hour))
		now := e.clock.Now()
		e.add("forever", 2)
		totalMsgs++
		for i := range sessions {
			if d >= i*spread && d < i*spread+span {
				e.add(fmt.Sprintf("s%02d", i), 3)
				totalMsgs++
			}
		}
		if d == 200 {
			// Compromise of the key that signed on day 190.
			for _, s := range sigs {
				if s.at.Sub(t0)/day == 190 {
					revoked = s.key
				}
			}
			compromise = t0.Add(195 * day)
			if _, err := keyring.Revoke(ctx, e.reg, revoked, compromise); err != nil {
				t.Fatal(err)
			}
		}
		e.clock.Set(now.Add(6 * time.Hour)) // the pass runs later in the day
		e.pass()
		// An attestation-like envelope signed today by the active keys, as
		// the verifier signs; some stored in ATTEST so it is archived too.
		now = e.clock.Now()
		keys, _ := e.reg.List(ctx)
		signer, err := keyring.NewSigner(keys, e.keys, now)
		if err != nil {
			t.Fatalf("day %d: signer: %v", d, err)
		}
		env, err := signer.SignAt(ctx, now, "application/vnd.in-toto+json", fmt.Appendf(nil, `{"day":%d}`, d))
		if err != nil {
			t.Fatal(err)
		}
		var dsse struct {
			Signatures []struct {
				KeyID string `json:"keyid"`
			} `json:"signatures"`
		}
		_ = json.Unmarshal(env, &dsse)
		for _, s := range dsse.Signatures {
			sigs = append(sigs, signed{env: env, at: now, key: s.KeyID})
		}
		if d%7 == 0 {
			if _, err := e.js.Publish(ctx, subject.AttestPrefix+".forever.day"+fmt.Sprint(d), env); err != nil {
				t.Fatal(err)
			}
		}
	}
	now := e.clock.Now()

	// Hot stream: only the window, protected chains and last messages.
	hot := e.hotMessages()
	hotCount := 0
	for c, msgs := range hot {
		hotCount += len(msgs)
		if c == schemas.RotatorChain {
			continue
		}
		protected := !msgs[len(msgs)-1].at.Before(now.Add(-e.cfg.ProtectWindow))
		for i, m := range msgs {
			last := i == len(msgs)-1
			if !last && !protected && m.at.Before(now.Add(-e.cfg.HotWindow)) {
				t.Errorf("chain %s: hot message %d (n=%d, %s) is older than the hot window and not the chain's last", c, m.seq, m.n, m.at.Format(time.DateOnly))
			}
		}
	}
	if hotCount*4 > totalMsgs {
		t.Errorf("hot stream holds %d of %d messages: not trimmed", hotCount, totalMsgs)
	}
	// The archive verifies, and every chain verifies across both.
	cr := e.verifyChains()
	if !cr.OK() {
		t.Fatalf("archive+hot verification: archive problems %v, chain problems %v", cr.Archive.Problems, cr.Problems)
	}
	if cr.Chains != sessions+2 { // the sessions, forever, _rotator
		t.Errorf("verified %d chains end to end, want %d", cr.Chains, sessions+2)
	}
	// Segments past 365 days are gone, each deletion ledgered with its digest.
	l, err := e.store.List(ctx, stream.Ledger)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Tombstones) == 0 {
		t.Fatal("no segment was deleted by retention")
	}
	for _, seg := range l.Segments {
		raw, err := e.store.Get(ctx, archive.ManifestKey(stream.Ledger, seg.Name))
		if err != nil {
			t.Fatal(err)
		}
		var m archive.Manifest
		_ = json.Unmarshal(raw, &m)
		if lt, _ := time.Parse(archive.TimeFormat, m.LastTime); lt.Before(now.Add(-e.cfg.ArchiveRetention)) {
			t.Errorf("segment %s (newest %s) is past the retention and still there", seg.Name, m.LastTime)
		}
	}
	deletions := map[string]bool{}
	rotations, revocations := 0, 0
	err = ledger.NewReader(e.js, stream.Ledger).Walk(ctx, schemas.RotatorChain, 0, func(s ledger.Stored) error {
		var en schemas.Entry
		if err := json.Unmarshal(s.Raw, &en); err != nil {
			return err
		}
		switch en.HookEvent {
		case schemas.RotatorSegmentDeleted:
			var d rotator.SegmentDeleted
			if err := json.Unmarshal([]byte(*en.Payload), &d); err != nil {
				return err
			}
			if d.SegmentSHA256 == "" || d.ManifestSHA256 == "" {
				t.Errorf("deletion record without digests: %s", *en.Payload)
			}
			deletions[d.Stream+"/"+d.Segment] = true
		case schemas.RotatorKeyRotated:
			rotations++
		case schemas.RotatorKeyRevoked:
			revocations++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range l.Tombstones {
		if !deletions[stream.Ledger+"/"+tb] {
			t.Errorf("segment %s was deleted without a ledger record", tb)
		}
	}
	// Keys: ~every 90 days, each registration and the revocation ledgered.
	keys, _ := e.reg.List(ctx)
	if len(keys) < 5 || rotations != len(keys) || revocations != 1 {
		t.Errorf("%d keys, %d KeyRotated and %d KeyRevoked records", len(keys), rotations, revocations)
	}
	set := e.keySet()
	gens := map[string]bool{}
	for _, s := range sigs {
		_, err := set.Verify(s.env, "application/vnd.in-toto+json", s.at)
		// (An envelope made in an overlap carries two signatures; the
		// revoked key's own are judged alone below.)
		if wantOK := s.key != revoked || s.at.Before(compromise); wantOK && err != nil {
			t.Errorf("signature by %s on %s: %v", s.key, s.at.Format(time.DateOnly), err)
		}
		if s.key == revoked && !s.at.Before(compromise) {
			only, _ := keyring.NewSet(keysOnly(keys, revoked))
			if _, err := only.Verify(s.env, "application/vnd.in-toto+json", s.at); err == nil {
				t.Errorf("revoked key %s's signature of %s verifies", s.key, s.at.Format(time.DateOnly))
			}
		}
		if err == nil {
			gens[s.key] = true
		}
	}
	if len(gens) != len(keys) {
		t.Errorf("signatures of %d key generations verify, want all %d", len(gens), len(keys))
	}

	// Appends keep working after trims: a fresh appender (ingest after a
	// restart) loads trimmed chains from their anchors, the compare-and-set
	// baseline of a dormant chain is its kept last message.
	e.app = ledger.NewAppender(e.js, ledger.AppenderConfig{})
	e.add("forever", 1)
	e.add("s00", 1)
	if cr := e.verifyChains(); !cr.OK() {
		t.Fatalf("after appends to trimmed chains: %v %v", cr.Archive.Problems, cr.Problems)
	}
	// And the hot stream verifies on its own from the anchors.
	anchors := ledger.NewAnchors(e.js)
	vs := map[string]*chain.Verifier{}
	err = ledger.NewReader(e.js, stream.Ledger).WalkAll(ctx, func(s ledger.Stored) error {
		v := vs[s.Chain]
		if v == nil {
			v = chain.NewVerifierFrom(s.Chain, anchors.StartOf(ctx, s.Chain))
			vs[s.Chain] = v
		}
		return v.Next(s.Raw)
	})
	if err != nil {
		t.Fatalf("hot stream from anchors: %v", err)
	}
	t.Logf("400 days: %d messages appended, %d hot at the end, %d LEDGER segments kept, %d deleted, %d keys", totalMsgs, hotCount, len(l.Segments), len(l.Tombstones), len(keys))
}

func keysOnly(keys []schemas.Key, keyid string) []schemas.Key {
	var out []schemas.Key
	for _, k := range keys {
		if k.KeyID == keyid {
			out = append(out, k)
		}
	}
	return out
}

var _ = strings.Contains
var _ context.Context

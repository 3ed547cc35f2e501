// Package stream names claimcheck's JetStream streams, key-value
// buckets and object stores, and creates them idempotently with the safety
// settings the design requires (the ledger denies delete and purge and
// enables none of the allow_* header features). Subjects come from package
// subject.
package stream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/subject"
)

// Stream names.
const (
	Intake = "INTAKE" // raw hook events, a queue drained by ingest
	Ledger = "LEDGER" // the hash chains, one subject per chain
	Claims = "CLAIMS" // claim requests, a queue drained by the verifiers
	Attest = "ATTEST" // DSSE attestations
)

// Key-value buckets and object stores.
const (
	BucketContracts = "contracts"
	BucketSessions  = "sessions"
	BucketHeads     = "heads"
	BucketKeys      = "keys"
	BucketPolicies  = "policies"
	BucketTlog      = "tlog"   // the ledger's Merkle tree: its origin, tiles and newest checkpoint
	BucketLevels    = "levels" // degradation levels of sessions, hosts and the fleet (CAS updates)
	ObjectArtifacts = "artifacts"
)

// Options size and place the streams.
type Options struct {
	// Replicas of every stream and bucket: 1 on the embedded server, 3 (or
	// more, odd) on a cluster.
	Replicas int `mapstructure:"replicas"`
	// Partitions of INTAKE; one ingest consumer per partition. Fixed when
	// INTAKE is created.
	Partitions int `mapstructure:"partitions"`
	// IntakeMaxBytes bounds INTAKE; publishers get an error (and the hook
	// spools) when it is full, nothing already accepted is discarded.
	IntakeMaxBytes int64 `mapstructure:"intake_max_bytes"`
	// DuplicateWindow is the Nats-Msg-Id dedupe window of INTAKE and LEDGER.
	// ingest also dedupes by event id forever, so this only bounds memory.
	DuplicateWindow time.Duration `mapstructure:"duplicate_window"`
	// MaxMsgSize bounds every message (≤ the server's max_payload).
	MaxMsgSize int32 `mapstructure:"max_msg_size"`
}

// DefaultOptions suit the embedded single-server default.
func DefaultOptions() Options {
	return Options{
		Replicas:        1,
		Partitions:      4,
		IntakeMaxBytes:  4 << 30,
		DuplicateWindow: 2 * time.Minute,
		MaxMsgSize:      1 << 20,
	}
}

// Validate reports every problem with o.
func (o Options) Validate() error {
	var errs []error
	if o.Replicas < 1 || o.Replicas > 5 {
		errs = append(errs, fmt.Errorf("streams.replicas %d: must be 1..5", o.Replicas))
	}
	if o.Partitions < 1 || o.Partitions > 64 {
		errs = append(errs, fmt.Errorf("streams.partitions %d: must be 1..64", o.Partitions))
	}
	if o.IntakeMaxBytes < 1<<20 {
		errs = append(errs, fmt.Errorf("streams.intake_max_bytes %d: must be at least 1 MiB", o.IntakeMaxBytes))
	}
	if o.DuplicateWindow < time.Second {
		errs = append(errs, fmt.Errorf("streams.duplicate_window %s: must be at least 1s", o.DuplicateWindow))
	}
	if o.MaxMsgSize < 64<<10 {
		errs = append(errs, fmt.Errorf("streams.max_msg_size %d: must be at least 64 KiB", o.MaxMsgSize))
	}
	return errors.Join(errs...)
}

// IntakeConfig is INTAKE: the queue of raw events. Subjects
// cc.intake.<origin>.<name>.<chain>.<event> are rewritten on arrival to
// cc.intake.<partition>.<origin>.<name>.<chain>.<event>, the partition a
// hash of the chain, so that each chain is consumed in order by one ingest
// consumer whoever published its events.
//
// It uses limits retention, not work-queue retention: with sync_interval
// always a work-queue acknowledgement removes the message with a tombstone
// write and an fsync of its own, which caps ingest at the disk's fsync rate.
// Instead ingest acknowledges to its consumer (cheap) and purges each
// partition up to the consumer's ack floor in bulk (one fsync per purge).
// Nothing is discarded before it has been chained: no age limit, and when
// full, new publishes are refused (the hook spools) rather than old events
// dropped.
func IntakeConfig(o Options) jetstream.StreamConfig {
	c := base(o, Intake, "claimcheck: raw hook events awaiting ingest", subject.IntakeAll)
	c.SubjectTransform = &jetstream.SubjectTransformConfig{Source: subject.IntakeAll, Destination: intakeDestination(o.Partitions)}
	c.MaxBytes = o.IntakeMaxBytes
	return c
}

// base is what every claimcheck stream shares: limits retention (nothing
// expires by age), file storage, and when full new publishes are refused
// rather than old messages dropped.
func base(o Options, name, description, subjects string) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        name,
		Description: description,
		Subjects:    []string{subjects},
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		Replicas:    o.Replicas,
		Discard:     jetstream.DiscardNew,
		MaxMsgSize:  o.MaxMsgSize,
		Duplicates:  o.DuplicateWindow,
	}
}

func intakeDestination(partitions int) string {
	return fmt.Sprintf("%s.{{partition(%d,3)}}.{{wildcard(1)}}.{{wildcard(2)}}.{{wildcard(3)}}.{{wildcard(4)}}",
		subject.IntakePrefix, partitions)
}

// legacyIntakeDestination is the transform of an INTAKE created before
// subjects named their publisher (cc.intake.<chain>.<event>). It hashes the
// same chain token into the same partitions, so such a stream is updated in
// place: events still queued in it keep their partition and order, and
// ingest reads both stored forms (subject.ParseIntake).
func legacyIntakeDestination(partitions int) string {
	return fmt.Sprintf("%s.{{partition(%d,1)}}.{{wildcard(1)}}.{{wildcard(2)}}", subject.IntakePrefix, partitions)
}

// LedgerConfig is LEDGER: limits retention, no deletes, none of the allow_*
// header features that remove, expire, rewrite or schedule messages (rollup,
// TTL, counters, schedules). Atomic batches are allowed: ingest commits the
// blocks of many sessions in one batch (one fsync instead of one per
// session); the server checks each block's compare-and-set and message id
// as for a single publish and stores all of a batch or nothing. Purges are
// allowed for the rotator alone, which removes entries from the hot stream
// only once their archive copy is verified, by chain and below a sequence,
// never a chain's last message (deny_purge cannot be relaxed on an
// existing stream: a ledger created with it keeps it, and is not trimmed).
func LedgerConfig(o Options) jetstream.StreamConfig {
	c := base(o, Ledger, "claimcheck: per-session hash chains", subject.LedgerAll)
	c.DenyDelete, c.AllowDirect = true, true
	// Per-subject compare-and-set holds inside a batch (nats-server
	// jetstream_batching.go: each subject once per batch, checked against
	// the store).
	c.AllowAtomicPublish = true
	return c
}

// Trimmable reports whether the rotator may trim a ledger stream.
func Trimmable(c jetstream.StreamConfig) bool { return !c.DenyPurge }

// ClaimsConfig is CLAIMS: claim requests for the verifier fleet. Like
// INTAKE it uses limits retention, the verifiers purging what their shared
// consumer has acknowledged (Purger): a work-queue acknowledgement would
// cost every attestation one more fsync. A CLAIMS stream created as a work
// queue by an earlier version is kept as it is (the server cannot change
// retention to or from work queue); it works the same, at that cost.
func ClaimsConfig(o Options) jetstream.StreamConfig {
	return base(o, Claims, "claimcheck: claim requests", subject.ClaimsPrefix+".>")
}

// AttestConfig is ATTEST: signed attestations, kept like the ledger (never
// purged). Each attestation subject takes one message (writers expect last
// subject sequence 0). Atomic batches are allowed: a verifier commits its
// workers' attestations together, one fsync for all of them under
// sync_interval always, each under its own compare-and-set.
func AttestConfig(o Options) jetstream.StreamConfig {
	c := base(o, Attest, "claimcheck: DSSE attestations", subject.AttestPrefix+".>")
	c.DenyDelete, c.DenyPurge, c.AllowDirect = true, true, true
	// Each attestation keeps its expected-last-subject-sequence 0 inside a
	// batch (see LedgerConfig).
	c.AllowAtomicPublish = true
	return c
}

// Configs lists every stream claimcheck uses.
func Configs(o Options) []jetstream.StreamConfig {
	return []jetstream.StreamConfig{IntakeConfig(o), LedgerConfig(o), ClaimsConfig(o), AttestConfig(o)}
}

// KeyValueConfigs lists the buckets of derived state and the key registry.
func KeyValueConfigs(o Options) []jetstream.KeyValueConfig {
	mk := func(name, desc string, history uint8) jetstream.KeyValueConfig {
		return jetstream.KeyValueConfig{Bucket: name, Description: desc, History: history,
			Storage: jetstream.FileStorage, Replicas: o.Replicas}
	}
	return []jetstream.KeyValueConfig{
		mk(BucketContracts, "claimcheck: contracts by session and prompt", 1),
		mk(BucketSessions, "claimcheck: session state", 1),
		mk(BucketHeads, "claimcheck: anchored chain heads", 8),
		mk(BucketKeys, "claimcheck: signing key registry", 64),
		mk(BucketPolicies, "claimcheck: claim policies by version and digest (write once)", 1),
		mk(BucketTlog, "claimcheck: the ledger's Merkle tree (origin, tiles, newest checkpoint)", 1),
		mk(BucketLevels, "claimcheck: degradation levels of sessions, hosts and the fleet", 8),
	}
}

// ObjectStoreConfigs lists the object stores.
func ObjectStoreConfigs(o Options) []jetstream.ObjectStoreConfig {
	return []jetstream.ObjectStoreConfig{{
		Bucket:      ObjectArtifacts,
		Description: "claimcheck: scrubbed payloads too large to keep inline, by digest",
		Storage:     jetstream.FileStorage,
		Replicas:    o.Replicas,
	}}
}

// ErrUnsafe is wrapped when an existing stream lacks a required safety
// setting that claimcheck cannot restore itself.
var ErrUnsafe = errors.New("stream is not safe to use")

// Ensure creates every stream, bucket and object store, or brings an existing
// one to the wanted configuration. It is idempotent and safe to run from many
// processes at once. It refuses to continue when INTAKE was created with a
// different partition count, and it verifies the ledger's safety settings
// after the fact.
func Ensure(ctx context.Context, js jetstream.JetStream, o Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	for _, cfg := range Configs(o) {
		if err := ensureStream(ctx, js, cfg); err != nil {
			return err
		}
	}
	for _, cfg := range KeyValueConfigs(o) {
		if err := ensureBucket(ctx, js, cfg); err != nil {
			return err
		}
	}
	for _, cfg := range ObjectStoreConfigs(o) {
		if err := ensureObjectStore(ctx, js, cfg); err != nil {
			return err
		}
	}
	return checkEvidenceStreams(ctx, js)
}

// ensureBucket creates or updates a KV bucket, and leaves one that has the
// configuration already alone: an update rewrites the stream's metadata,
// and a storage error in the middle of that (nats-server writes the
// metadata file and then its checksum file) leaves a stream that NATS
// refuses to load at its next start.
func ensureBucket(ctx context.Context, js jetstream.JetStream, want jetstream.KeyValueConfig) error {
	if kv, err := js.KeyValue(ctx, want.Bucket); err == nil {
		if st, err := kv.Status(ctx); err == nil {
			if bs, ok := st.(*jetstream.KeyValueBucketStatus); ok && bs.StreamInfo() != nil {
				have := bs.StreamInfo().Config
				if have.Description == want.Description && have.MaxMsgsPerSubject == int64(max(want.History, 1)) &&
					have.Storage == want.Storage && have.Replicas == max(want.Replicas, 1) {
					return nil
				}
			}
		}
	}
	if _, err := js.CreateOrUpdateKeyValue(ctx, want); err != nil {
		return fmt.Errorf("ensure bucket %s: %w", want.Bucket, err)
	}
	return nil
}

// ensureObjectStore is ensureBucket for an object store.
func ensureObjectStore(ctx context.Context, js jetstream.JetStream, want jetstream.ObjectStoreConfig) error {
	if obs, err := js.ObjectStore(ctx, want.Bucket); err == nil {
		if st, err := obs.Status(ctx); err == nil && st.Description() == want.Description && st.Storage() == want.Storage &&
			st.Replicas() == max(want.Replicas, 1) {
			return nil
		}
	}
	if _, err := js.CreateOrUpdateObjectStore(ctx, want); err != nil {
		return fmt.Errorf("ensure object store %s: %w", want.Bucket, err)
	}
	return nil
}

// checkEvidenceStreams verifies the ledger's and ATTEST's safety settings.
func checkEvidenceStreams(ctx context.Context, js jetstream.JetStream) error {
	for _, name := range []string{Ledger, Attest} {
		s, err := js.Stream(ctx, name)
		if err != nil {
			return fmt.Errorf("stream %s: %w", name, err)
		}
		check := CheckAppendOnly
		if name == Ledger {
			check = CheckLedger
		}
		if err := check(s.CachedInfo().Config); err != nil {
			return err
		}
	}
	return nil
}

func ensureStream(ctx context.Context, js jetstream.JetStream, want jetstream.StreamConfig) error {
	s, err := js.Stream(ctx, want.Name)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		if _, err := js.CreateStream(ctx, want); err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return fmt.Errorf("create stream %s: %w", want.Name, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("stream %s: %w", want.Name, err)
	}
	have := s.CachedInfo().Config
	want = kept(have, want)
	if want.SubjectTransform != nil && !legacyIntake(have, want) {
		if have.SubjectTransform == nil || have.SubjectTransform.Destination != want.SubjectTransform.Destination {
			got := "none"
			if have.SubjectTransform != nil {
				got = have.SubjectTransform.Destination
			}
			return fmt.Errorf(
				"stream %s was created with subject transform %q, this configuration wants %q: the partition count cannot change while events are queued (drain INTAKE, delete it, restart)", want.Name, got, want.SubjectTransform.Destination)
		}
	}
	if same(have, want) {
		return nil
	}
	if _, err := js.UpdateStream(ctx, want); err != nil {
		return fmt.Errorf("update stream %s to the wanted configuration: %w", want.Name, err)
	}
	return nil
}

// kept adjusts want for the settings of an existing stream that the server
// cannot change.
func kept(have, want jetstream.StreamConfig) jetstream.StreamConfig {
	if have.DenyPurge && !want.DenyPurge {
		want.DenyPurge = true // the server cannot relax it; such a ledger is not trimmed
	}
	if have.Retention == jetstream.WorkQueuePolicy && want.Name == Claims {
		want.Retention = have.Retention // nor change work-queue retention (see ClaimsConfig)
	}
	return want
}

// ErrNotSetUp is wrapped by Check when a stream, bucket or object store is
// missing or differs from what this claimcheck needs: someone allowed to
// change streams (`claimcheck streams ensure` with admin credentials, or
// `claimcheck up`) must set them up. Services retry until they are.
var ErrNotSetUp = errors.New("JetStream is not set up for this claimcheck")

// Check verifies, without changing anything, that every stream, bucket and
// object store exists with the configuration Ensure would give it. It is
// what a service runs when its credentials may not create or update
// streams.
func Check(ctx context.Context, js jetstream.JetStream, o Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	const fix = "run `claimcheck streams ensure` with admin credentials (or start `claimcheck up`)"
	for _, want := range Configs(o) {
		s, err := js.Stream(ctx, want.Name)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return fmt.Errorf("%w: stream %s does not exist: %s", ErrNotSetUp, want.Name, fix)
		} else if err != nil {
			return fmt.Errorf("stream %s: %w", want.Name, err)
		}
		have := s.CachedInfo().Config
		if !same(have, kept(have, want)) {
			return fmt.Errorf("%w: stream %s differs from the configuration this claimcheck needs: %s", ErrNotSetUp, want.Name, fix)
		}
	}
	for _, cfg := range KeyValueConfigs(o) {
		if _, err := js.KeyValue(ctx, cfg.Bucket); errors.Is(err, jetstream.ErrBucketNotFound) {
			return fmt.Errorf("%w: bucket %s does not exist: %s", ErrNotSetUp, cfg.Bucket, fix)
		} else if err != nil {
			return fmt.Errorf("bucket %s: %w", cfg.Bucket, err)
		}
	}
	for _, cfg := range ObjectStoreConfigs(o) {
		if _, err := js.ObjectStore(ctx, cfg.Bucket); errors.Is(err, jetstream.ErrBucketNotFound) {
			return fmt.Errorf("%w: object store %s does not exist: %s", ErrNotSetUp, cfg.Bucket, fix)
		} else if err != nil {
			return fmt.Errorf("object store %s: %w", cfg.Bucket, err)
		}
	}
	return checkEvidenceStreams(ctx, js)
}

// legacyIntake reports an INTAKE of an earlier claimcheck with the same
// partition count as want: it is updated in place (legacyIntakeDestination).
func legacyIntake(have, want jetstream.StreamConfig) bool {
	if want.Name != Intake || have.SubjectTransform == nil || want.SubjectTransform == nil {
		return false
	}
	for p := 1; p <= 64; p++ {
		if want.SubjectTransform.Destination == intakeDestination(p) {
			return have.SubjectTransform.Destination == legacyIntakeDestination(p)
		}
	}
	return false
}

// same compares the settings claimcheck manages.
func same(a, b jetstream.StreamConfig) bool {
	return strings.Join(a.Subjects, ",") == strings.Join(b.Subjects, ",") &&
		a.Retention == b.Retention && a.Replicas == b.Replicas && a.Discard == b.Discard &&
		limit(a.MaxBytes) == limit(b.MaxBytes) && limit(int64(a.MaxMsgSize)) == limit(int64(b.MaxMsgSize)) &&
		a.Duplicates == b.Duplicates &&
		a.DenyDelete == b.DenyDelete && a.DenyPurge == b.DenyPurge && a.AllowDirect == b.AllowDirect &&
		a.AllowRollup == b.AllowRollup && a.AllowMsgTTL == b.AllowMsgTTL && a.AllowMsgCounter == b.AllowMsgCounter &&
		a.AllowAtomicPublish == b.AllowAtomicPublish && a.AllowBatchPublish == b.AllowBatchPublish &&
		a.AllowMsgSchedules == b.AllowMsgSchedules && a.Description == b.Description &&
		transformDest(a) == transformDest(b)
}

// limit is a stream limit as the server reports it: none (0 in a
// configuration) is -1.
func limit(v int64) int64 {
	if v <= 0 {
		return -1
	}
	return v
}

func transformDest(c jetstream.StreamConfig) string {
	if c.SubjectTransform == nil {
		return ""
	}
	return c.SubjectTransform.Destination
}

// CheckAppendOnly verifies the settings that make a stream append-only
// evidence: deny delete and purge, no header feature that can remove, expire,
// rewrite or schedule messages, not sealed, limits retention, no age limit.
// Atomic batches (allow_atomic) are accepted: a batch only adds messages,
// each under the same compare-and-set and message-id checks as a single
// publish, stored all or none. Fast batches (allow_batched) are not.
func CheckAppendOnly(c jetstream.StreamConfig) error { return checkEvidence(c, false) }

// CheckLedger is CheckAppendOnly for LEDGER, whose archived entries the
// rotator may purge (deny_purge may be false).
func CheckLedger(c jetstream.StreamConfig) error { return checkEvidence(c, true) }

func checkEvidence(c jetstream.StreamConfig, purgeable bool) error {
	var bad []string
	if !c.DenyDelete {
		bad = append(bad, "deny_delete is false")
	}
	if !c.DenyPurge && !purgeable {
		bad = append(bad, "deny_purge is false")
	}
	if c.AllowRollup {
		bad = append(bad, "allow_rollup_hdrs is true")
	}
	if c.AllowMsgTTL {
		bad = append(bad, "allow_msg_ttl is true")
	}
	if c.AllowMsgCounter {
		bad = append(bad, "allow_msg_counter is true")
	}
	if c.AllowBatchPublish {
		bad = append(bad, "allow_batched is true")
	}
	if c.AllowMsgSchedules {
		bad = append(bad, "allow_msg_schedules is true")
	}
	if c.Retention != jetstream.LimitsPolicy {
		bad = append(bad, "retention is not limits")
	}
	if c.MaxAge != 0 || c.MaxMsgsPerSubject > 0 || c.MaxMsgs > 0 || c.MaxBytes > 0 && c.Discard == jetstream.DiscardOld {
		bad = append(bad, "a limit would discard old entries")
	}
	if c.RePublish != nil {
		bad = append(bad, "republish is set")
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s: %s", ErrUnsafe, c.Name, strings.Join(bad, "; "))
}

// ServerTime returns a function that reads the NATS server's clock: the
// time in its answer to a stream info request (LEDGER's, or while there is
// no LEDGER yet any stream's). Every service may ask for stream info.
func ServerTime(js jetstream.JetStream) func(context.Context) (time.Time, error) {
	return func(ctx context.Context) (time.Time, error) {
		var info *jetstream.StreamInfo
		s, err := js.Stream(ctx, Ledger)
		switch {
		case err == nil:
			info = s.CachedInfo()
		case errors.Is(err, jetstream.ErrStreamNotFound):
			l := js.ListStreams(ctx)
			for i := range l.Info() { // read to the end: the lister sends them all
				if info == nil {
					info = i
				}
			}
			if info == nil {
				if err := l.Err(); err != nil && !errors.Is(err, jetstream.ErrEndOfData) {
					return time.Time{}, fmt.Errorf("the NATS server's time: %w", err)
				}
				return time.Time{}, errors.New("the NATS server's time: no stream to ask yet")
			}
		default:
			return time.Time{}, fmt.Errorf("the NATS server's time: %w", err)
		}
		if info.TimeStamp.IsZero() {
			return time.Time{}, errors.New("the NATS server's time: its stream info carries none (nats-server 2.10 or later does)")
		}
		return info.TimeStamp, nil
	}
}

package rotator

import (
	"context"
	"crypto/sha256"
	"fmt"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/oklog/ulid/v2"

	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/schemas"
)

// recorder appends the rotator's records to its own chain (_rotator)
// directly, so a record is durable before the step it records happens.
// Event ids are derived from what is recorded: recording the same thing
// again (after a crash) is recognised as a duplicate and not chained.
type recorder struct {
	app *ledger.Appender
}

func newRecorder(js jetstream.JetStream) *recorder {
	return &recorder{app: ledger.NewAppender(js, ledger.AppenderConfig{})}
}

// eventID is a ULID with at's milliseconds and entropy from key.
func eventID(at time.Time, key string) string {
	sum := sha256.Sum256([]byte(key))
	var u ulid.ULID
	_ = u.SetTime(ulid.Timestamp(at))
	copy(u[6:], sum[:10])
	return u.String()
}

// record chains one rotator record at now; its event id comes from at (the
// time of what is recorded, not of recording it) and key. It returns
// whether the record was new.
func (r *recorder) record(ctx context.Context, now, at time.Time, kind, key, reason string, payload any) (bool, error) {
	raw, err := json.Marshal(payload, json.Deterministic(true))
	if err != nil {
		return false, err
	}
	p := string(raw)
	e := &schemas.Entry{
		V: 1, Kind: schemas.EntryRotator, Chain: schemas.RotatorChain, EventID: eventID(at, kind+"\x00"+key),
		HookEvent: kind, IngestedAt: now.UTC().Format(time.RFC3339Nano), Bundle: "rotator",
		Payload: &p, PayloadDigest: digest.SHA256(raw), PayloadSize: len(raw), Reason: reason,
	}
	out, err := r.app.Append(ctx, schemas.RotatorChain, []*schemas.Entry{e})
	if err != nil {
		return false, fmt.Errorf("record %s: %w", kind, err)
	}
	return len(out.Entries) == 1, nil
}

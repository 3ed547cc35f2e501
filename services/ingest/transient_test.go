package ingest

import (
	"context"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/ledger"
)

// ingest retries an append until it lands unless the failure is about the
// append itself. A 409 "duplicate message id is in process" is not: the
// leader still holds the previous attempt of the same entries (seen when a
// three-node cluster lost two nodes mid-append; ingest used to exit on it).
func TestTransientAppendFailures(t *testing.T) {
	api := func(code int, errCode uint16) error {
		return fmt.Errorf("append to s at n=6: nats: %w", &jetstream.APIError{Code: code, ErrorCode: jetstream.ErrorCode(errCode)})
	}
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"in process", api(409, 10158), true},
		{"too many in flight", api(429, 10211), true},
		{"503", api(503, 10008), true},
		{"deadline", context.DeadlineExceeded, true},
		{"message too large", api(400, 10054), false},
		{"chain unreadable", fmt.Errorf("x: %w", ledger.ErrChainUnreadable), false},
		{"canceled", context.Canceled, false},
	} {
		if got := transient(c.err); got != c.want {
			t.Errorf("%s: transient = %t, want %t", c.name, got, c.want)
		}
	}
}

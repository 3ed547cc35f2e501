package stream_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/stream"
)

// Which failures pass: those that say nothing about the request itself.
// A placement refused because peers are offline passes, one refused for
// storage or tags alone does not. A 409 "duplicate message id is in
// process" (an earlier attempt of the same message not yet committed, as
// after a cluster lost its quorum) and a 429 pass, though 4xx; a wrong
// last sequence or any other 4xx does not.
func TestTransient(t *testing.T) {
	apiSaying := func(code int, errCode uint16, desc string) error {
		return fmt.Errorf("append: %w", &jetstream.APIError{Code: code, ErrorCode: jetstream.ErrorCode(errCode), Description: desc})
	}
	api := func(code int, errCode uint16) error { return apiSaying(code, errCode, "x") }
	for _, c := range []struct {
		name      string
		err       error
		transient bool
		inProcess bool
	}{
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), true, false},
		{"no responders", nats.ErrNoResponders, true, false},
		{"503", api(503, 10008), true, false},
		{"in process", api(409, 10158), true, true},
		{"too many in flight", api(429, 10211), true, true},
		{"wrong last sequence", api(400, 10071), false, false},
		{"message too large", api(400, 10054), false, false},
		{"another 409", api(409, 10148), false, false},
		{"peers offline", apiSaying(400, 10005, "no suitable peers for placement, peer offline"), true, false},
		{"peers offline among reasons", apiSaying(400, 10005, "no suitable peers for placement, peer offline, insufficient storage"), true, false},
		{"no peers with the storage", apiSaying(400, 10005, "no suitable peers for placement, insufficient storage"), false, false},
		{"no peers with the tags", apiSaying(400, 10005, "no suitable peers for placement, tags not matched ['az:1']"), false, false},
		{"unsafe", stream.ErrUnsafe, false, false},
		{"plain", errors.New("boom"), false, false},
	} {
		if got := stream.Transient(c.err); got != c.transient {
			t.Errorf("%s: Transient = %t, want %t", c.name, got, c.transient)
		}
		if got := stream.InProcess(c.err); got != c.inProcess {
			t.Errorf("%s: InProcess = %t, want %t", c.name, got, c.inProcess)
		}
	}
}

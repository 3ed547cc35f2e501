package ledger_test

import (
	"errors"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/ledger"
)

// Before finds the last entry of a chain stored below a sequence, past
// other chains' blocks, with direct gets and (on a copy without them) by
// walking.
func TestBeforeFindsThePredecessorBlock(t *testing.T) {
	js := setup(t)
	a := ledger.NewAppender(js, ledger.AppenderConfig{})
	writeBlocks(t, a, []string{"before-a", "before-b"}, 1, 5, "") // a1 b1 a2 b2 …: a's block i at sequence 2i-1
	var blocks []jetstream.RawStreamMsg
	s, err := js.Stream(t.Context(), "LEDGER")
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= 10; seq++ {
		m, err := s.GetMsg(t.Context(), seq)
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, *m)
	}
	if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: "NODIRECT", Subjects: []string{"nodirect.>"}}); err != nil {
		t.Fatal(err)
	}
	for _, m := range blocks {
		if _, err := js.Publish(t.Context(), "nodirect."+m.Subject[len("cc.ledger."):], m.Data); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"", "NODIRECT"} {
		r := ledger.NewReader(js, name)
		for _, tt := range []struct {
			seq   uint64
			wantN uint64 // 0: none
		}{{1, 0}, {2, 1}, {3, 1}, {4, 2}, {9, 4}, {10, 5}, {1000, 5}} {
			got, err := r.Before(t.Context(), "before-a", tt.seq)
			if tt.wantN == 0 {
				if !errors.Is(err, ledger.ErrEmpty) {
					t.Fatalf("%s: Before(%d) = %+v, %v; want ErrEmpty", name, tt.seq, got, err)
				}
				continue
			}
			var e struct {
				N     uint64 `json:"n"`
				Chain string `json:"chain"`
			}
			if err != nil || json.Unmarshal(got.Raw, &e, json.RejectUnknownMembers(false)) != nil || e.N != tt.wantN ||
				e.Chain != "before-a" || got.Seq != 2*tt.wantN-1 {
				t.Fatalf("%s: Before(%d) = seq %d n %d %v, want n %d", name, tt.seq, got.Seq, e.N, err, tt.wantN)
			}
		}
		if _, err := r.Before(t.Context(), "nosuch", 10); !errors.Is(err, ledger.ErrEmpty) {
			t.Fatalf("%s: unknown chain: %v", name, err)
		}
	}
}

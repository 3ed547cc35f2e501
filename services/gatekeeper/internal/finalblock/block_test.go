package finalblock

import (
	"strings"
	"testing"
)

func TestULIDProblem(t *testing.T) {
	for _, tc := range []struct{ id, want string }{
		{"01KAB0F0000000000000000001", ""},
		{"7ZZZZZZZZZZZZZZZZZZZZZZZZZ", ""},
		{"", "0 characters"},
		{"01KAB0F000000000000000001", "25 characters"},
		{"01KAB0F0000000000000000001 ", "27 characters"},
		{"81KAB0F0000000000000000001", "starts with a digit 0-7"},
		{"01KAB0F000000000000000000I", `character 26 is "I"`},
		{"01KAB0F00000000000000000é1", `character 25 is "é"`},
		{"01KAB0F00000000000-0000001", `character 19 is "-"`},
		{"01kab0f0000000000000000001", "upper case"},
	} {
		got := ulidProblem(tc.id)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("ulidProblem(%q) = %q, want %q", tc.id, got, tc.want)
		}
	}
}

func TestErrorsClipValues(t *testing.T) {
	long := strings.Repeat("ü", 5000)
	for _, msg := range []string{
		block(`{"type":"` + long + `"}`),
		block(`{"type":"done","` + long + `":1,"` + long + `":2}`),
	} {
		m := Parse(msg)
		if m.BlockErr == nil {
			t.Fatal("no error")
		}
		if n := len(m.BlockErr.Error()); n > 400 {
			t.Errorf("error not clipped: %d bytes", n)
		}
	}
}

func TestProblemsCapped(t *testing.T) {
	var claims []string
	for range 20 {
		claims = append(claims, `{"claim_type":"x","attestation_id":""}`)
	}
	m := Parse(block(`{"type":"done","claims":[` + strings.Join(claims, ",") + `]}`))
	if m.BlockErr == nil || !strings.HasSuffix(m.BlockErr.Error(), "; and 32 more") || strings.Count(m.BlockErr.Error(), "; ") != maxProblems {
		t.Fatalf("error %v", m.BlockErr)
	}
}

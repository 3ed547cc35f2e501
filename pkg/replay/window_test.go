package replay

import (
	"strings"
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	now := time.Date(2026, 11, 28, 6, 0, 0, 0, time.UTC)
	tests := []struct {
		in      string
		want    time.Time
		wantErr string
	}{
		{"2026-11-28T05:00:00Z", time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC), ""},
		{"2026-11-28T07:00:00.250+02:00", time.Date(2026, 11, 28, 5, 0, 0, 250e6, time.UTC), ""},
		{"1h", now.Add(-time.Hour), ""},
		{" 90m ", now.Add(-90 * time.Minute), ""},
		{"7d", now.Add(-7 * 24 * time.Hour), ""},
		{"1d12h", now.Add(-36 * time.Hour), ""},
		{"0s", now, ""},
		{"", time.Time{}, "empty"},
		{"-1h", time.Time{}, "duration back from now"},
		{"+1h", time.Time{}, "duration back from now"},
		{"1d-1h", time.Time{}, "duration back from now"},
		{"yesterday", time.Time{}, "duration back from now"},
		{"1y", time.Time{}, "duration back from now"},
		{"d", time.Time{}, "duration back from now"},
		{"99999d", time.Time{}, "duration back from now"},
		{"40000d", time.Time{}, "duration back from now"},
		{"2562047h", time.Time{}, "duration back from now"},
		{"2026-11-28", time.Time{}, "RFC 3339"},
		{"2026-13-01T00:00:00Z", time.Time{}, "RFC 3339"},
		{"2026-11-28T05:00:00", time.Time{}, "RFC 3339"},
		{"1h\x00", time.Time{}, "RFC 3339"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseTime(tt.in, now)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseTime(%q) = %v, %v; want an error with %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || !got.Equal(tt.want) {
				t.Fatalf("ParseTime(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParsePos(t *testing.T) {
	tests := []struct {
		in      string
		want    Pos
		wantErr string
	}{
		{"1234.2", Pos{1234, 2}, ""},
		{"1.1", Pos{1, 1}, ""},
		{"18446744073709551615.1", Pos{^uint64(0), 1}, ""},
		{"", Pos{}, "want <sequence>.<entry>"},
		{"1234", Pos{}, "want <sequence>.<entry>"},
		{"0.1", Pos{}, "not a positive integer"},
		{"-1.1", Pos{}, "not a positive integer"},
		{"+1.1", Pos{}, "not a positive integer"},
		{"1.0", Pos{}, "not an integer in 1.."},
		{"1.-2", Pos{}, "not an integer in 1.."},
		{"1.+2", Pos{}, "not an integer in 1.."},
		{"1.2.3", Pos{}, "not an integer in 1.."},
		{"1.99999999", Pos{}, "not an integer in 1.."},
		{"18446744073709551616.1", Pos{}, "not a positive integer"},
		{"abc.def", Pos{}, "not a positive integer"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParsePos(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParsePos(%q) = %v, %v; want an error with %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want || got.String() != strings.TrimSpace(tt.in) {
				t.Fatalf("ParsePos(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestFilterCheckNamesTheFlag(t *testing.T) {
	tests := []struct {
		f       Filter
		wantErr string
	}{
		{Filter{}, ""},
		{Filter{Session: "_rejected", Kind: "GateDecision", Host: "dev1.example.com"}, ""},
		{Filter{Kind: "verdict"}, ""},
		{Filter{Session: "../etc"}, `--session "../etc"`},
		{Filter{Session: "a b"}, `--session "a b"`},
		{Filter{Kind: "Bogus"}, `--kind "Bogus": want an entry kind`},
		{Filter{Kind: "pretooluse"}, `--kind "pretooluse"`},
		{Filter{Host: "a b"}, `--host "a b"`},
		{Filter{Host: strings.Repeat("h", 300)}, `--host`},
	}
	for _, tt := range tests {
		err := tt.f.Check()
		if tt.wantErr == "" {
			if err != nil {
				t.Errorf("%+v: %v", tt.f, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%+v: %v, want %q", tt.f, err, tt.wantErr)
		}
	}
}

func TestWindow(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)
	w := Window{Since: t0, Until: t0.Add(time.Hour)}
	for _, c := range []struct {
		at   time.Time
		want bool
	}{{t0, true}, {t0.Add(-time.Nanosecond), false}, {t0.Add(59 * time.Minute), true}, {t0.Add(time.Hour), false}} {
		if got := w.Contains(c.at); got != c.want {
			t.Errorf("Contains(%v) = %v", c.at, got)
		}
	}
	if err := (Window{Since: t0, Until: t0}).Check(); err == nil || !strings.Contains(err.Error(), "--until") {
		t.Errorf("empty window: %v", err)
	}
	if !(Window{Since: t0}).Contains(t0.Add(1000 * time.Hour)) {
		t.Error("an open window ends")
	}
}

func FuzzParsePos(f *testing.F) {
	for _, s := range []string{"1234.2", "1.1", "0.0", "", ".", "1.", ".1", "18446744073709551615.1048576", "-1.-1", "1e3.2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePos(s)
		if err != nil {
			return
		}
		if p.Seq == 0 || p.Index < 1 || p.Index > maxIndex {
			t.Fatalf("ParsePos(%q) = %+v: out of range", s, p)
		}
		q, err := ParsePos(p.String())
		if err != nil || q != p {
			t.Fatalf("ParsePos(%q) = %+v, but its String %q parses to %+v, %v", s, p, p.String(), q, err)
		}
	})
}

func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"1h", "7d", "1d12h", "2026-11-28T05:00:00Z", "2026-11-28T05:00:00.123456789+14:00", "", "-1h",
		"65535d", "9223372036854775807ns", "1.5h"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 28, 6, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseTime(s, now)
		if err != nil {
			if !strings.Contains(err.Error(), "RFC 3339") {
				t.Fatalf("ParseTime(%q): error %q does not say what is wanted", s, err)
			}
			return
		}
		if got.Location() != time.UTC {
			t.Fatalf("ParseTime(%q) = %v: not UTC", s, got)
		}
		if _, rfcErr := time.Parse(time.RFC3339Nano, strings.TrimSpace(s)); rfcErr != nil && got.After(now) {
			t.Fatalf("ParseTime(%q) = %v: a duration back from now lies in the future", s, got)
		}
	})
}

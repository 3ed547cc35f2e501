package id

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/claimcheck/claimcheck/pkg/clock"
)

func TestGeneratorMonotonic(t *testing.T) {
	c := clock.NewFake(time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC))
	g := NewGenerator(c, nil)
	prev := ""
	for i := range 5000 {
		switch i {
		case 1000:
			c.Advance(-time.Hour) // clock steps back
		case 2000:
			c.Advance(2 * time.Hour)
		}
		u, err := g.New()
		if err != nil {
			t.Fatal(err)
		}
		if !ValidULID(u) {
			t.Fatalf("invalid ulid %q", u)
		}
		if u <= prev {
			t.Fatalf("ulid %d not increasing: %s after %s", i, u, prev)
		}
		prev = u
	}
}

func TestDerivedIsStable(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a, b := Derived(at, []byte("x")), Derived(at, []byte("x"))
	if a != b || !ValidULID(a) {
		t.Fatalf("Derived not stable or invalid: %s %s", a, b)
	}
	if Derived(at, []byte("y")) == a {
		t.Fatal("different seeds gave the same id")
	}
}

func TestCheckSession(t *testing.T) {
	good := []string{"abc123", "00893aaf-19fa-41d2-8238-13269b9b3ca0", "A_b-C", strings.Repeat("a", 128)}
	for _, s := range good {
		if err := CheckSession(s); err != nil {
			t.Errorf("CheckSession(%q) = %v, want nil", s, err)
		}
	}
	bad := []string{"", "..", "../etc/passwd", "a/b", "a.b", "*", ">", "a b", "a\nb", "a\x00b", "-lead", "_lead", "é", strings.Repeat("a", 129), "a\tb", "cc.>", "\xff"}
	for _, s := range bad {
		if err := CheckSession(s); err == nil {
			t.Errorf("CheckSession(%q) = nil, want error", s)
		}
	}
}

func TestEventToken(t *testing.T) {
	for in, want := range map[string]string{"PostToolUse": "PostToolUse", "Stop": "Stop", "a.b": OtherEvent, "*": OtherEvent, "": OtherEvent, "9x": OtherEvent, strings.Repeat("A", 65): OtherEvent} {
		if got := EventToken(in); got != want {
			t.Errorf("EventToken(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestQuoteBoundsHostileInput(t *testing.T) {
	q := Quote(strings.Repeat("\x01", 10000))
	if len(q) > 800 {
		t.Fatalf("Quote output %d bytes, want bounded", len(q))
	}
	if strings.ContainsRune(q, '\x01') {
		t.Fatal("control character not escaped")
	}
}

func TestValidULIDAgreesWithPattern(t *testing.T) {
	re := regexp.MustCompile(`^[0-7][0-9A-HJKMNP-TV-Z]{25}$`)
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcz-_ "
	for range 20000 {
		n := 24 + r.IntN(4)
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		if r.IntN(3) == 0 {
			b[0] = "01234567"[r.IntN(8)]
		}
		s := string(b)
		if ValidULID(s) != re.MatchString(s) {
			t.Fatalf("ValidULID(%q) = %v, pattern says %v", s, ValidULID(s), re.MatchString(s))
		}
	}
}

func TestHostToken(t *testing.T) {
	for in, want := range map[string]string{
		"laptop": "laptop", "Dev1.Example.COM": "dev1_example_com", "ci-runner-7": "ci-runner-7", strings.Repeat("a", 63): strings.Repeat("a", 63),
	} {
		got, err := HostToken(in)
		if err != nil || got != want {
			t.Errorf("HostToken(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", ".", ".lead", "-lead", "a b", "a/b", "a*b", "a>b", "é", "a\x00b", strings.Repeat("a", 64), "a\nb"} {
		if got, err := HostToken(in); err == nil {
			t.Errorf("HostToken(%q) = %q, want an error", in, got)
		}
	}
	if err := CheckName("Upper"); err == nil {
		t.Error("CheckName accepted upper case (credential tags are lower case)")
	}
}

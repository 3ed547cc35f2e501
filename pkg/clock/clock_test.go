package clock

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FileSkew moves the real clock by the file's offset, follows changes,
// and keeps the last good offset when the file is malformed or gone.
func TestFileSkew(t *testing.T) {
	path := filepath.Join(t.TempDir(), "skew")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	f := NewFileSkew(t.Context(), path, 10*time.Millisecond) // no file yet
	if f.Skew() != 0 {
		t.Fatalf("skew %v without a file", f.Skew())
	}
	write("-10m\n")
	eventually(t, func() bool { return f.Skew() == -10*time.Minute })
	if d := time.Until(f.Now()); d > -9*time.Minute || d < -11*time.Minute {
		t.Fatalf("Now is %v from the real clock, want about -10m", d)
	}
	write("ten minutes")
	time.Sleep(100 * time.Millisecond)
	if f.Skew() != -10*time.Minute {
		t.Fatalf("a malformed file changed the skew to %v", f.Skew())
	}
	write("90s")
	eventually(t, func() bool { return f.Skew() == 90*time.Second })
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if f.Skew() != 90*time.Second {
		t.Fatalf("a removed file changed the skew to %v", f.Skew())
	}
}

func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

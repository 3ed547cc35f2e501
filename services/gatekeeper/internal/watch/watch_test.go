package watch

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestBypassPhrases(t *testing.T) {
	yes := []string{
		"skip the tests and commit",
		"Skip the test, I know it works",
		"just skip tests this once",
		"skipping the checks is fine here",
		"force this through please",
		"Force it.",
		"bypass the gate",
		"please disable the hook for now",
		"ignore the evidence gate and finish",
		"override claimcheck, we are late",
		"turn off the stop hook",
		"just say it's done",
		"mark it as done",
		"Mark this complete and move on",
		"don't run the tests",
		"no need to run tests",
		"ship it without running the tests",
		"commit with --no-verify",
		"get around the validators",
		"stop the gate from blocking you",
	}
	no := []string{
		"run the tests and fix what fails",
		"force-push the branch after rebasing",
		"the skip list in tests/conftest.py needs an entry",
		"add a --force flag to the CLI",
		"write a test that checks the gate blocks",
		"why did the hook block the stop?",
		"is it done?",
		"make the verification step faster",
		"document how overrides are audited",
		"ignore whitespace in the diff",
		"the test is skipped on windows; fix that",
		"",
		"Write a function to calculate the factorial of a number",
		"disable the cache in the dev config",
		"say hello in the README",
	}
	for _, p := range yes {
		if Bypass(p) == "" {
			t.Errorf("Bypass(%q) found nothing, want a bypass phrase", p)
		}
	}
	for _, p := range no {
		if got := Bypass(p); got != "" {
			t.Errorf("Bypass(%q) = %q, want none", p, got)
		}
	}
	// Huge prompts are bounded, not scanned whole.
	if Bypass(strings.Repeat("a", 1<<20)+" skip the tests") != "" {
		t.Error("phrase past the scan bound was found")
	}
}

func TestOverrideThresholdOncePerDay(t *testing.T) {
	w := New(DefaultConfig())
	t0 := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	w.Override("laptop", "e1", t0)
	w.Override("laptop", "e2", t0.Add(time.Hour))
	w.Override("laptop", "e2", t0.Add(time.Hour)) // the same event, read again (replay)
	if due := w.Due("laptop", t0.Add(2*time.Hour)); len(due) != 0 {
		t.Fatalf("two prompts raised %v", due)
	}
	w.Override("other", "o1", t0.Add(time.Hour))
	w.Override("laptop", "e3", t0.Add(3*time.Hour))
	if due := w.Due("other", t0.Add(3*time.Hour)); len(due) != 0 {
		t.Fatalf("another host's prompts counted: %v", due)
	}
	due := w.Due("laptop", t0.Add(3*time.Hour))
	if len(due) != 1 || due[0].Kind != KindOverride || due[0].Count != 3 || due[0].Day != "2026-11-23" {
		t.Fatalf("third prompt: due %+v, want one override alert of 3", due)
	}
	if msg := due[0].Message(w.Config()); !strings.Contains(msg, "3 prompts") || !strings.Contains(msg, "laptop") {
		t.Errorf("message %q", msg)
	}
	w.Override("laptop", "e4", t0.Add(4*time.Hour))
	if again := w.Due("laptop", t0.Add(4*time.Hour)); len(again) != 0 {
		t.Fatalf("raised twice on one day: %v", again)
	}
	// Next day: the window slid; e3, e4 and two new ones make 4 in 24h.
	w.Override("laptop", "e5", t0.Add(25*time.Hour))
	w.Override("laptop", "e6", t0.Add(26*time.Hour))
	due = w.Due("laptop", t0.Add(26*time.Hour))
	if len(due) != 1 || due[0].Day != "2026-11-24" || due[0].Count != 4 {
		t.Fatalf("next day: %+v", due)
	}
	// Old prompts fall out of the window.
	if due := w.Due("laptop", t0.Add(80*time.Hour)); len(due) != 0 {
		t.Fatalf("stale prompts raised %v", due)
	}
}

func TestCrashesPerHookEventPerHour(t *testing.T) {
	w := New(DefaultConfig())
	t0 := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	// Three crashes spread over more than an hour do not alert.
	for i, d := range []time.Duration{0, 40 * time.Minute, 90 * time.Minute} {
		w.Crash("h", "Stop", fmt.Sprint("s", i), t0.Add(d))
	}
	if due := w.Due("h", t0.Add(90*time.Minute)); len(due) != 0 {
		t.Fatalf("spread crashes raised %v", due)
	}
	// Crashes of different events are counted apart.
	w.Crash("h", "PreToolUse", "p1", t0.Add(91*time.Minute))
	if due := w.Due("h", t0.Add(91*time.Minute)); len(due) != 0 {
		t.Fatalf("mixed events raised %v", due)
	}
	w.Crash("h", "Stop", "s3", t0.Add(95*time.Minute))
	due := w.Due("h", t0.Add(95*time.Minute))
	if len(due) != 1 || due[0].Kind != KindCrash || due[0].Event != "Stop" || due[0].Count != 3 {
		t.Fatalf("due %+v, want one Stop crash alert of 3", due)
	}
	// Raised alerts read back from the ledger (a restart) are not raised again.
	w2 := New(DefaultConfig())
	for i := range 3 {
		w2.Crash("h", "", fmt.Sprint("u", i), t0)
	}
	w2.Raised(Alert{Kind: KindCrash, Host: "h", Event: "unknown", Day: "2026-11-23"})
	if due := w2.Due("h", t0); len(due) != 0 {
		t.Fatalf("alert in the ledger raised again: %v", due)
	}
}

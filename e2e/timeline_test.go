package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/pkg/identity"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/schemas"
)

// browser finds Debian's chromium; without it the test skips, unless
// CLAIMCHECK_BROWSER_REQUIRED is set (CI installs it and sets it).
func browser(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CLAIMCHECK_BROWSER_REQUIRED") != "" {
		t.Fatal("no chromium on PATH (apt-get install chromium)")
	}
	t.Skip("no chromium on PATH: the timeline is not rendered (CI sets CLAIMCHECK_BROWSER_REQUIRED)")
	return ""
}

// rendered opens a page in headless chromium and returns what a reader
// sees: the body's rendered text and the number of table rows shown.
func rendered(t *testing.T, exe, file string) (string, int) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.Flag("headless", true), chromedp.UserDataDir(t.TempDir()))
	actx, cancel := chromedp.NewExecAllocator(t.Context(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Navigate("file://"+file)); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`Array.from(document.querySelectorAll("tbody tr")).filter(r => r.offsetHeight > 0).length`))
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	return text, rows
}

// TestTimelineRendersInABrowser writes the timeline of a session recorded
// through claimcheck-hook and of a 2,000-event session, renders both in
// headless chromium and reads them as a person would.
func TestTimelineRendersInABrowser(t *testing.T) {
	exe := browser(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	upEnvs := []string{"CLAIMCHECK_HOOK_STATE_DIR=" + filepath.Join(dir, "hook")}
	_, url := upEnv(t, upEnvs, data, "127.0.0.1:0")
	env := append([]string{"CLAIMCHECK_NATS_URL=" + url, "CLAIMCHECK_HOOK_GATE=false", "CLAIMCHECK_DATA_DIR=" + data}, upEnvs...)
	a := newAgent(t, env, "tl-real")
	a.prompt("make the login test pass <b>now</b>")
	a.bash("go test ./internal/login", "ok")
	a.edit("/repo/internal/login/login.go")
	a.bashFail("make deploy", "exit status 2")
	show(t, url, "tl-real", 7)

	// 2,000 events: 1,000 tool calls, appended as an operator with the
	// admin role would restore them (pkg/ledger, as ingest chains them).
	_, js, _ := connectAs(t, url, identity.RoleAdmin)
	app := ledger.NewAppender(js, ledger.AppenderConfig{})
	start := time.Now().UTC().Add(-time.Hour)
	for i := range 1000 {
		var block []*schemas.Entry
		for j, hook := range []string{schemas.HookPreToolUse, schemas.HookPostToolUse} {
			p := fmt.Sprintf(`{"session_id":"tl-big","hook_event_name":%q,"tool_name":"Bash","tool_use_id":"toolu_%04d","tool_input":{"command":"go test ./pkg%d"}}`,
				hook, i, i)
			at := start.Add(time.Duration(2*i+j) * time.Second).Format(time.RFC3339Nano)
			block = append(block, &schemas.Entry{V: 1, Kind: schemas.EntryEvent, Chain: "tl-big", SessionID: "tl-big",
				EventID: fmt.Sprintf("01JE%022d", 2*i+j), HookEvent: hook, ToolName: "Bash", ToolUseID: fmt.Sprintf("toolu_%04d", i),
				Host: "big.example.com", IngestedAt: at, ReceivedAt: at, Payload: &p, PayloadDigest: digest.SHA256([]byte(p)),
				PayloadSize: len(p), Bundle: "e2e"})
		}
		if _, err := app.Append(t.Context(), "tl-big", block); err != nil {
			t.Fatal(err)
		}
	}

	for _, tt := range []struct {
		session string
		rows    int
		want    []string
	}{
		{"tl-real", 5, []string{"Session tl-real", "chain verified", "Prompt", "make the login test pass <b>now</b>",
			"Bash (test run)", "go test ./internal/login", "Edit", "/repo/internal/login/login.go", "make deploy",
			"failed: exit status 2", "prompts 1", "test runs 1", "edits 1", "failed calls 1"}},
		{"tl-big", 1000, []string{"Session tl-big", "host big.example.com", "chain verified", "2000 ledger entries", "test runs 1000",
			"go test ./pkg0", "go test ./pkg999", "+33m18s"}},
	} {
		file := filepath.Join(dir, tt.session+".html")
		r := runBin(t, env, nil, "claimcheck", "ledger", "timeline", "--session", tt.session, "--html", file)
		if r.code != 0 {
			t.Fatalf("timeline %s: %+v", tt.session, r)
		}
		text, rows := rendered(t, exe, file)
		if rows != tt.rows {
			t.Errorf("%s: %d rows shown, want %d", tt.session, rows, tt.rows)
		}
		for _, w := range tt.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: the rendered page lacks %q", tt.session, w)
			}
		}
		if t.Failed() {
			t.Logf("%s rendered text (start):\n%s", tt.session, text[:min(len(text), 3000)])
		}
	}
}

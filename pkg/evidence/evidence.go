// Package evidence reads ledger entries as evidence: which tool ran, on what
// (command, file, URL), whether it failed, and what test runners and fetches
// reported. The verifier judges claims with it; the gatekeeper uses it to
// tell whether an attested pass is still fresh.
package evidence

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/claimcheck/claimcheck/pkg/command"
	"github.com/claimcheck/claimcheck/pkg/shell"
	"github.com/claimcheck/claimcheck/schemas"
)

// Entry is the evidence view of one ledger entry.
type Entry struct {
	N         uint64
	Hash      string
	EventID   string
	Kind      string
	HookEvent string
	Tool      string // tool_name
	Contract  *schemas.Contract
	// Cwd is the payload's cwd: the directory Claude Code ran the tool in
	// (or the prompt was sent from); "" when the payload has none.
	Cwd string

	// Tool events (PostToolUse, PostToolUseFailure) only.
	Done     bool   // a completed tool call: evidence
	Failed   bool   // PostToolUseFailure, or an interrupted call
	ExitCode int    // from "Exit code N" on failures; 0 on success
	Command  string // Bash
	FilePath string // Edit, Write, MultiEdit, NotebookEdit, Read
	URL      string // WebFetch
	Query    string // WebSearch
	Input    string // the whole tool_input as JSON text
	Output   string // stdout+stderr, the error text, or the tool response as text
	HTTPCode int    // WebFetch response code when reported
	// Before is the file's content before an Edit, MultiEdit or Write, when
	// the tool reported it (tool_response.originalFile). A Read's content,
	// when it read the whole file, is its Output.
	Before string
	Elided bool // the payload was shortened in the ledger (full text in an artifact)

	// The tool loop (PreToolUse and tool events): see Loop.
	ToolUseID   string
	InputDigest string // of the tool_input as received (entry.tool_input_digest)
	Origin      string // who published the event (entry.origin)
	// Untrusted, set by Loop.Observe for a tool event, says why it did not
	// come from the agent's tool loop (no PreToolUse of the same tool call,
	// another host); such an event never backs a claim.
	Untrusted string

	parsed *parsedCommand // Command parsed on first use, shared by copies
}

type parsedCommand struct {
	once  sync.Once
	calls []command.Call

	writesOnce sync.Once
	writes     []string
	unknown    bool

	summaryOnce sync.Once
	summary     Summary

	movesOnce sync.Once
	moves     bool

	traceOnce sync.Once
	trace     shell.Traced

	failedOnce sync.Once
	failed     []command.TestID

	observeMu sync.Mutex
	observed  map[string]command.Observation
}

// Calls returns Command parsed into simple commands (command.Parse), parsing
// it once per decoded entry: a verifier judges every claim of a session over
// the same cached entries, and parsing every earlier command again for each
// claim made a claim's cost grow with the session (15 ms per claim after
// 1,000 shell commands; validate BenchmarkEvaluateLongSession).
func (e Entry) Calls() []command.Call {
	if e.parsed == nil {
		return command.Parse(e.Command) // an Entry not made by Decode
	}
	e.parsed.once.Do(func() { e.parsed.calls = command.Parse(e.Command) })
	return e.parsed.calls
}

// Writes returns the files Command writes (command.Writes), computed once
// per decoded entry like Calls.
func (e Entry) Writes() (paths []string, unknown bool) {
	if e.parsed == nil {
		return command.Writes(e.Command)
	}
	e.parsed.writesOnce.Do(func() { e.parsed.writes, e.parsed.unknown = command.Writes(e.Command) })
	return e.parsed.writes, e.parsed.unknown
}

// MovesTree returns command.MovesTree of Calls, computed once per decoded
// entry like Calls: every claim reads every earlier line for moves.
func (e Entry) MovesTree() bool {
	if e.parsed == nil {
		return command.MovesTree(e.Calls())
	}
	e.parsed.movesOnce.Do(func() { e.parsed.moves = command.MovesTree(e.Calls()) })
	return e.parsed.moves
}

// Trace returns shell.Trace of Command in Cwd, computed once per decoded
// entry like Calls: every claim reads every earlier line for where it ran
// and what it did to the tree.
func (e Entry) Trace() shell.Traced {
	if e.parsed == nil {
		return shell.Trace(e.Command, e.Cwd)
	}
	e.parsed.traceOnce.Do(func() { e.parsed.trace = shell.Trace(e.Command, e.Cwd) })
	return e.parsed.trace
}

// FailedTests returns FailedTests of the entry's Output, computed once per
// decoded entry like Calls.
func (e Entry) FailedTests() []command.TestID {
	if e.parsed == nil {
		return FailedTests(e.Output)
	}
	e.parsed.failedOnce.Do(func() { e.parsed.failed = FailedTests(e.Output) })
	return e.parsed.failed
}

// Observe returns command.Observe of Command for want, computed once per
// decoded entry and want like Calls.
func (e Entry) Observe(want []string) command.Observation {
	if e.parsed == nil {
		return command.Observe(e.Command, want)
	}
	key := strings.Join(want, "\x00")
	e.parsed.observeMu.Lock()
	defer e.parsed.observeMu.Unlock()
	if o, ok := e.parsed.observed[key]; ok {
		return o
	}
	o := command.Observe(e.Command, want)
	if e.parsed.observed == nil {
		e.parsed.observed = map[string]command.Observation{}
	}
	e.parsed.observed[key] = o
	return o
}

// Summary returns Summarize of the entry's Output, computed once per decoded
// shell entry like Calls: a test_pass claim reads every earlier run of its
// command.
func (e Entry) Summary() Summary {
	if e.parsed == nil {
		return Summarize(e.Output)
	}
	e.parsed.summaryOnce.Do(func() { e.parsed.summary = Summarize(e.Output) })
	return e.parsed.summary
}

// Position returns the entry's ledger position.
func (e Entry) Position() schemas.Position {
	return schemas.Position{N: e.N, Hash: e.Hash, EventID: e.EventID}
}

var exitCodeRE = regexp.MustCompile(`^Exit code (\d+)`)

// Decode builds the evidence view of a stored entry.
func Decode(s schemas.Entry) Entry {
	e := Entry{N: s.N, Hash: s.Hash, EventID: s.EventID, Kind: s.Kind, HookEvent: s.HookEvent, Tool: s.ToolName,
		Contract: s.Contract, Elided: s.PayloadElided,
		ToolUseID: s.ToolUseID, InputDigest: s.ToolInput, Origin: s.Origin}
	if s.Kind != schemas.EntryEvent || s.Payload == nil {
		return e
	}
	if s.HookEvent == schemas.HookPreToolUse {
		var p struct {
			Cwd       string         `json:"cwd"`
			ToolInput jsontext.Value `json:"tool_input"`
		}
		if json.Unmarshal([]byte(*s.Payload), &p, json.RejectUnknownMembers(false)) == nil {
			e.Cwd = p.Cwd
			if e.InputDigest == "" { // recorded before ingest kept the digest
				e.Input = string(p.ToolInput)
			}
		}
		return e
	}
	if s.HookEvent != schemas.HookPostToolUse && s.HookEvent != schemas.HookPostToolUseFailure {
		var p struct {
			Cwd string `json:"cwd"`
		}
		if json.Unmarshal([]byte(*s.Payload), &p, json.RejectUnknownMembers(false)) == nil {
			e.Cwd = p.Cwd
		}
		return e
	}
	var p struct {
		Cwd          string         `json:"cwd"`
		ToolInput    jsontext.Value `json:"tool_input"`
		ToolResponse jsontext.Value `json:"tool_response"`
		Error        string         `json:"error"`
		IsInterrupt  bool           `json:"is_interrupt"`
	}
	if json.Unmarshal([]byte(*s.Payload), &p, json.RejectUnknownMembers(false)) != nil {
		return e
	}
	e.Done = true
	e.Cwd = p.Cwd
	e.Failed = s.HookEvent == schemas.HookPostToolUseFailure || p.IsInterrupt
	e.Input = string(p.ToolInput)
	var in struct {
		Command      string `json:"command"`
		FilePath     string `json:"file_path"`
		NotebookPath string `json:"notebook_path"`
		URL          string `json:"url"`
		Query        string `json:"query"`
	}
	_ = json.Unmarshal(p.ToolInput, &in, json.RejectUnknownMembers(false))
	e.Command, e.FilePath, e.URL, e.Query = in.Command, in.FilePath, in.URL, in.Query
	if e.Command != "" {
		e.parsed = &parsedCommand{}
	}
	if e.FilePath == "" {
		e.FilePath = in.NotebookPath
	}
	if e.Failed {
		e.Output = p.Error
		if m := exitCodeRE.FindStringSubmatch(p.Error); m != nil {
			e.ExitCode, _ = strconv.Atoi(m[1])
		} else {
			e.ExitCode = 1
		}
		return e
	}
	var out struct {
		Stdout      string         `json:"stdout"`
		Stderr      string         `json:"stderr"`
		Interrupted bool           `json:"interrupted"`
		Code        int            `json:"code"`
		Result      string         `json:"result"`
		Original    jsontext.Value `json:"originalFile"`
		File        jsontext.Value `json:"file"`
	}
	if json.Unmarshal(p.ToolResponse, &out, json.RejectUnknownMembers(false)) == nil {
		_ = json.Unmarshal(out.Original, &e.Before)
		if content, ok := readContent(e.Tool, out.File); ok {
			e.Output = content
			return e
		}
		e.Output = out.Stdout
		if out.Stderr != "" {
			e.Output += "\n" + out.Stderr
		}
		if out.Result != "" {
			e.Output += "\n" + out.Result
		}
		e.HTTPCode = out.Code
		if out.Interrupted {
			e.Failed, e.ExitCode = true, 130
		}
	} else {
		var text string
		if json.Unmarshal(p.ToolResponse, &text) == nil {
			e.Output = text
		} else {
			e.Output = string(p.ToolResponse)
		}
	}
	return e
}

// readContent is the content of a Read of a whole text file.
func readContent(tool string, file jsontext.Value) (string, bool) {
	if tool != "Read" || len(file) == 0 {
		return "", false
	}
	var f struct {
		Content    string `json:"content"`
		NumLines   int    `json:"numLines"`
		StartLine  int    `json:"startLine"`
		TotalLines int    `json:"totalLines"`
	}
	if json.Unmarshal(file, &f, json.RejectUnknownMembers(false)) != nil || f.StartLine > 1 || f.NumLines < f.TotalLines {
		return "", false
	}
	return f.Content, true
}

// IsEdit reports a file-changing tool.
func IsEdit(tool string) bool {
	switch tool {
	case "Edit", "Write", "MultiEdit", "NotebookEdit":
		return true
	}
	return false
}

// EditOf says whether e changed one of paths, and names what it changed:
// a successful Edit/Write of one of them (of any file when paths is empty),
// or a shell command that writes one of them (command.Writes: sed -i,
// > file, cp, git checkout -- file, …) or changes files it does not name
// (git apply, patch, git reset --hard) while paths names some. A shell
// write counts only against named paths: a contract without paths would
// otherwise make every log file a shell writes an edit.
func EditOf(e Entry, paths []string) (string, bool) {
	if !e.Done {
		return "", false
	}
	if IsEdit(e.Tool) {
		if e.Failed || e.FilePath == "" {
			return "", false
		}
		if len(paths) == 0 || slices.ContainsFunc(paths, func(p string) bool { return SamePath(e.FilePath, p) }) {
			return e.FilePath, true
		}
		return "", false
	}
	if e.Tool != "Bash" || e.Command == "" || len(paths) == 0 {
		return "", false
	}
	written, unknown := e.Writes()
	return ShellEditOf(e.Command, written, unknown, paths)
}

// ShellEditOf is EditOf for a shell command whose writes are known
// (Entry.Writes): the first of paths it writes, or any when it changes
// files it does not name.
func ShellEditOf(cmd string, written []string, unknown bool, paths []string) (string, bool) {
	for _, p := range paths {
		if unknown || slices.ContainsFunc(written, func(w string) bool { return SamePath(w, p) }) {
			return p + " (by `" + clipCommand(cmd) + "`)", true
		}
	}
	return "", false
}

func clipCommand(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}

// ---- test summaries ------------------------------------------------------------

// Summary is what a test runner's output says.
type Summary struct {
	Recognized bool
	Passed     int
	Failed     int
}

var (
	pytestRE     = regexp.MustCompile(`(?m)(\d+) (passed|failed|errors?)\b`)
	pytestLineRE = regexp.MustCompile(
		`(?m)^=*\s*(?:\d+ (?:passed|failed|errors?|skipped|deselected|xfailed|xpassed|warnings?)(?:, )?)+ in [\d.]+s`)
	// go test writes "ok  \t<pkg>\t<time>" and "FAIL\t<pkg>\t<time>" (tabs), which
	// keeps jest's "PASS src/x.test.ts" / "FAIL src/x.test.ts" apart.
	goOkRE        = regexp.MustCompile(`(?m)^ok[ ]*\t\S+\t(?:\(cached\)|[\d.]+s)(.*)$`)
	goFailRE      = regexp.MustCompile(`(?m)^(?:FAIL\t\S+|--- FAIL: |FAIL$|panic: )`)
	goPassRE      = regexp.MustCompile(`(?m)^(?:--- PASS: |PASS$)`)
	cargoRE       = regexp.MustCompile(`(?m)^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed`)
	jestRE        = regexp.MustCompile(`(?m)^Tests:\s+(.*\d+ total)`)
	vitestRE      = regexp.MustCompile(`(?m)^\s*Tests\s+(.*)\(\d+\)`)
	countRE       = regexp.MustCompile(`(\d+) (passed|failed)`)
	mochaRE       = regexp.MustCompile(`(?m)^\s*(\d+) (passing|failing)\b`)
	surefireRE    = regexp.MustCompile(`(?m)Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+)\s*$`)
	mavenResultRE = regexp.MustCompile(`(?m)BUILD (SUCCESS|FAILURE)`)
)

// Summarize reads a test run's output. It recognises pytest, go test, cargo
// test, jest, vitest, mocha (npm test runs one of these) and Maven surefire.
func Summarize(output string) Summary { return summarize(output, true) }

// has reports whether s contains any of lits: a runner's expression runs
// only on outputs holding a literal every match of it contains, since each
// unanchored scan costs microseconds even on outputs of a few lines, and a
// verifier reads every run of the claimed command for each claim.
func has(s string, lits ...string) bool {
	for _, l := range lits {
		if strings.Contains(s, l) {
			return true
		}
	}
	return false
}

// summarize is Summarize; prefilter false runs every expression (the
// tests' reference for the prefilters).
func summarize(output string, prefilter bool) Summary {
	var s Summary
	add := func(p, f int) { s.Recognized, s.Passed, s.Failed = true, s.Passed+p, s.Failed+f }
	may := func(lits ...string) bool { return !prefilter || has(output, lits...) }
	findAll := func(re *regexp.Regexp, lits ...string) []string {
		if !may(lits...) {
			return nil
		}
		return re.FindAllString(output, -1)
	}
	findAllSub := func(re *regexp.Regexp, lits ...string) [][]string {
		if !may(lits...) {
			return nil
		}
		return re.FindAllStringSubmatch(output, -1)
	}
	if lines := findAll(pytestLineRE, " in "); len(lines) > 0 {
		last := lines[len(lines)-1]
		p, f := 0, 0
		for _, m := range pytestRE.FindAllStringSubmatch(last, -1) {
			n, _ := strconv.Atoi(m[1])
			if m[2] == "passed" {
				p += n
			} else {
				f += n
			}
		}
		add(p, f)
	}
	if oks, fails := findAllSub(goOkRE, "ok"), findAll(goFailRE, "FAIL", "panic: "); len(oks) > 0 || len(fails) > 0 {
		// A package that ran no test (go test -run with a name that matches
		// none) reports ok "[no tests to run]", and its PASS line follows a
		// warning: neither is a passed test.
		passed := 0
		for _, m := range oks {
			if !strings.Contains(m[1], "[no tests to run]") {
				passed++
			}
		}
		passed += max(0, len(findAll(goPassRE, "PASS"))-strings.Count(output, "testing: warning: no tests to run"))
		add(passed, len(fails))
	}
	for _, m := range findAllSub(cargoRE, "test result: ") {
		p, _ := strconv.Atoi(m[1])
		f, _ := strconv.Atoi(m[2])
		add(p, f)
	}
	for _, r := range []struct {
		re  *regexp.Regexp
		lit string
	}{{jestRE, "Tests:"}, {vitestRE, "Tests"}} {
		if ms := findAllSub(r.re, r.lit); len(ms) > 0 {
			p, f := 0, 0
			for _, c := range countRE.FindAllStringSubmatch(ms[len(ms)-1][1], -1) {
				n, _ := strconv.Atoi(c[1])
				if c[2] == "passed" {
					p += n
				} else {
					f += n
				}
			}
			add(p, f)
		}
	}
	for _, m := range findAllSub(mochaRE, "passing", "failing") {
		n, _ := strconv.Atoi(m[1])
		if m[2] == "passing" {
			add(n, 0)
		} else {
			add(0, n)
		}
	}
	if ms := findAllSub(surefireRE, "Tests run: "); len(ms) > 0 {
		m := ms[len(ms)-1]
		run, _ := strconv.Atoi(m[1])
		fail, _ := strconv.Atoi(m[2])
		errs, _ := strconv.Atoi(m[3])
		skip, _ := strconv.Atoi(m[4])
		add(run-fail-errs-skip, fail+errs)
		if r := mavenResultRE.FindAllStringSubmatch(output, -1); len(r) > 0 && r[len(r)-1][1] == "FAILURE" && s.Failed == 0 {
			s.Failed = 1
		}
	}
	return s
}

// ---- fetches ----------------------------------------------------------------

var (
	httpStatusRE = regexp.MustCompile(`(?m)(?:^|\s|<\s)HTTP/[\d.]+ (\d{3})\b`)
	bareCodeRE   = regexp.MustCompile(`(?m)^\s*(\d{3})\s*$`)
)

// fetchPrograms are shell programs that fetch URLs.
var fetchPrograms = map[string]bool{"curl": true, "wget": true, "http": true, "https": true, "httpie": true, "xh": true, "lynx": true,
	"w3m": true, "aria2c": true}

// setup programs come before the one a line is about.
var setup = map[string]bool{"cd": true, "pushd": true, "export": true, "set": true, "sleep": true, "true": true, ":": true}

// FetchTool names the fetching tool an entry used ("" when it is not a fetch).
func FetchTool(e Entry) string {
	switch {
	case e.Tool == "WebFetch" || e.Tool == "WebSearch":
		return e.Tool
	case e.Tool == "Bash":
		// The first program that does something (`cd /tmp && curl …`).
		for _, c := range e.Calls() {
			p, _ := c.Program()
			if p == "" {
				continue
			}
			if fetchPrograms[p] {
				return "Bash:" + p
			}
			if !setup[p] {
				break
			}
		}
	case strings.HasPrefix(e.Tool, "mcp__"):
		lower := strings.ToLower(e.Tool)
		for _, w := range []string{"fetch", "browse", "browser", "http", "web", "url", "request", "scrape", "crawl", "navigate"} {
			if strings.Contains(lower, w) {
				return e.Tool
			}
		}
	}
	return ""
}

// HTTPStatus returns the HTTP status a fetch reported, or 0.
func HTTPStatus(e Entry) int {
	if e.HTTPCode != 0 {
		return e.HTTPCode
	}
	if ms := httpStatusRE.FindAllStringSubmatch(e.Output, -1); len(ms) > 0 {
		n, _ := strconv.Atoi(ms[len(ms)-1][1])
		return n
	}
	if ms := bareCodeRE.FindAllStringSubmatch(e.Output, -1); len(ms) > 0 {
		n, _ := strconv.Atoi(ms[len(ms)-1][1])
		return n
	}
	return 0
}

// SamePath reports whether two paths name the same file: equal, or one is a
// suffix of the other at a path boundary (relative paths in a contract match
// the absolute paths Claude Code reports).
func SamePath(a, b string) bool {
	a, b = strings.TrimPrefix(a, "./"), strings.TrimPrefix(b, "./")
	if a == "" || b == "" {
		return false
	}
	return a == b || strings.HasSuffix(a, "/"+b) || strings.HasSuffix(b, "/"+a)
}

package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/clientcontract"
	"github.com/claimcheck/claimcheck/pkg/identity"
	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/schemas"
)

// workloadAgents agents run sessions at once, each as Claude Code would:
// prompts, tool calls (a PreToolUse, gated, then the PostToolUse with the
// same tool_use_id and tool_input), test runs and claims, Stops (gated),
// now and then a command the gate must deny.
const workloadAgents = 3

// hookCall is one run of claimcheck-hook and how it ended.
type hookCall struct {
	session   string
	idx       int // position among the session's hook calls
	event     string
	marker    string // unique text in the payload (prompts, stops)
	toolUseID string
	gated     bool
	code      int
	answer    string // gated calls that exited 0: allow, block, deny or ask
	stdout    string
	stderr    string
	at, took  time.Duration
}

func (c *hookCall) String() string {
	s := fmt.Sprintf("t+%.1fs %s #%d %s exit %d", c.at.Seconds(), c.session, c.idx, c.event, c.code)
	if c.answer != "" {
		s += " " + c.answer
	}
	if c.code != 0 || c.answer == "block" || c.answer == "deny" {
		s += ": " + clip(strings.TrimSpace(c.stderr+" "+c.stdout), 240)
	}
	return s
}

// claimRun is one `claimcheck claim` and its verdict.
type claimRun struct {
	session string
	code    int
	v       verdict
	at      time.Duration
}

type workload struct {
	tt       *torture
	seed     uint64
	contract clientcontract.Contract

	mu       sync.Mutex
	calls    map[string][]*hookCall
	sessions []string
	claims   []claimRun
	rotates  int
	keyErrs  int
}

func newWorkload(tt *torture, seed uint64) *workload {
	pc, err := clientcontract.Load()
	if err != nil {
		panic(err) // the contract snapshots are part of the repository
	}
	return &workload{tt: tt, seed: seed, contract: pc, calls: map[string][]*hookCall{}}
}

// session is one agent session's state.
type session struct {
	w        *workload
	id       string
	promptID string
	prompts  int
	calls    int
	lastPass string // the newest PASS attestation, "" after an edit
}

func (w *workload) newSession(id string) *session {
	w.mu.Lock()
	w.sessions = append(w.sessions, id)
	w.mu.Unlock()
	return &session{w: w, id: id, promptID: id + "-prompt-0"}
}

// payload is a hook payload in Claude Code's shape (as agent.payload).
func (s *session) payload(event, fields string) []byte {
	common := fmt.Sprintf(`"session_id":%q,"transcript_path":"/home/user/.claude/projects/-repo/%s.jsonl","cwd":"/repo",`, s.id, s.id)
	common += fmt.Sprintf(`"permission_mode":"default","prompt_id":%q,`, s.promptID)
	p := []byte(fmt.Sprintf(`{%s"hook_event_name":%q,%s}`, common, event, fields))
	if err := s.w.contract.Check(p, true); err != nil {
		s.w.tt.rec.violation("the torture test built a %s payload Claude Code would not send: %v", event, err)
	}
	return p
}

// hook runs claimcheck-hook with one payload and records the call.
func (s *session) hook(event, fields, marker, toolUseID string) *hookCall {
	c := &hookCall{session: s.id, idx: s.calls, event: event, marker: marker, toolUseID: toolUseID,
		gated: event == schemas.HookStop || event == schemas.HookPreToolUse, at: time.Since(s.w.tt.start)}
	s.calls++
	start := time.Now()
	r := s.w.tt.runCmd(s.w.tt.hookEnv, s.payload(event, fields), 60*time.Second, "claimcheck-hook")
	c.took, c.code, c.stdout, c.stderr = time.Since(start), r.code, r.stdout, r.stderr
	if c.gated && c.code == 0 {
		c.answer = gateAnswer(r.stdout)
	}
	s.w.mu.Lock()
	s.w.calls[s.id] = append(s.w.calls[s.id], c)
	s.w.mu.Unlock()
	return c
}

// gateAnswer reads a gated hook's stdout as Claude Code does.
func gateAnswer(stdout string) string {
	switch {
	case strings.Contains(stdout, `"decision":"block"`):
		return schemas.GateBlock
	case strings.Contains(stdout, `"permissionDecision":"deny"`):
		return schemas.GateDeny
	case strings.Contains(stdout, `"permissionDecision":"ask"`):
		return schemas.GateAsk
	}
	return schemas.GateAllow
}

func (s *session) prompt(text string) {
	s.prompts++
	s.promptID = fmt.Sprintf("%s-prompt-%d", s.id, s.prompts)
	m := fmt.Sprintf("#m%d#", s.calls)
	s.hook(schemas.HookUserPromptSubmit, fmt.Sprintf(`"prompt":%q`, text+" "+m), m, "")
}

// tool makes one tool call: the gated PreToolUse, then (unless the gate
// refused it) the PostToolUse with the same tool_use_id and tool_input.
func (s *session) tool(name, input, response string) *hookCall {
	useID := fmt.Sprintf("toolu_%s_%d", s.id, s.calls)
	pre := s.hook(schemas.HookPreToolUse, fmt.Sprintf(`"tool_name":%q,"tool_input":%s,"tool_use_id":%q`, name, input, useID), "", useID)
	if pre.answer != schemas.GateAllow {
		return pre
	}
	s.hook(schemas.HookPostToolUse, fmt.Sprintf(`"tool_name":%q,"tool_input":%s,"tool_response":%s,"tool_use_id":%q`, name, input, response,
		useID), "", useID)
	return pre
}

func (s *session) bash(cmd, stdout string) *hookCall {
	return s.tool("Bash", fmt.Sprintf(`{"command":%q,"description":"run"}`, cmd),
		fmt.Sprintf(`{"stdout":%q,"stderr":"","interrupted":false,"isImage":false}`, stdout))
}

func (s *session) edit(path string) {
	s.tool("Edit", fmt.Sprintf(`{"file_path":%q,"old_string":"a","new_string":"b","replace_all":false}`, path),
		fmt.Sprintf(`{"filePath":%q,"oldString":"a","newString":"b","structuredPatch":[],"userModified":false}`, path))
	s.lastPass = ""
}

func (s *session) stop(message string) *hookCall {
	m := fmt.Sprintf("#m%d#", s.calls)
	return s.hook(schemas.HookStop, fmt.Sprintf(`"stop_hook_active":false,"last_assistant_message":%q,"background_tasks":[],"session_crons":[]`,
		message+"\n"+m), m, "")
}

func (s *session) claim() claimRun {
	env := append([]string{"CLAUDE_CODE_SESSION_ID=" + s.id}, s.w.tt.hookEnv...)
	r := s.w.tt.runCmd(env, nil, 60*time.Second, "claimcheck", "claim", "--claim", "done", "--validator", "test_pass",
		"--args", `{"command_substring":"pytest"}`, "--json", "--timeout", "15s")
	c := claimRun{session: s.id, code: r.code, at: time.Since(s.w.tt.start)}
	if strings.HasPrefix(strings.TrimSpace(r.stdout), "{") {
		_ = json.Unmarshal([]byte(r.stdout), &c.v, json.RejectUnknownMembers(false))
	}
	if c.v.Verdict == schemas.Pass && c.v.AttestationID != "" {
		s.lastPass = c.v.AttestationID
	}
	s.w.mu.Lock()
	s.w.claims = append(s.w.claims, c)
	s.w.mu.Unlock()
	return c
}

const (
	torturePrompt = "Fix the failing test in `src/app.py` and run `pytest` to check it"
	pytestPass    = "============================= 3 passed in 0.12s ==============================\n"
)

// agent runs sessions until stop is closed; its choices come from the
// seed and its number.
func (w *workload) agent(n int, stop <-chan struct{}) {
	rng := rand.New(rand.NewPCG(w.seed, uint64(n)+1))
	for i := 0; ; i++ {
		s := w.newSession(fmt.Sprintf("tt-a%d-s%d", n, i))
		s.prompt(torturePrompt)
		for range 6 + rng.IntN(10) {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(100+rng.IntN(300)) * time.Millisecond): // the model thinking
			}
			w.step(s, rng)
		}
		if s.lastPass != "" {
			s.stop("Fixed it; all tests pass.\n\n" + finalBlock("done", s.lastPass))
		} else {
			s.stop("I could not finish; the tests were not run since the last change.")
		}
	}
}

func (w *workload) step(s *session, rng *rand.Rand) {
	switch r := rng.IntN(20); {
	case r < 7:
		s.bash(fmt.Sprintf("cat src/file%d.py", rng.IntN(100)), "print('hello')\n")
	case r < 9:
		s.edit("/repo/src/app.py")
	case r < 13:
		if pre := s.bash("pytest", pytestPass); pre.answer == schemas.GateAllow {
			s.claim()
		}
	case r < 16:
		msg := "Done, all tests pass."
		if s.lastPass != "" && rng.IntN(3) > 0 {
			msg = "Fixed the failing test in src/app.py; all tests pass.\n\n" + finalBlock("done", s.lastPass)
		}
		s.stop(msg)
	case r < 18:
		s.prompt(torturePrompt)
	default:
		s.bash("rm -rf /", "")
	}
}

// keys keeps the hook's trusted key set current and asks the rotator for
// a rotation now and then, until stop is closed.
func (w *workload) keys(stop <-chan struct{}) {
	rng := rand.New(rand.NewPCG(w.seed, 0x6b657973))
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-time.After(time.Second):
		}
		if err := w.tt.refreshKeys(); err != nil {
			w.mu.Lock()
			w.keyErrs++
			w.mu.Unlock()
		}
		if rng.IntN(16) == 0 {
			r := w.tt.runCmd(w.tt.as(identity.RoleOperator), nil, 10*time.Second, "claimcheck", "keys", "rotate", "--overlap", "30s")
			if r.code == 0 {
				w.mu.Lock()
				w.rotates++
				w.mu.Unlock()
			} else {
				w.tt.rec.note("keys rotate: exit %d %s", r.code, clip(strings.TrimSpace(r.stderr), 300))
			}
		}
	}
}

// final runs once everything has recovered: the spool is delivered, and
// one more session per agent must get a PASS and have its stop citing it
// let through.
func (w *workload) final(t *testing.T) {
	t.Helper()
	natstest.Eventually(t, 120*time.Second, func() error {
		r := w.tt.runCmd(w.tt.hookEnv, nil, 60*time.Second, "claimcheck-hook", "flush")
		if r.code != 0 {
			return fmt.Errorf("spooled events remain: %s %s", r.stdout, r.stderr)
		}
		return nil
	})
	for n := range workloadAgents {
		s := w.newSession(fmt.Sprintf("tt-a%d-final", n))
		var err error
		for deadline := time.Now().Add(90 * time.Second); ; {
			if err = w.finalSession(s); err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Second)
		}
		if err != nil {
			w.tt.rec.violation("after recovery: %v", err)
		}
	}
}

// finalSession tries the gate's whole story once.
func (w *workload) finalSession(s *session) error {
	if err := w.tt.refreshKeys(); err != nil {
		return err
	}
	s.prompt(torturePrompt)
	s.edit("/repo/src/app.py")
	if pre := s.bash("pytest", pytestPass); pre.answer != schemas.GateAllow {
		return fmt.Errorf("a harmless PreToolUse was not allowed: %s", pre)
	}
	if c := s.claim(); c.v.Verdict != schemas.Pass {
		return fmt.Errorf("the claim got exit %d %+v", c.code, c.v)
	}
	if c := s.stop("Fixed the failing test in src/app.py; all tests pass.\n\n" + finalBlock("done", s.lastPass)); c.answer != schemas.GateAllow {
		return fmt.Errorf("a stop citing a fresh PASS was not let through: %s", c)
	}
	return nil
}

func (w *workload) summary() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	calls, ok, gated, allowed, closed := 0, 0, 0, 0, 0
	for _, cs := range w.calls {
		for _, c := range cs {
			calls++
			if c.code == 0 {
				ok++
			}
			if c.gated {
				gated++
				if c.answer == schemas.GateAllow {
					allowed++
				}
				if strings.Contains(c.stderr, schemas.RuleHookFailClosed) {
					closed++
				}
			}
		}
	}
	pass := 0
	for _, c := range w.claims {
		if c.v.Verdict == schemas.Pass {
			pass++
		}
	}
	return fmt.Sprintf("%d sessions, %d hook runs (%d exit 0; %d gated: %d allowed, %d failed closed), %d claims (%d PASS), "+
		"%d requested key rotations", len(w.sessions), calls, ok, gated, allowed, closed, len(w.claims), pass, w.rotates)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// dump writes every hook run, session by session, to a file (kept with the
// logs).
func (w *workload) dump(path string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var b strings.Builder
	for _, sess := range w.sessions {
		for _, c := range w.calls[sess] {
			fmt.Fprintf(&b, "%s | %s\n", c, clip(strings.ReplaceAll(strings.TrimSpace(c.stderr), "\n", " "), 400))
		}
	}
	_ = os.WriteFile(path, []byte(b.String()), 0o600)
}

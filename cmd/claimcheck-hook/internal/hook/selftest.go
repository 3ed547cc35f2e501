package hook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/claimcheck/claimcheck/pkg/decision"
	"github.com/claimcheck/claimcheck/pkg/oneshot"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
)

// selfTestDeadline bounds the SessionStart self-test.
const selfTestDeadline = 2 * time.Second

// selfTest runs at SessionStart: it checks this binary, its state dir, the
// connection to NATS, the trusted key set and that a gatekeeper answers,
// and reports problems to the user (systemMessage) and the agent
// (additionalContext). A healthy setup prints nothing.
func (h *hook) selfTest(ctx context.Context, stdout io.Writer, received time.Time) int {
	ctx, cancel := context.WithDeadline(ctx, received.Add(selfTestDeadline))
	defer cancel()
	problems := h.checks(ctx)
	if len(problems) == 0 {
		return ExitOK
	}
	for _, p := range problems {
		fmt.Fprintf(h.stderr, "claimcheck-hook: self-test: %s\n", p)
	}
	msg := fmt.Sprintf("claimcheck self-test found %d problem(s): %s", len(problems), strings.Join(problems, "; "))
	agent := msg
	if h.cfg.Gate {
		agent += ". Until they are fixed claimcheck blocks stops and denies tool calls it cannot check (fail closed); tell the human now."
	}
	return h.answer(stdout,
		schemas.GateDecision{HookEvent: schemas.HookSessionStart, Decision: schemas.GateAllow, SystemMessage: msg,
			AdditionalContext: agent})
}

func (h *hook) checks(ctx context.Context) []string {
	var problems []string
	if exe, err := os.Executable(); err != nil {
		problems = append(problems, "cannot locate the claimcheck-hook binary: "+err.Error())
	} else if st, err := os.Stat(exe); err != nil || st.Mode()&0o111 == 0 {
		problems = append(problems, fmt.Sprintf("the claimcheck-hook binary %s is not executable", exe))
	}
	if f, err := os.CreateTemp(h.cfg.StateDir, ".selftest-*"); err != nil {
		problems = append(problems, fmt.Sprintf("the state dir %s is not writable (events cannot be spooled): %v", h.cfg.StateDir, err))
	} else {
		_ = f.Close()
		_ = os.Remove(f.Name())
	}
	if n := spoolSize(h.sp); n > 0 {
		problems = append(problems,
			fmt.Sprintf("%d events wait in the spool %s (run `claimcheck-hook flush` once NATS is back)", n, h.sp.dir))
	}
	if !h.delivered {
		problems = append(problems, fmt.Sprintf("NATS at %s is unreachable; events are being spooled", h.cfg.NATSURL))
	}
	if !h.cfg.Gate {
		return problems
	}
	if keys, err := decision.LoadKeys(h.cfg.GateKeys); err != nil {
		problems = append(problems, fmt.Sprintf("no trusted gate key set: %v (run `claimcheck hooks install`)", err))
	} else if keys.ValidAt(time.Now()) == 0 {
		problems = append(problems,
			fmt.Sprintf("no key in %s is valid now (run `claimcheck hooks install` after `claimcheck keys rotate`)", h.cfg.GateKeys))
	}
	if h.delivered {
		problems = append(problems, h.pingGatekeeper(ctx)...)
	}
	return problems
}

func (h *hook) pingGatekeeper(ctx context.Context) []string {
	c := h.conn
	if c == nil {
		var err error
		if c, err = h.dial(ctx); err != nil {
			return []string{"NATS: " + err.Error()}
		}
		h.conn = c
	}
	_, err := c.Request(ctx, subject.Gate(h.cfg.hostTok, subject.GatePing), nil, nil)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, oneshot.ErrNoResponders):
		return []string{"no gatekeeper is running (start `claimcheck up`, or the gatekeeper service)"}
	default:
		return []string{"the gatekeeper did not answer: " + err.Error()}
	}
}

func spoolSize(s spool) int {
	entries, _ := s.list()
	return len(entries)
}

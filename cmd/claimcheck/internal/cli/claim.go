package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
	"github.com/spf13/cobra"

	"github.com/claimcheck/claimcheck/pkg/clock"
	"github.com/claimcheck/claimcheck/pkg/envelope"
	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/identity"
	"github.com/claimcheck/claimcheck/pkg/intake"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
)

// Exit codes of `claimcheck claim` (the seed's 0 / 2 / 3, plus two for
// problems that are not verdicts).
const (
	ClaimPass      = 0
	ClaimBadInput  = 1 // malformed arguments, unknown session, request rejected
	ClaimFail      = 2
	ClaimRefused   = 3
	ClaimTransport = 4 // NATS unreachable, or no verdict in time
)

// maxClaimArgs matches ingest's limit on a claim's canonical arguments.
const maxClaimArgs = 8 << 10

// claimSession is the session a claim is for: --session, else the agent's
// own variable. Claude Code sets CLAUDE_CODE_SESSION_ID; Codex gives the
// commands it runs its thread id, the session_id of its hook payloads, as
// CODEX_THREAD_ID (seen with codex 0.169.0).
func (a *app) claimSession(flag string) string {
	for _, v := range []string{"CLAUDE_CODE_SESSION_ID", "CODEX_THREAD_ID"} {
		if flag != "" {
			break
		}
		flag = a.env.Getenv(v)
	}
	return flag
}

// claimLong is claim --help's text.
const claimLong = `claim asks the verifiers whether this session's ledger backs a claim. The
request is recorded in the session's chain after everything the agent did
before it; a verifier checks the validator's arguments against the session's
contract and scans the ledger, records the verdict, and for a PASS signs an
attestation.

Claim types and validators (default policy):
  done, partial  command_zero_exit {"command_substring"}
                 test_pass {"command_substring", "min_runs" (default 1),
                   "declared_test_changes" (why a test was skipped, removed or
                   loosened; the final message must then say so too)}
                 file_diff_present {"path"}
                 http_2xx {"url"}
  delegation     fetch_attempt_proof {"keyword"}
  blocked        ladder_exhaustion_proof {}
Arguments must name something from the prompt: a command, path or URL that
appears in it.

Exit status: 0 PASS, 2 FAIL (no matching evidence: do the next step it
prints), 3 REFUSED (wrong validator or arguments not bound to the prompt),
1 bad input (malformed --args, unknown session), 4 NATS unreachable, no
verdict within --timeout, or events of the session still in this host's
hook spool (the claim delivers the spool first: claimcheck-hook flush).`

func (a *app) claimCommand() *cobra.Command {
	var (
		claimType, validator, args, session string
		asJSON                              bool
		timeout                             time.Duration
	)
	cmd := &cobra.Command{
		Use:   "claim --claim TYPE --validator NAME --args JSON",
		Short: "Back a claim with evidence from this session's ledger (what the agent runs)",
		Long:  claimLong,
		Example: `  claimcheck claim --claim done --validator test_pass --args '{"command_substring":"go test ./..."}'
  claimcheck claim --claim done --validator file_diff_present --args '{"path":"src/app.ts"}' --json`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return &exitError{ClaimBadInput,
					fmt.Errorf("unexpected argument %q (pass the arguments of the validator with --args)", args[0])}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			bad := func(format string, v ...any) error {
				return &exitError{ClaimBadInput, fmt.Errorf(format, v...)}
			}
			if session = a.claimSession(session); session == "" {
				if a.env.Getenv("GEMINI_CLI") == "1" {
					// Seen with gemini-cli 0.61.0: its hooks get GEMINI_SESSION_ID,
					// the commands it runs only GEMINI_CLI=1.
					return bad("no session: Gemini CLI gives the commands it runs no session id; pass --session " +
						"(the id `gemini --session-id` was given, or the session_id of its stream-json init line)")
				}
				return bad("no session: pass --session, or run inside Claude Code or Codex " +
					"(which set CLAUDE_CODE_SESSION_ID, CODEX_THREAD_ID)")
			}
			if err := id.CheckSession(session); err != nil {
				return bad("--session: %v", err)
			}
			switch {
			case claimType == "":
				return bad("--claim is required (done, partial, blocked or delegation)")
			case validator == "":
				return bad("--validator is required (see claimcheck claim --help)")
			case len(claimType) > 64 || len(validator) > 64:
				return bad("--claim and --validator are at most 64 bytes")
			}
			canonArgs, err := claimArgs(args)
			if err != nil {
				return &exitError{ClaimBadInput, err}
			}
			src, hostTok, canRead, err := a.claimSource()
			if err != nil {
				return &exitError{ClaimBadInput, err}
			}
			nc, js, err := a.connectAs(cmd.Context(), identity.RoleHook)
			if err != nil {
				return &exitError{ClaimTransport, errors.Unwrap(err)}
			}
			defer nc.Close()
			if err := a.deliverSpooled(cmd.Context(), session); err != nil {
				return err
			}
			// A hook identity (what the agent holds) may not read the
			// ledger; the verifier then says whether the session is known.
			if canRead {
				if _, err := ledger.NewReader(js, stream.Ledger).Last(cmd.Context(), session); errors.Is(err, ledger.ErrEmpty) {
					return bad(
						"unknown session %s: nothing of it is in the ledger (is claimcheck-hook installed? see `claimcheck hooks install` and `claimcheck ledger sessions`)", session)
				} else if err != nil {
					return &exitError{ClaimTransport, fmt.Errorf("read the ledger: %w", err)}
				}
			}
			v, err := a.requestVerdict(cmd, nc, js,
				claimRequest{src: src, hostTok: hostTok, session: session, claim: claimType, validator: validator,
					args: canonArgs}, timeout)
			if err != nil {
				return err
			}
			if asJSON {
				b, err := json.Marshal(v)
				if err != nil {
					return err
				}
				fmt.Fprintln(a.env.Stdout, string(b))
			} else {
				printVerdict(a.env.Stdout, v)
			}
			switch v.Verdict {
			case schemas.Pass:
				return nil
			case schemas.Fail:
				return &exitError{code: ClaimFail}
			default:
				return &exitError{code: ClaimRefused}
			}
		},
	}
	f := cmd.Flags()
	f.StringVar(&claimType, "claim", "", "claim type: done, partial, blocked or delegation")
	f.StringVar(&validator, "validator", "", "validator backing the claim")
	f.StringVar(&args, "args", "{}", "validator arguments, a JSON object")
	f.StringVar(&session, "session", "", "session id (default $CLAUDE_CODE_SESSION_ID, else $CODEX_THREAD_ID)")
	f.BoolVar(&asJSON, "json", false, "print the verdict as one JSON object")
	f.DurationVar(&timeout, "timeout", 30*time.Second, "how long to wait for the verdict")
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &exitError{ClaimBadInput, fmt.Errorf("%w (see claimcheck claim --help)", err)}
	})
	return cmd
}

// claimArgs checks --args: one JSON object of at most maxClaimArgs bytes in
// canonical form, reported with where it went wrong.
func claimArgs(s string) (jsontext.Value, error) {
	v := jsontext.Value(strings.TrimSpace(s))
	if len(v) == 0 {
		v = jsontext.Value("{}")
	}
	if len(v) > 4*maxClaimArgs {
		return nil, fmt.Errorf("--args is %d bytes; the limit is %d", len(v), maxClaimArgs)
	}
	if err := v.Canonicalize(); err != nil {
		return nil, fmt.Errorf("--args is not valid JSON: %w", err)
	}
	if v.Kind() != '{' {
		kind := map[jsontext.Kind]string{'[': "an array", '"': "a string", '0': "a number", 'n': "null",
			't': "true", 'f': "false"}[v.Kind()]
		return nil, fmt.Errorf("--args must be a JSON object like '{\"command_substring\":\"go test\"}', not %s", kind)
	}
	if len(v) > maxClaimArgs {
		return nil, fmt.Errorf("--args is %d bytes; the limit is %d", len(v), maxClaimArgs)
	}
	return v, nil
}

// claimRequest is one claim to ask about, from one host.
type claimRequest struct {
	src                       envelope.Source
	hostTok                   string
	session, claim, validator string
	args                      jsontext.Value
}

// claimSource is who asks: with a hook identity, the host it was issued
// for (NATS lets its claims through only on that host's subjects); else
// this machine. canRead is false for a hook identity, which may not read
// the ledger.
func (a *app) claimSource() (envelope.Source, string, bool, error) {
	src := cliSource()
	i, ok, err := a.identity(identity.RoleHook)
	switch {
	case err != nil:
		return src, "", false, err
	case ok && i.Role != identity.RoleHook:
		return src, "", false, fmt.Errorf(
			"a claim is asked with this host's hook identity (the credentials claimcheck-hook uses, <data dir>/creds/hook.creds); these are of role %s", i.Role)
	case ok:
		src.Host = i.Host
		src.AgentID = strings.SplitN(src.AgentID, "@", 2)[0] + "@" + i.Host
		return src, i.Name, false, nil
	}
	tok, err := id.HostToken(src.Host)
	return src, tok, true, err
}

// requestVerdict publishes the claim request through INTAKE (so it is
// chained in order after the session's events) and waits for the answer.
func (a *app) requestVerdict(cmd *cobra.Command, nc *nats.Conn, js jetstream.JetStream, r claimRequest, timeout time.Duration) (
	schemas.Verdict, error) {
	session, claimType, validator, args := r.session, r.claim, r.validator, r.args
	var v schemas.Verdict
	gen := id.NewGenerator(clock.Real{}, nil)
	eventID, err := gen.New()
	if err != nil {
		return v, err
	}
	requestID, err := gen.New()
	if err != nil {
		return v, err
	}
	// The host's own inbox: ingest answers only there, and with a hook
	// identity it is the only place this command may receive replies.
	inbox := subject.Inbox(identity.RoleHook, r.hostTok) + "." + nuid.Next()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		return v, &exitError{ClaimTransport, err}
	}
	defer func() { _ = sub.Unsubscribe() }()
	payload, err := json.Marshal(struct {
		SessionID string         `json:"session_id"`
		HookEvent string         `json:"hook_event_name"`
		RequestID string         `json:"request_id"`
		Claim     string         `json:"claim"`
		Validator string         `json:"validator"`
		Args      jsontext.Value `json:"args"`
		ReplyTo   string         `json:"reply_to"`
	}{session, schemas.ClaimRequestEvent, requestID, claimType, validator, args, inbox})
	if err != nil {
		return v, err
	}
	pub := intake.Publisher{JS: js, Origin: subject.OriginHook, Name: r.hostTok}
	if err := pub.Event(cmd.Context(), eventID, session, schemas.ClaimRequestEvent, time.Now(), r.src, payload); err != nil {
		var perr *intake.PublishError
		if errors.As(err, &perr) {
			return v, &exitError{ClaimTransport, fmt.Errorf("publish the claim request: %w", err)}
		}
		return v, &exitError{ClaimBadInput, err}
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
	defer cancel()
	reply, err := sub.NextMsgWithContext(ctx)
	if err != nil {
		return v, &exitError{ClaimTransport, fmt.Errorf(
			"no verdict for request %s within %s: is a verifier running (claimcheck up, or the verifier service)? The request is recorded; run the claim again to ask anew", requestID, timeout)}
	}
	var probe struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(reply.Data, &probe, json.RejectUnknownMembers(false)) == nil && probe.Error != "" {
		return v, &exitError{ClaimBadInput, errors.New(probe.Error)}
	}
	if err := json.Unmarshal(reply.Data, &v, json.RejectUnknownMembers(false)); err != nil {
		return v, &exitError{ClaimTransport, fmt.Errorf("unreadable verdict for request %s: %w", requestID, err)}
	}
	if v.RequestID != requestID {
		return v, &exitError{ClaimTransport, fmt.Errorf("the answer to request %s is for request %s", requestID, id.Quote(v.RequestID))}
	}
	return v, nil
}

// cliSource attributes claim requests to the claimcheck CLI on this host.
func cliSource() envelope.Source {
	host, _ := os.Hostname()
	if host == "" {
		host = "unknown"
	}
	name := "unknown"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	return envelope.Source{Host: host, AgentType: "claimcheck-cli", AgentID: name + "@" + host}
}

// printVerdict writes a verdict for a model (or a person) to act on.
func printVerdict(w interface{ Write([]byte) (int, error) }, v schemas.Verdict) {
	fmt.Fprintf(w, "%s: %s claim backed by %s %s\n", v.Verdict, v.Claim, v.Validator, v.Args)
	switch v.Verdict {
	case schemas.Pass:
		var ev []string
		for _, m := range v.Matched {
			ev = append(ev, fmt.Sprintf("n=%d %s", m.N, short(m.Hash)))
		}
		if len(ev) > 0 {
			fmt.Fprintf(w, "evidence: ledger entries %s of session %s\n", strings.Join(ev, ", "), v.SessionID)
		}
		for _, r := range v.Reasons {
			fmt.Fprintf(w, "- %s\n", r)
		}
		fmt.Fprintf(w, "attestation: %s (signed; cite it in your final message)\n", v.AttestationID)
	default:
		for _, r := range v.Reasons {
			fmt.Fprintf(w, "- %s\n", r)
		}
		if v.NextStep != "" {
			fmt.Fprintf(w, "next step: %s\n", v.NextStep)
		}
	}
}

// spooledOf counts the events of session in claimcheck-hook's spool
// directory, which names each <n>.<event id>.<chain>.<event token>.evt.
func spooledOf(dir, session string) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".evt")
		if parts := strings.Split(name, "."); ok && len(parts) == 4 && parts[2] == session {
			n++
		}
	}
	return n
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// deliverSpooled delivers this host's hook spool before a claim when it
// holds events of the claim's session. Those are events NATS did not take
// when the hook ran; published after the claim, they would reach the
// chain after it, and the verifier would judge the session without them
// (a test run the hook spooled would read as no run at all). It runs
// claimcheck-hook flush with this command's NATS URL and hook credentials,
// and refuses to ask while any of the session's events remain spooled.
func (a *app) deliverSpooled(ctx context.Context, session string) error {
	dir := hookStateDir(a.env.Getenv)
	if dir == "" {
		return nil
	}
	spool := filepath.Join(dir, "spool")
	n := spooledOf(spool, session)
	if n == 0 {
		return nil
	}
	name := "claimcheck-hook"
	if needsTLS(a.natsURL()) {
		name = "claimcheck-hook-tls"
	}
	// Only the hook installed beside this claimcheck, never one found on
	// $PATH: the claim runs outside the agent's sandbox (hooks install
	// --sandbox excludes it), and the agent chooses its own $PATH.
	var out bytes.Buffer
	path, err := "", error(nil)
	if exe, xerr := os.Executable(); xerr != nil {
		err = xerr
	} else if path = filepath.Join(filepath.Dir(exe), name); !isExecutable(path) {
		err = fmt.Errorf("%s not found beside %s", name, exe)
	}
	if err == nil {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		c := exec.CommandContext(ctx, path, "flush")
		c.Env = append(os.Environ(), "CLAIMCHECK_HOOK_STATE_DIR="+dir, "CLAIMCHECK_NATS_URL="+a.natsURL())
		if creds := a.creds(identity.RoleHook); creds != "" {
			c.Env = append(c.Env, "CLAIMCHECK_NATS_CREDS="+creds)
		}
		c.Stdout, c.Stderr = &out, &out
		if err = c.Run(); err != nil {
			err = fmt.Errorf("%s flush: %w: %s", name, err, strings.TrimSpace(out.String()))
		}
	}
	left := spooledOf(spool, session)
	if left == 0 {
		fmt.Fprintf(a.env.Stderr, "claimcheck: delivered this session's %d spooled events before the claim\n", n)
		return nil
	}
	why := ""
	if err != nil {
		why = " (" + err.Error() + ")"
	}
	return &exitError{ClaimTransport, fmt.Errorf(
		"%d events of session %s are still in this host's hook spool (%s): NATS did not take them when the hook ran, "+
			"and a verdict now would judge the session without them; run claimcheck-hook flush once NATS is reachable, "+
			"then claim again%s", left, session, spool, why)}
}

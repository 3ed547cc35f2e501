package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/outcome"
	"github.com/claimcheck/claimcheck/schemas"
)

func (a *app) sessionCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "session", Short: "How a recorded session ended"}
	cmd.AddCommand(a.sessionStatusCommand())
	return cmd
}

func (a *app) sessionStatusCommand() *cobra.Command {
	var session string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status --session S",
		Short: "Say whether the session's last stop was verified; exit 0 only if it was",
		Long: `status reads the session's chain, checks every hash and link, and says how its last
turn ended: verified (the gate let the stop through on its own terms), overridden,
not verified (capped: the gate let it through at its block cap), not verified
(blocked: the turn ended on a blocked stop), gate unreachable, ungated (no decision
recorded for the last stop) or no stop yet. The agent CLI's own exit status cannot
tell these apart; scripts and CI can use this command's. The gatekeeper's findings
about the session are listed too: hook_config_drift (it started without all of
claimcheck's hooks) and ungated_session (its events stopped before it ended).

Exit status: 0 verified, 1 anything else (or a chain that does not verify),
2 usage, connection or unknown session.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkChainArg(session); err != nil {
				return err
			}
			nc, js, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			defer nc.Close()
			o, entries, err := sessionOutcome(cmd, js, session)
			var fault *chain.Fault
			switch {
			case errors.As(err, &fault):
				return &exitError{ExitFault, fmt.Errorf("session %s: its chain does not verify at n=%d (%s): nothing in it can be trusted",
					session, fault.N, fault.Reason)}
			case err != nil:
				return &exitError{ExitError, err}
			case entries == 0:
				return &exitError{ExitError,
					fmt.Errorf("unknown session %s: nothing of it is in the ledger (see `claimcheck ledger sessions`)", session)}
			}
			a.printOutcome(session, o, asJSON)
			if !o.Verified {
				return &exitError{code: ExitFault}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&session, "session", "", "session id")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the outcome as one JSON object")
	_ = cmd.MarkFlagRequired("session")
	return cmd
}

// sessionOutcome walks a session's chain, verifying it, and returns how its
// last turn ended and how many entries it read.
func sessionOutcome(cmd *cobra.Command, js jetstream.JetStream, session string) (outcome.Outcome, int, error) {
	var t outcome.Tracker
	v := chain.NewVerifierFrom(session, ledger.NewAnchors(js).StartOf(cmd.Context(), session))
	count := 0
	err := ledger.NewReader(js, "").Walk(cmd.Context(), session, 0, func(s ledger.Stored) error {
		count++
		if err := v.Next(s.Raw); err != nil {
			return err
		}
		var e schemas.Entry
		if err := json.Unmarshal(s.Raw, &e, json.RejectUnknownMembers(false)); err != nil {
			return err
		}
		t.Observe(e)
		return nil
	})
	return t.Outcome(), count, err
}

func (a *app) printOutcome(session string, o outcome.Outcome, asJSON bool) {
	w := a.env.Stdout
	if asJSON {
		b, _ := json.Marshal(struct {
			Session string `json:"session"`
			outcome.Outcome
		}{session, o})
		fmt.Fprintln(w, string(b))
		return
	}
	fmt.Fprintf(w, "session %s: %s", session, o.Kind)
	if o.StopN > 0 {
		fmt.Fprintf(w, " (last stop at n=%d", o.StopN)
		if o.Rule != "" {
			fmt.Fprintf(w, ", rule %s", o.Rule)
		}
		fmt.Fprint(w, ")")
	}
	fmt.Fprintln(w)
	if o.Why != "" && !o.Verified {
		fmt.Fprintf(w, "  %s\n", o.Why)
	}
	if len(o.Findings) > 0 {
		fmt.Fprintf(w, "  findings: %s (see `claimcheck ledger show --session %s`)\n", strings.Join(o.Findings, ", "), session)
	}
}

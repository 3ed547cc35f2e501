package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/identity"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/services/gatekeeper"
)

// gateLevelCommand is `claimcheck gate level`: show a session's, host's or
// the fleet's degradation level, or (operator) change it through a
// gatekeeper, which signs and records the change.
func (a *app) gateLevelCommand() *cobra.Command {
	var session, host, set, reason string
	var fleet, asJSON bool
	cmd := &cobra.Command{
		Use:   "level (--session S | --host H | --fleet) [--set LEVEL --reason R]",
		Short: "Show or (operator) change a session's, host's or the fleet's degradation level",
		Long: `level prints the degradation level of a session, a host or the whole fleet (NORMAL,
RESTRICT, CHECKPOINT, CONTAIN, HALT), why it is there and the escalation counters. With --set
it asks a gatekeeper to change it (operator credentials): the gatekeeper writes the level
by compare and set, signs the change and records it in the chain (the session's, or
claimcheck-levels for a host or the fleet); every gatekeeper enforces it from the next
request on, and the session's user is shown the change. Lowering a level starts its
escalation counters again. Run it yourself, not through the agent.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			scope, name, err := levelScope(session, host, fleet)
			if err != nil {
				return &exitError{ExitError, err}
			}
			nc, js, err := a.connect(cmd.Context())
			if err != nil {
				return &exitError{ExitError, err}
			}
			defer nc.Close()
			var st schemas.LevelState
			if set != "" {
				set = strings.ToUpper(set)
				if schemas.LevelRank(set) < 0 {
					return &exitError{ExitError, fmt.Errorf("--set %s: one of %s", set, strings.Join(schemas.Levels, ", "))}
				}
				if strings.TrimSpace(reason) == "" || len(reason) > 2000 {
					return &exitError{ExitError, errors.New("--reason: required, at most 2000 characters (it is recorded for the audit)")}
				}
				operator := cliSource().AgentID
				if i, ok, err := a.identity(identity.RoleOperator); err != nil {
					return &exitError{ExitError, err}
				} else if ok {
					if i.Role != identity.RoleOperator {
						return &exitError{ExitError,
							fmt.Errorf("changing a level needs operator credentials; these are of role %s", i.Role)}
					}
					operator = i.Name + " (" + operator + ")"
				}
				raw, err := json.Marshal(
					schemas.LevelRequest{V: 1, Scope: scope, Name: name, Level: set, Reason: reason, Operator: operator})
				if err != nil {
					return err
				}
				m, err := nc.Request(subject.GateLevel, raw, 10*time.Second)
				if err != nil {
					return &exitError{ExitError, fmt.Errorf("ask a gatekeeper (%s): %w", subject.GateLevel, err)}
				}
				var reply schemas.LevelReply
				if err := json.Unmarshal(m.Data, &reply, json.RejectUnknownMembers(false)); err != nil {
					return &exitError{ExitError, fmt.Errorf("the gatekeeper's answer: %w", err)}
				}
				if reply.Error != "" {
					return &exitError{ExitError, fmt.Errorf("the gatekeeper refused: %s", reply.Error)}
				}
				st = reply.State
			} else {
				kv, err := js.KeyValue(cmd.Context(), stream.BucketLevels)
				if err != nil {
					return &exitError{ExitError, fmt.Errorf("levels bucket: %w (run `claimcheck streams ensure`)", err)}
				}
				key := name
				if scope == schemas.ScopeHost {
					key, _ = id.HostToken(name)
				}
				e, err := kv.Get(cmd.Context(), gatekeeper.LevelKey(scope, key))
				switch {
				case errors.Is(err, jetstream.ErrKeyNotFound):
					st = schemas.LevelState{V: 1, Scope: scope, Name: key, Level: schemas.LevelNormal}
				case err != nil:
					return &exitError{ExitError, err}
				default:
					if err := json.Unmarshal(e.Value(), &st, json.RejectUnknownMembers(false)); err != nil {
						return &exitError{ExitError, err}
					}
				}
			}
			if asJSON {
				out, _ := json.Marshal(st, json.Deterministic(true))
				fmt.Fprintln(a.env.Stdout, string(out))
				return nil
			}
			who := scope + " " + st.Name
			if scope == schemas.ScopeFleet {
				who = "fleet"
			}
			fmt.Fprintf(a.env.Stdout, "%s: %s\n", who, st.Level)
			if st.Rule != "" {
				fmt.Fprintf(a.env.Stdout, "  rule:     %s\n  cause:    %s\n  changed:  %s by %s\n",
					st.Rule, st.Cause, st.ChangedAt, st.ChangedBy)
			}
			if st.Operator != "" {
				fmt.Fprintf(a.env.Stdout, "  operator: %s\n", st.Operator)
			}
			if st.FindingID != "" {
				fmt.Fprintf(a.env.Stdout, "  record:   level_change finding %s\n", st.FindingID)
			}
			if scope == schemas.ScopeSession {
				fmt.Fprintf(a.env.Stdout, "  counted:  %d denials, %d flagged tool results\n", st.Denials, st.Injections)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&session, "session", "", "a session's level")
	cmd.Flags().StringVar(&host, "host", "", "a host's level (all its sessions)")
	cmd.Flags().BoolVar(&fleet, "fleet", false, "the fleet's level (every session)")
	cmd.Flags().StringVar(&set, "set", "", "change it to LEVEL (operator)")
	cmd.Flags().StringVar(&reason, "reason", "", "why (recorded; required with --set)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the level's state as JSON")
	return cmd
}

// levelScope checks that exactly one of the scope flags is given.
func levelScope(session, host string, fleet bool) (scope, name string, err error) {
	n := 0
	for _, set := range []bool{session != "", host != "", fleet} {
		if set {
			n++
		}
	}
	if n != 1 {
		return "", "", errors.New("give exactly one of --session, --host, --fleet")
	}
	switch {
	case session != "":
		if err := id.CheckSession(session); err != nil {
			return "", "", fmt.Errorf("--session: %w", err)
		}
		return schemas.ScopeSession, session, nil
	case host != "":
		if _, err := id.HostToken(host); err != nil {
			return "", "", fmt.Errorf("--host: %w", err)
		}
		return schemas.ScopeHost, host, nil
	}
	return schemas.ScopeFleet, "", nil
}

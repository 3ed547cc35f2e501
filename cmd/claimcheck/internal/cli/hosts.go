package cli

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/spf13/cobra"

	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
)

// hostRow is one host of `claimcheck hosts`.
type hostRow struct {
	Host     string `json:"host"`
	Sessions int    `json:"sessions"`
	// LastStart is the last SessionStart (by the hook's clock), its
	// session and its hook configuration's verdict ("unknown" when the
	// hook recorded none).
	LastStart   string   `json:"last_session_start,omitempty"`
	LastSession string   `json:"last_session,omitempty"`
	Verdict     string   `json:"verdict"`
	Missing     []string `json:"missing,omitempty"`
	Drift       int      `json:"hook_config_drift"`
	Ungated     int      `json:"ungated_sessions"`
	lastAt      time.Time
}

// drifted: the host's last session started without claimcheck's hooks
// gated.
func (h hostRow) drifted() bool {
	return h.Verdict != schemas.HooksGated && h.Verdict != verdictUnknown
}

const verdictUnknown = "unknown"

func (a *app) hostsCommand() *cobra.Command {
	var asJSON, onlyDrifted bool
	cmd := &cobra.Command{
		Use:   "hosts",
		Short: "List the hosts in the ledger with the hook configuration of their last session and their findings",
		Long: `hosts reads the whole ledger once and lists every host whose hook sent a SessionStart:
its sessions, the verdict of the hook configuration its last session started under
(gated, changed, missing, none; unknown for a hook that did not record it), and how
many hook_config_drift and ungated_session findings the gatekeeper recorded about
its sessions. --drifted lists only hosts whose last session did not start gated.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			nc, js, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			defer nc.Close()
			rows, err := hostsOf(cmd, ledger.NewReader(js, ""))
			if err != nil {
				return &exitError{ExitError, err}
			}
			if onlyDrifted {
				rows = slices.DeleteFunc(rows, func(h hostRow) bool { return !h.drifted() })
			}
			a.printHosts(rows, asJSON)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON object per line")
	cmd.Flags().BoolVar(&onlyDrifted, "drifted", false, "only hosts whose last session did not start with claimcheck's hooks gated")
	return cmd
}

// hostsOf walks the ledger once: the agent's SessionStarts by host, and the
// gatekeeper's findings by the host they name.
func hostsOf(cmd *cobra.Command, r *ledger.Reader) ([]hostRow, error) {
	byHost := map[string]*hostRow{}
	sessions := map[string]map[string]bool{}
	row := func(h string) *hostRow {
		if byHost[h] == nil {
			byHost[h] = &hostRow{Host: h, Verdict: verdictUnknown}
			sessions[h] = map[string]bool{}
		}
		return byHost[h]
	}
	err := r.WalkAll(cmd.Context(), func(s ledger.Stored) error {
		if id.CheckSession(s.Chain) != nil {
			return nil
		}
		var e schemas.Entry
		if json.Unmarshal(s.Raw, &e, json.RejectUnknownMembers(false)) != nil || e.Kind != schemas.EntryEvent {
			return nil // ledger verify reports it
		}
		origin, _, _ := strings.Cut(e.Origin, ":")
		switch {
		case e.HookEvent == schemas.HookSessionStart && origin != subject.OriginGatekeeper && origin != subject.OriginOperator:
			h := row(e.Host)
			sessions[e.Host][e.SessionID] = true
			h.Sessions = len(sessions[e.Host])
			// Times are compared parsed: ingest writes RFC 3339 with
			// the fraction's trailing zeros cut ("…:46.5Z" is before
			// "…:46.512Z", not after it as strings).
			at, _ := time.Parse(time.RFC3339Nano, e.ReceivedAt)
			if h.LastStart != "" && at.Before(h.lastAt) {
				return nil
			}
			h.lastAt, h.LastStart, h.LastSession, h.Verdict, h.Missing = at, e.ReceivedAt, e.SessionID, verdictUnknown, nil
			if e.HookConfig != nil {
				h.Verdict, h.Missing = e.HookConfig.Verdict, e.HookConfig.Missing
			}
		case e.HookEvent == schemas.GateFindingEvent && origin == subject.OriginGatekeeper && e.Payload != nil:
			var f schemas.FindingRecord
			if json.Unmarshal([]byte(*e.Payload), &f, json.RejectUnknownMembers(false)) != nil {
				return nil
			}
			h := row(f.Finding.Host)
			switch f.Finding.Kind {
			case schemas.FindingHookConfigDrift:
				h.Drift++
			case schemas.FindingUngated:
				h.Ungated++
			}
		}
		return nil
	})
	out := make([]hostRow, 0, len(byHost))
	for _, h := range byHost {
		out = append(out, *h)
	}
	slices.SortFunc(out, func(a, b hostRow) int { return strings.Compare(a.Host, b.Host) })
	return out, err
}

func (a *app) printHosts(rows []hostRow, asJSON bool) {
	w := a.env.Stdout
	if asJSON {
		for _, h := range rows {
			b, _ := json.Marshal(h)
			fmt.Fprintln(w, string(b))
		}
		return
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tSESSIONS\tLAST SESSION START\tLAST SESSION\tHOOKS\tDRIFT FINDINGS\tUNGATED FINDINGS")
	for _, h := range rows {
		verdict := h.Verdict
		if len(h.Missing) > 0 {
			verdict += fmt.Sprintf(" (%d unhandled)", len(h.Missing))
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%d\t%d\n", h.Host, h.Sessions, h.LastStart, h.LastSession, verdict, h.Drift, h.Ungated)
	}
	_ = tw.Flush()
}

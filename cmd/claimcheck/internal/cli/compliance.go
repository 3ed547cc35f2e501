package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/claimcheck/claimcheck/cmd/claimcheck/internal/compliance"
	"github.com/claimcheck/claimcheck/pkg/archive"
	"github.com/claimcheck/claimcheck/pkg/attest"
	"github.com/claimcheck/claimcheck/pkg/identity"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/replay"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/services/rotator"
)

// complianceCommand is `claimcheck compliance`.
func (a *app) complianceCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "compliance", Short: "Reports that map what claimcheck did to security controls"}
	cmd.AddCommand(a.complianceReportCommand())
	return cmd
}

func (a *app) complianceReportCommand() *cobra.Command {
	w := &windowFlags{}
	var format, outFile string
	cmd := &cobra.Command{
		Use:   "report [--since T] [--until T] [--format markdown|json] [--out FILE]",
		Short: "Map the seed's NIST SP 800-53 controls to what claimcheck did in a window, with the evidence",
		Long: `report replays the window (default: the whole ledger; each entry checked against its
chain), reads the evidence streams' configuration, the key registry, the policies in
force and the archive (verifying it), and writes, for AU-2, AU-3, AU-8, AU-9, AU-10,
AU-11, AU-12, AC-3, AC-6, CM-6, SC-8, SC-28, SI-3 and SI-10, what claimcheck does, the
evidence from this system, and the tests that back it. Each control's status is
evidence, attention (the facts show a failure), no-events (nothing in the window
exercised it) or not-observable (the report cannot see it from a client).
Exit 0 when no control needs attention, 1 when one does, 2 on errors.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "markdown" && format != "json" {
				return &exitError{ExitError, fmt.Errorf("--format %q: want markdown or json", format)}
			}
			if w.host != "" || w.session != "" || w.kind != "" {
				return &exitError{ExitError, errors.New("--host, --session and --kind do not apply: the report covers the whole fleet")}
			}
			cfg, err := w.config(time.Now())
			if err != nil {
				return err
			}
			out, closeOut, err := a.exportOutput(outFile, false)
			if err != nil {
				return err
			}
			defer func() { _ = closeOut() }() // on the error paths; closed and checked below once written
			closeAll, err := a.openReplay(cmd, w, "", &cfg)
			if err != nil {
				return err
			}
			defer closeAll()
			facts, err := a.complianceFacts(cmd, cfg)
			if err != nil {
				return &exitError{ExitError, err}
			}
			rep := compliance.Build(facts)
			write := compliance.Markdown
			if format == "json" {
				write = compliance.JSON
			}
			if err := write(out, rep); err != nil {
				return &exitError{ExitError, err}
			}
			if err := closeOut(); err != nil {
				return err
			}
			var attention []string
			for _, c := range rep.Controls {
				if c.Status == compliance.StatusAttention {
					attention = append(attention, c.ID)
				}
			}
			if len(attention) > 0 {
				return &exitError{ExitFault, fmt.Errorf("controls needing attention: %s", strings.Join(attention, ", "))}
			}
			return nil
		},
	}
	w.register(cmd, "start of the window: an RFC 3339 time or a duration back from now (default: the whole ledger)")
	cmd.Flags().StringVar(&format, "format", "markdown", "markdown or json")
	cmd.Flags().StringVar(&outFile, "out", "", "write to this file (created) instead of stdout")
	return cmd
}

// complianceFacts gathers what the report is computed from.
func (a *app) complianceFacts(cmd *cobra.Command, cfg replay.Config) (compliance.Facts, error) {
	ctx := cmd.Context()
	js := cfg.JS
	f := compliance.Facts{Generated: time.Now(), Window: cfg.Window, Tally: compliance.NewTally(), Identity: identity.RoleOperator}
	if a.v.GetString("nats.creds") != "" {
		f.Identity = "the configured credentials (" + a.v.GetString("nats.creds") + ")"
	}
	nc := js.Conn()
	f.TLS = strings.HasPrefix(nc.ConnectedUrl(), "tls://") || nc.TLSRequired()
	sum, err := replay.Run(ctx, cfg, func(r *replay.Record) error {
		f.Tally.Add(r)
		return nil
	})
	if err != nil {
		return f, err
	}
	f.Replay = sum
	checks := map[string]func(jetstream.StreamConfig) error{stream.Ledger: stream.CheckLedger, stream.Attest: stream.CheckAppendOnly}
	for name, check := range checks {
		s, err := js.Stream(ctx, name)
		if err != nil {
			return f, fmt.Errorf("stream %s: %w", name, err)
		}
		if name == stream.Ledger {
			f.LedgerSafe = check(s.CachedInfo().Config)
		} else {
			f.AttestSafe = check(s.CachedInfo().Config)
		}
	}
	if err := a.keyFacts(ctx, js, &f); err != nil {
		return f, err
	}
	// The ledger's Merkle tree, as ledger verify checks it (against the
	// local witness of claimcheck up when there is one).
	tree := &checkpointFlags{}
	tree.localWitness(a.dataDir())
	f.Tree.Summary, f.Tree.Err = tree.verifyTree(ctx, js, nil)
	f.Policies = policyVersions(ctx, js)
	if f.Retention, err = a.archiveRetention(cmd, 0); err != nil {
		return f, err
	}
	f.HotWindow = rotator.DefaultConfig().HotWindow
	if a.v.IsSet("rotator.hot_window") {
		f.HotWindow = a.v.GetDuration("rotator.hot_window")
	}
	if cfg.Archive != nil {
		if f.Archive, err = archiveFacts(ctx, cfg.Archive, cfg.Keys, f.Retention); err != nil {
			return f, err
		}
	}
	return f, nil
}

// keyFacts counts the registry's keys and verifies the window's
// attestations (each PASS's envelope in ATTEST, at its storage time).
func (a *app) keyFacts(ctx context.Context, js jetstream.JetStream, f *compliance.Facts) error {
	reg, err := keyring.OpenRegistry(ctx, js)
	if err != nil {
		return err
	}
	keys, err := reg.List(ctx)
	if err != nil {
		return err
	}
	for _, k := range keys {
		f.Keys.Total++
		switch k.Status {
		case keyring.Active:
			f.Keys.Active++
		case keyring.Revoked:
			f.Keys.Revoked++
		}
	}
	want := map[string]bool{}
	for _, id := range f.Tally.Attested {
		want[id] = true
	}
	if len(want) == 0 {
		return nil
	}
	set, err := reg.Set(ctx)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	err = readAttestations(ctx, js, "", func(env []byte, subj string, stored time.Time) error {
		id := subj[strings.LastIndexByte(subj, '.')+1:]
		if !want[id] || seen[id] {
			return nil
		}
		seen[id] = true
		f.Attestation.Checked++
		if _, err := attest.Verify(set, env, stored); err != nil {
			f.Attestation.Failures = append(f.Attestation.Failures, fmt.Sprintf("attestation %s does not verify: %v", id, err))
			return nil
		}
		f.Attestation.Verified++
		return nil
	})
	for id := range want {
		if !seen[id] {
			f.Attestation.Checked++
			f.Attestation.Failures = append(f.Attestation.Failures, fmt.Sprintf("attestation %s is not in ATTEST", id))
		}
	}
	slices.Sort(f.Attestation.Failures)
	return err
}

// policyVersions lists the policies in the policies bucket ("version.<v>").
func policyVersions(ctx context.Context, js jetstream.JetStream) []string {
	kv, err := js.KeyValue(ctx, stream.BucketPolicies)
	if err != nil {
		return nil
	}
	lister, err := kv.ListKeys(ctx)
	if err != nil {
		return nil
	}
	var out []string
	for k := range lister.Keys() {
		if v, ok := strings.CutPrefix(k, "version."); ok {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// archiveFacts verifies the LEDGER archive and finds the oldest time it
// covers.
func archiveFacts(ctx context.Context, st *archive.Store, keys *keyring.Set, retention time.Duration) (*compliance.ArchiveFacts, error) {
	rep, err := archive.Verify(ctx, st, stream.Ledger, archive.Options{Keys: keys, Now: time.Now(), Retention: retention})
	if err != nil {
		return nil, fmt.Errorf("verify archive %s: %w", st.URL, err)
	}
	af := &compliance.ArchiveFacts{URL: st.URL, Segments: rep.Segments, Tombstones: rep.Tombstones, Entries: rep.Entries,
		VerifiedAt: time.Now()}
	for _, p := range rep.Problems {
		af.Problems = append(af.Problems, p.String())
	}
	for _, raw := range rep.Manifests {
		var m archive.Manifest
		if json.Unmarshal(raw, &m, json.RejectUnknownMembers(false)) != nil {
			continue
		}
		if t, err := time.Parse(archive.TimeFormat, m.FirstTime); err == nil && (af.Oldest.IsZero() || t.Before(af.Oldest)) {
			af.Oldest = t
		}
	}
	return af, nil
}

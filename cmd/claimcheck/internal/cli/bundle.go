package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"
	tproof "github.com/transparency-dev/formats/proof"

	"github.com/claimcheck/claimcheck/pkg/bundle"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/transparency"
	"github.com/claimcheck/claimcheck/schemas"
)

// attestBundleCommand is `attest bundle ID`.
func (a *app) attestBundleCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "bundle ATTESTATION_ID",
		Short: "Write everything an outsider needs to check an attestation offline (attest verify-bundle)",
		Long: `bundle writes, as JSON: the attestation's DSSE envelope, the registry's public keys
with their windows, and a c2sp.org/tlog-proof, against the newest checkpoint of the
ledger's Merkle tree (with its witnesses' cosignatures), of each LEDGER message that
holds an entry the attestation cites (its contract, the matched entries, its
verdict, the head of its range) or the rotator's record of a key. claimcheck attest
verify-bundle checks it with no NATS and no data directory. An attestation newer
than the newest checkpoint cannot be bundled yet: wait for the next one.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			nc, js, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			defer nc.Close()
			b, err := buildBundle(cmd.Context(), js, args[0])
			if err != nil {
				return &exitError{ExitError, err}
			}
			out, err := bundle.Marshal(b)
			if err != nil {
				return &exitError{ExitError, err}
			}
			fmt.Fprintln(a.env.Stdout, string(out))
			return nil
		},
	}
}

// buildBundle gathers the bundle of attestation id.
func buildBundle(ctx context.Context, js jetstream.JetStream, id string) (bundle.Bundle, error) {
	var b bundle.Bundle
	var st *schemas.Statement
	err := readAttestations(ctx, js, "", func(env []byte, _ string, _ time.Time) error {
		s, err := peekStatement(env)
		if err == nil && s.Predicate.AttestationID == id {
			b.Attestation, st = append([]byte(nil), env...), &s
			return errStopWalk
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStopWalk) {
		return b, err
	}
	if st == nil {
		return b, fmt.Errorf("no attestation %s in ATTEST", id)
	}
	v, _, err := openLogView(ctx, js, nil)
	if err != nil {
		return b, err
	}
	if v.cp == nil {
		return b, errors.New("the ledger has no checkpoint yet")
	}
	reg, err := keyring.OpenRegistry(ctx, js)
	if err != nil {
		return b, err
	}
	keys, err := reg.List(ctx)
	if err != nil {
		return b, err
	}
	b.Keys, b.Origin = keyring.Export(keys, time.Now()), v.origin
	var seqs []uint64
	want := map[uint64]bool{}
	for _, p := range bundle.Cited(*st) {
		want[p.N] = true
	}
	r := ledger.NewReader(js, stream.Ledger)
	session := st.Predicate.Verdict.SessionID
	if err := r.Walk(ctx, session, 0, func(s ledger.Stored) error {
		var e struct {
			N uint64 `json:"n"`
		}
		if err := json.Unmarshal(s.Raw, &e, json.RejectUnknownMembers(false)); err == nil && want[e.N] && !slices.Contains(seqs, s.Seq) {
			seqs = append(seqs, s.Seq)
		}
		return nil
	}); err != nil {
		return b, err
	}
	keyIDs := map[string]bool{}
	for _, k := range b.Keys {
		keyIDs[k.KeyID] = true
	}
	if err := r.Walk(ctx, schemas.RotatorChain, 0, func(s ledger.Stored) error {
		var e struct {
			HookEvent string `json:"hook_event"`
			Payload   string `json:"payload"`
		}
		if err := json.Unmarshal(s.Raw, &e, json.RejectUnknownMembers(false)); err != nil || !strings.HasPrefix(e.HookEvent, "Key") {
			return nil
		}
		var k struct {
			KeyID string `json:"keyid"`
		}
		if json.Unmarshal([]byte(e.Payload), &k, json.RejectUnknownMembers(false)) == nil && keyIDs[k.KeyID] &&
			!slices.Contains(seqs, s.Seq) {
			seqs = append(seqs, s.Seq)
		}
		return nil
	}); err != nil {
		return b, err
	}
	slices.Sort(seqs)
	prover := transparency.NewProver(ctx, v.tiles, v.cp.Tree)
	ls, err := js.Stream(ctx, stream.Ledger)
	if err != nil {
		return b, err
	}
	for _, seq := range seqs {
		if int64(seq) > v.cp.Tree.N {
			return b, fmt.Errorf("LEDGER message %d (cited) is newer than the newest checkpoint (%d): wait for the next one", seq,
				v.cp.Tree.N)
		}
		m, err := ls.GetMsg(ctx, seq)
		if err != nil {
			return b, fmt.Errorf("LEDGER message %d: %w (trimmed? bundles of archived entries are not built yet)", seq, err)
		}
		proof, err := prover.ProveRecord(int64(seq) - 1)
		if err != nil {
			return b, err
		}
		p := tproof.TLogProof{Index: seq - 1, Checkpoint: v.cp.Note, ExtraData: m.Data}
		for _, h := range proof {
			p.Hashes = append(p.Hashes, h)
		}
		b.Proofs = append(b.Proofs, string(p.Marshal()))
	}
	return b, nil
}

// peekStatement reads an envelope's statement without checking it.
func peekStatement(env []byte) (schemas.Statement, error) {
	var e struct {
		Payload []byte `json:"payload"`
	}
	var st schemas.Statement
	if err := json.Unmarshal(env, &e, json.RejectUnknownMembers(false)); err != nil {
		return st, err
	}
	err := json.Unmarshal(e.Payload, &st, json.RejectUnknownMembers(false))
	return st, err
}

// attestVerifyBundleCommand is `attest verify-bundle FILE`.
func (a *app) attestVerifyBundleCommand() *cobra.Command {
	var witnessKeys []string
	var minWitnesses int
	cmd := &cobra.Command{
		Use:   "verify-bundle FILE [--witness-key K ... --min-witnesses N]",
		Short: "Check an attestation bundle offline: no NATS, no data directory",
		Long: `verify-bundle checks a bundle from claimcheck attest bundle: the attestation's
signatures under the bundle's keys at its signing time; each key against the
rotator's record of it in the ledger; each proof's checkpoint under the same keys,
with --min-witnesses cosignatures of the --witness-key witnesses; each LEDGER
message at its index under the checkpoint's root; and every entry the attestation
cites in those messages, hashing to the hash it cites. Pin the keys' fingerprints
and the witnesses' keys yourself: they are what the bundle asks you to trust.
Exit 0: it checks; 1: it does not, with the reason; 2: bad input.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			raw, err := os.ReadFile(args[0])
			if err != nil {
				return &exitError{ExitError, err}
			}
			rep, err := bundle.Verify(raw, bundle.Options{WitnessKeys: witnessKeys, MinWitnesses: minWitnesses})
			if errors.Is(err, bundle.ErrInvalid) {
				fmt.Fprintf(a.env.Stdout, "FAIL %v\n", err)
				return &exitError{code: ExitFault}
			}
			if err != nil {
				return &exitError{ExitError, err}
			}
			fmt.Fprintf(a.env.Stdout,
				"ok: attestation %s (%s claim, %s) of session %s, signed by %s; entries %v in the checkpoint of %d, cosigned by %d witness(es)\n",
				rep.AttestationID, rep.Claim, rep.Validator, rep.Session, strings.Join(rep.KeyIDs, ","), rep.Entries, rep.Checkpoint.N,
				len(rep.Witnesses))
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&witnessKeys, "witness-key", nil, "a witness's cosignature/v1 verifier key whose cosignatures count")
	cmd.Flags().IntVar(&minWitnesses, "min-witnesses", 0, "cosignatures the checkpoint needs from --witness-key witnesses")
	return cmd
}

package cli

import (
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
)

// keysCommand is `claimcheck keys`, the commands of the key registry.
func (a *app) keysCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "The attestation signing keys: list, rotate, revoke, export",
		Long: `Attestations are signed by versioned keys (v1, v2, ...). The registry (in NATS)
holds every public key with its validity window; private keys are files
(mode 0600) in the key directory of the host that signs. Rotation adds a key
and closes the old key's window after an overlap; revocation marks a key
compromised from a time on. Neither invalidates what was signed before.
The rotator is the registry's only writer: rotate and revoke ask it over
NATS (it also rotates on its own every rotator.key_rotation_period), and it
records every change in the ledger (chain _rotator).`,
	}
	cmd.AddCommand(a.keysListCommand(), a.keysRotateCommand(), a.keysRevokeCommand(), a.keysExportCommand())
	return cmd
}

// keysListCommand is `keys list`: the registered keys and their status, as a
// table or as JSON lines.
func (a *app) keysListCommand() *cobra.Command {
	var listJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the registered keys and their status",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			keys, err := a.exportKeys(cmd)
			if err != nil {
				return err
			}
			if listJSON {
				for _, k := range keys {
					b, _ := json.Marshal(k)
					fmt.Fprintln(a.env.Stdout, string(b))
				}
				return nil
			}
			if len(keys) == 0 {
				fmt.Fprintln(a.env.Stderr, "no keys registered: `claimcheck up` creates the first one, or run `claimcheck keys rotate`")
				return nil
			}
			tw := tabwriter.NewWriter(a.env.Stdout, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "KEYID\tALGORITHM\tSTATUS\tVALID FROM\tVALID UNTIL\tREVOKED AT\tFINGERPRINT")
			for _, k := range keys {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.KeyID, k.Algorithm, k.Status, k.ValidFrom, orDash(k.ValidUntil),
					orDash(k.RevokedAt), short(k.Fingerprint))
			}
			return tw.Flush()
		},
	}
	list.Flags().BoolVar(&listJSON, "json", false, "one JSON object per line")
	return list
}

// keysRotateCommand is `keys rotate`: it asks the rotator for the next key
// version, then rewrites the hook's trusted key set when this machine has one.
func (a *app) keysRotateCommand() *cobra.Command {
	var algorithm, kmsRef string
	var overlap time.Duration
	rotate := &cobra.Command{
		Use:   "rotate",
		Short: "Create the next key version; the current key keeps signing for --overlap, then verifies only",
		Long: `rotate asks the rotator to generate the next key (its private half goes to
the rotator's key directory, mode 0600, or to --kms), register it valid from
now, and close the window of the key(s) signing until now at now + --overlap.
During the overlap verifiers sign with both, so hosts that have not yet
received the new private key keep producing attestations that verify. With
separate hosts, copy the new <keyid>.pem to the verifiers' and gatekeepers'
key directories.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			reg, done, err := a.registry(cmd)
			if err != nil {
				return err
			}
			defer done()
			res, err := a.askRotator(cmd, schemas.KeyRequest{Op: "rotate", Algorithm: algorithm, KMSRef: kmsRef, Overlap: overlap.String()})
			if err != nil {
				return err
			}
			where := "private key <rotator key_dir>/" + res.Key.KeyID + ".pem"
			if res.Key.KMSRef != "" {
				where = "private key in " + res.Key.KMSRef
			}
			fmt.Fprintf(a.env.Stdout, "created %s (%s), valid from %s; %s\n", res.Key.KeyID, res.Key.Algorithm, res.Key.ValidFrom, where)
			for _, k := range res.Retired {
				fmt.Fprintf(a.env.Stdout, "%s signs until %s, then verifies what it signed before\n", k.KeyID, orDash(k.ValidUntil))
			}
			a.refreshHookKeys(cmd.Context(), reg)
			return nil
		},
	}
	rotate.Flags().StringVar(&algorithm, "algorithm", keyring.ECDSA, "key algorithm: "+keyring.ECDSA+" or "+keyring.Ed25519)
	rotate.Flags().DurationVar(&overlap, "overlap", 10*time.Minute, "how long the previous key keeps signing beside the new one")
	rotate.Flags().StringVar(&kmsRef, "kms", "",
		"keep the new key in a KMS: a sigstore key reference; <name>://… runs the sigstore-kms-<name> plugin on PATH (ECDSA P-256)")
	return rotate
}

// keysRevokeCommand is `keys revoke`: it asks the rotator to mark a key
// compromised from --at on, then rewrites the hook's trusted key set when
// this machine has one.
func (a *app) keysRevokeCommand() *cobra.Command {
	var at string
	revoke := &cobra.Command{
		Use:   "revoke KEYID [--at TIME]",
		Short: "Mark a key compromised from --at on: its signatures made then or later stop verifying",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			when := time.Now()
			if at != "" {
				t, err := time.Parse(time.RFC3339Nano, at)
				if err != nil {
					return &exitError{ExitError, fmt.Errorf("--at %q: want an RFC 3339 time like 2026-11-22T10:00:00Z", at)}
				}
				when = t
			}
			reg, done, err := a.registry(cmd)
			if err != nil {
				return err
			}
			defer done()
			res, err := a.askRotator(cmd, schemas.KeyRequest{Op: "revoke", KeyID: args[0], At: when.UTC().Format(time.RFC3339Nano)})
			if err != nil {
				return err
			}
			fmt.Fprintf(a.env.Stdout, "%s revoked at %s: attestations it signed before still verify, later ones do not\n", res.Key.KeyID,
				orDash(res.Key.RevokedAt))
			a.refreshHookKeys(cmd.Context(), reg)
			return nil
		},
	}
	revoke.Flags().StringVar(&at, "at", "", "compromise time, RFC 3339 (default now)")
	return revoke
}

// exportKeys reads the registered keys, with each one's status now.
func (a *app) exportKeys(cmd *cobra.Command) ([]schemas.Key, error) {
	reg, done, err := a.registry(cmd)
	if err != nil {
		return nil, err
	}
	defer done()
	keys, err := reg.List(cmd.Context())
	if err != nil {
		return nil, &exitError{ExitError, err}
	}
	return keyring.Export(keys, time.Now()), nil
}

// keysExportCommand is `keys export`: the key set as a JSON array, for
// verifying attestations offline.
func (a *app) keysExportCommand() *cobra.Command {
	export := &cobra.Command{
		Use:   "export",
		Short: "Print the key set (a JSON array, schemas/keys.v1) for offline `claimcheck attest verify --keys`",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			keys, err := a.exportKeys(cmd)
			if err != nil {
				return err
			}
			b, err := json.Marshal(keys, jsontext.Multiline(true), jsontext.WithIndent("  "))
			if err != nil {
				return err
			}
			if len(keys) == 0 {
				b = []byte("[]")
			}
			fmt.Fprintln(a.env.Stdout, string(b))
			return nil
		},
	}
	return export
}

// registry connects and opens the key registry.
func (a *app) registry(cmd *cobra.Command) (*keyring.Registry, func(), error) {
	nc, js, err := a.connect(cmd.Context())
	if err != nil {
		return nil, nil, err
	}
	reg, err := keyring.OpenRegistry(cmd.Context(), js)
	if err != nil {
		nc.Close()
		return nil, nil, &exitError{ExitError, fmt.Errorf("%w (has `claimcheck up` run against this NATS?)", err)}
	}
	return reg, nc.Close, nil
}

// askRotator sends a key registry change to the rotator, the registry's
// only writer (it records the change in the ledger before it answers).
func (a *app) askRotator(cmd *cobra.Command, req schemas.KeyRequest) (schemas.KeyReply, error) {
	var rep schemas.KeyReply
	nc, _, err := a.connect(cmd.Context())
	if err != nil {
		return rep, err
	}
	defer nc.Close()
	raw, err := json.Marshal(req)
	if err != nil {
		return rep, err
	}
	m, err := nc.RequestWithContext(cmd.Context(), subject.RotatorKeys, raw)
	if errors.Is(err, nats.ErrNoResponders) {
		return rep, &exitError{ExitError,
			errors.New(
				"no rotator answered on " + subject.RotatorKeys + ": the rotator is the only writer of the key registry; run `claimcheck up` (or the rotator service) and try again")}
	}
	if err != nil {
		return rep, &exitError{ExitError, fmt.Errorf("asking the rotator: %w", err)}
	}
	if err := json.Unmarshal(m.Data, &rep); err != nil {
		return rep, &exitError{ExitError, fmt.Errorf("the rotator's answer: %w", err)}
	}
	if rep.Error != "" && rep.Key == nil {
		return rep, &exitError{ExitError, errors.New(rep.Error)}
	}
	if rep.Error != "" {
		fmt.Fprintln(a.env.Stderr, "warning:", rep.Error)
	}
	return rep, nil
}

func orDash(s *string) string {
	if s == nil || *s == "" {
		return "-"
	}
	return *s
}

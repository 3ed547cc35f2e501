package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/claimcheck/claimcheck/pkg/attest"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/schemas/validation"
)

// maxEnvelope bounds one attestation line read by `attest verify`.
const maxEnvelope = 1 << 20

func (a *app) attestCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "attest", Short: "Export and verify signed attestations (DSSE / in-toto)"}

	var exportSession string
	export := &cobra.Command{
		Use:   "export [--session S]",
		Short: "Print attestations from ATTEST, one DSSE envelope (JSON) per line",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if exportSession != "" {
				if err := checkChainArg(exportSession); err != nil {
					return err
				}
			}
			nc, js, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			defer nc.Close()
			w := bufio.NewWriter(a.env.Stdout)
			n := 0
			err = readAttestations(cmd.Context(), js, exportSession, func(env []byte, _ string, _ time.Time) error {
				n++
				_, err := fmt.Fprintf(w, "%s\n", bytes.TrimSpace(env))
				return err
			})
			if ferr := w.Flush(); err == nil {
				err = ferr
			}
			if err != nil {
				return &exitError{ExitError, err}
			}
			if n == 0 {
				fmt.Fprintln(a.env.Stderr, "no attestations")
			}
			return nil
		},
	}
	export.Flags().StringVar(&exportSession, "session", "", "only this session's attestations")

	var keysFile, verifySession string
	var verifyJSON bool
	verify := &cobra.Command{
		Use:   "verify [--keys KEYSET.json] [FILE ...]",
		Short: "Verify attestations: offline against an exported key set, or online against the registry and ATTEST",
		Long: `verify checks DSSE envelopes (one JSON per line; FILE "-" is stdin): the payload
type must be in-toto's, at least one signature must verify under a key whose
window covers the signing time, and the statement must be consistent (one
session and ledger range, PASS, its attestation id belonging to its request,
a policy digest).

Offline (--keys, from claimcheck keys export): signatures are judged at the
statement's signed_at. Online (no --keys): keys come from the registry, and
envelopes (FILEs, or else every attestation in ATTEST, --session to filter)
are judged at the time ATTEST stored them, which a key holder cannot choose.
Exit status 0 when every attestation verifies, 1 otherwise.`,
		RunE: func(cmd *cobra.Command, files []string) error {
			var set *keyring.Set
			online := keysFile == ""
			var js jetstream.JetStream
			if online {
				nc, j, err := a.connect(cmd.Context())
				if err != nil {
					return err
				}
				defer nc.Close()
				js = j
				reg, err := keyring.OpenRegistry(cmd.Context(), js)
				if err != nil {
					return &exitError{ExitError, err}
				}
				keys, err := reg.List(cmd.Context())
				if err != nil {
					return &exitError{ExitError, err}
				}
				if set, err = keyring.NewSet(keys); err != nil {
					return &exitError{ExitError, err}
				}
			} else {
				var err error
				if set, err = loadKeySet(keysFile); err != nil {
					return &exitError{ExitError, err}
				}
			}
			st := &verifyStats{w: a.env.Stdout, json: verifyJSON}
			if len(files) == 0 {
				if !online {
					return &exitError{ExitError, errors.New(
						"offline verification needs FILEs (from claimcheck attest export); - reads stdin")}
				}
				err := readAttestations(cmd.Context(), js, verifySession, func(env []byte, subj string, stored time.Time) error {
					st.check(set, subj, env, stored, subj)
					return nil
				})
				if err != nil {
					return &exitError{ExitError, err}
				}
			}
			for _, f := range files {
				if err := a.verifyFile(cmd.Context(), f, set, js, st); err != nil {
					return &exitError{ExitError, err}
				}
			}
			if !verifyJSON {
				fmt.Fprintf(a.env.Stdout, "%d verified, %d failed\n", st.ok, st.bad)
			}
			if st.bad > 0 || st.ok == 0 {
				if st.ok == 0 && st.bad == 0 {
					return &exitError{ExitFault, errors.New("no attestations to verify")}
				}
				return &exitError{code: ExitFault}
			}
			return nil
		},
	}
	verify.Flags().StringVar(&keysFile, "keys", "", "exported key set (claimcheck keys export); verifies offline")
	verify.Flags().StringVar(&verifySession, "session", "", "online, without FILEs: only this session's attestations")
	verify.Flags().BoolVar(&verifyJSON, "json", false, "one JSON result per attestation")
	cmd.AddCommand(export, verify, a.attestBundleCommand(), a.attestVerifyBundleCommand())
	return cmd
}

// verifyFile checks every line of one file. Online, each envelope is looked
// up in ATTEST for its trusted storage time (and must match what is stored).
func (a *app) verifyFile(ctx context.Context, name string, set *keyring.Set, js jetstream.JetStream, st *verifyStats) error {
	var r io.Reader
	if name == "-" {
		r = a.env.Stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		r = f
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxEnvelope)
	line := 0
	for sc.Scan() {
		line++
		env := bytes.TrimSpace(sc.Bytes())
		if len(env) == 0 {
			continue
		}
		where := fmt.Sprintf("%s:%d", name, line)
		var at time.Time
		if js != nil {
			stored, storedAt, err := lookupStored(ctx, js, env)
			switch {
			case err != nil:
				st.fail(where, "", err.Error())
				continue
			case !bytes.Equal(bytes.TrimSpace(stored), env):
				st.fail(where, "", "differs from the attestation ATTEST holds under the same id")
				continue
			}
			at = storedAt
		}
		st.check(set, where, env, at, "")
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: line %d: %w (an envelope is at most %d bytes)", name, line+1, err, maxEnvelope)
	}
	return nil
}

// lookupStored finds an envelope's stored copy in ATTEST by the session and
// attestation id its (not yet verified) statement names.
func lookupStored(ctx context.Context, js jetstream.JetStream, env []byte) ([]byte, time.Time, error) {
	var e struct {
		Payload []byte `json:"payload"`
	}
	var stmt schemas.Statement
	if err := json.Unmarshal(env, &e, json.RejectUnknownMembers(false)); err != nil {
		return nil, time.Time{}, fmt.Errorf("not a DSSE envelope: %w", err)
	}
	if err := json.Unmarshal(e.Payload, &stmt, json.RejectUnknownMembers(false)); err != nil {
		return nil, time.Time{}, fmt.Errorf("statement: %w", err)
	}
	p := stmt.Predicate
	if checkChainArg(p.Verdict.SessionID) != nil || p.AttestationID == "" || strings.ContainsAny(p.AttestationID, ".*> ") {
		return nil, time.Time{}, errors.New("statement names no valid session and attestation id")
	}
	s, err := js.Stream(ctx, stream.Attest)
	if err != nil {
		return nil, time.Time{}, err
	}
	m, err := s.GetLastMsgForSubject(ctx, subject.Attestation(p.Verdict.SessionID, p.AttestationID))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, time.Time{}, fmt.Errorf("attestation %s of session %s is not in ATTEST", p.AttestationID, p.Verdict.SessionID)
	}
	if err != nil {
		return nil, time.Time{}, err
	}
	return m.Data, m.Time, nil
}

// readAttestations calls fn for every attestation in ATTEST (of session, if
// set), oldest first, with its subject and storage time.
func readAttestations(ctx context.Context, js jetstream.JetStream, session string,
	fn func(env []byte, subj string, stored time.Time) error) error {
	filter := subject.AttestPrefix + ".>"
	if session != "" {
		filter = subject.AttestPrefix + "." + session + ".*"
	}
	cons, err := js.OrderedConsumer(ctx, stream.Attest, jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter}})
	if err != nil {
		return fmt.Errorf("read ATTEST: %w", err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return fmt.Errorf("read ATTEST: %w", err)
	}
	for pending := info.NumPending; pending > 0; {
		m, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			return fmt.Errorf("read ATTEST: %w", err)
		}
		meta, err := m.Metadata()
		if err != nil {
			return err
		}
		if err := fn(m.Data(), m.Subject(), meta.Timestamp); err != nil {
			return err
		}
		pending = meta.NumPending
	}
	return nil
}

// loadKeySet reads and schema-checks an exported key set.
func loadKeySet(path string) (*keyring.Set, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("key set: %w", err)
	}
	v, err := validation.New()
	if err != nil {
		return nil, err
	}
	if err := v.Validate(schemas.KeysV1, raw); err != nil {
		return nil, fmt.Errorf("key set %s: %w", path, err)
	}
	var keys []schemas.Key
	if err := json.Unmarshal(raw, &keys, json.RejectUnknownMembers(true)); err != nil {
		return nil, fmt.Errorf("key set %s: %w", path, err)
	}
	return keyring.NewSet(keys)
}

// verifyStats prints one result per attestation and counts them.
type verifyStats struct {
	w       io.Writer
	json    bool
	ok, bad int
}

type attestResult struct {
	Where         string   `json:"where"`
	OK            bool     `json:"ok"`
	AttestationID string   `json:"attestation_id,omitempty"`
	SessionID     string   `json:"session_id,omitempty"`
	Subject       string   `json:"subject,omitempty"`
	KeyIDs        []string `json:"keyids,omitempty"`
	Error         string   `json:"error,omitempty"`
}

// check verifies one envelope; subj, when known (read from ATTEST), must be
// where the statement says it belongs.
func (s *verifyStats) check(set *keyring.Set, where string, env []byte, at time.Time, subj string) {
	c, err := attest.Verify(set, env, at)
	if err == nil && subj != "" {
		if want := subject.Attestation(c.Statement.Predicate.Verdict.SessionID, c.Statement.Predicate.AttestationID); subj != want {
			err = fmt.Errorf("stored under %s but the statement is %s", subj, want)
		}
	}
	if err != nil {
		s.fail(where, "", err.Error())
		return
	}
	s.ok++
	p := c.Statement.Predicate
	r := attestResult{Where: where, OK: true, AttestationID: p.AttestationID, SessionID: p.Verdict.SessionID,
		Subject: c.Statement.Subject[0].Name, KeyIDs: c.KeyIDs}
	if s.json {
		b, _ := json.Marshal(r)
		fmt.Fprintln(s.w, string(b))
		return
	}
	fmt.Fprintf(s.w, "ok   %s  %s  %s %s/%s  signed by %s\n", p.AttestationID, r.Subject, p.Verdict.Verdict, p.Verdict.Claim,
		p.Verdict.Validator, strings.Join(c.KeyIDs, ","))
}

func (s *verifyStats) fail(where, attID, reason string) {
	s.bad++
	if s.json {
		b, _ := json.Marshal(attestResult{Where: where, AttestationID: attID, Error: reason})
		fmt.Fprintln(s.w, string(b))
		return
	}
	fmt.Fprintf(s.w, "FAIL %s: %s\n", where, reason)
}

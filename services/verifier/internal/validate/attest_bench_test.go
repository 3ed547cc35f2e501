package validate

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/claimcheck/claimcheck/pkg/attest"
	"github.com/claimcheck/claimcheck/pkg/evidence"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/keyring/keyringtest"
	"github.com/claimcheck/claimcheck/schemas"
)

// BenchmarkAttestationCPU is what one verifier core spends per attestation
// when ledger I/O is left out: judging a test_pass claim from the session's
// entries as the verifier's view holds them (decoded and cached, except the
// test run the claim cites, which is new to the view: it is decoded, parsed
// and summarised in every iteration), building the verdict and its in-toto
// statement, and signing it (JCS, DSSE, sigstore ECDSA P-256). Beside it, in
// the same run: a raw sigstore signature over the same payload, the judging
// alone (with the newest run new, and with every entry cached, as for a
// second claim over the same evidence), and verifying the envelope (which
// the verifier never does; consumers such as the gatekeeper do). ccbench
// prints these in its signing table.
func BenchmarkAttestationCPU(b *testing.B) {
	l, run := benchSession()
	p := defaultPolicy(b)
	c := claim("done", "test_pass", map[string]any{"command_substring": "go test ./..."})
	k := keyringtest.New(b, filepath.Join(b.TempDir(), "keys"), keyring.ECDSA, time.Now())
	signer, set, raw := k.Signer, k.Set, k.Raw
	in := Input{Entries: l.entries, Claim: c, Policy: p}
	newRun := func() { in.Entries[len(in.Entries)-1] = evidence.Decode(run) }
	if r := Evaluate(in); r.Verdict != schemas.Pass {
		b.Fatalf("the benchmark's claim does not pass: %+v", r)
	}
	at := &schemas.Position{N: uint64(len(l.entries) + 2), Hash: l.entries[len(l.entries)-1].Hash, EventID: "01JDB3H5KX0000000000000099"}
	// decideAndSign is the verifier's decide and attest without their I/O.
	decideAndSign := func() ([]byte, time.Time) {
		newRun()
		r := Evaluate(in)
		v := benchVerdict(c, r, l, p.Version, p.Digest)
		now := time.Now()
		env, _, err := attest.Sign(b.Context(), signer, attest.Statement(v, at, now))
		if err != nil {
			b.Fatal(err)
		}
		return env, now
	}
	payload, err := attest.Encode(attest.Statement(benchVerdict(c, Evaluate(in), l, p.Version, p.Digest), at, time.Now()))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("raw-sigstore-sign", func(b *testing.B) {
		for b.Loop() {
			if _, err := raw.SignMessage(bytes.NewReader(payload)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decide", func(b *testing.B) {
		for b.Loop() {
			newRun()
			if r := Evaluate(in); r.Verdict != schemas.Pass {
				b.Fatal(r.Verdict)
			}
		}
	})
	b.Run("decide-cached", func(b *testing.B) {
		for b.Loop() {
			if r := Evaluate(in); r.Verdict != schemas.Pass {
				b.Fatal(r.Verdict)
			}
		}
	})
	b.Run("decide+sign", func(b *testing.B) {
		for b.Loop() {
			decideAndSign()
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "attestations/s")
	})
	env, signedAt := decideAndSign()
	b.Run("verify", func(b *testing.B) {
		for b.Loop() {
			if _, err := attest.Verify(set, env, signedAt); err != nil {
				b.Fatal(err)
			}
		}
	})
	rawSig, err := raw.SignMessage(bytes.NewReader(payload))
	if err != nil {
		b.Fatal(err)
	}
	rawV, ok := raw.(signature.Verifier)
	if !ok {
		b.Fatalf("%T cannot verify", raw)
	}
	b.Run("raw-sigstore-verify", func(b *testing.B) {
		for b.Loop() {
			if err := rawV.VerifySignature(bytes.NewReader(rawSig), bytes.NewReader(payload)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchSession is an ordinary short agent session: a prompt with its
// contract, reads and edits, a failing test run, a fix and a passing run,
// which it also returns as stored (to be decoded anew).
func benchSession() (*ledger, schemas.Entry) {
	var l ledger
	l.prompt("Fix the flaky tests in `store/store_test.go` and run `go test ./...` until they pass")
	for _, f := range []string{"store/store.go", "store/store_test.go", "store/cache.go"} {
		l.tool("PostToolUse", "Read", `{"file_path":"/work/app/`+f+`"}`, `{"type":"text","file":{"filePath":"/work/app/`+f+`","numLines":120}}`)
	}
	l.bash("git status --short", " M store/store.go\n")
	l.bash("grep -rn 'func TestCache' store/", "store/store_test.go:41:func TestCacheEviction(t *testing.T) {\n")
	l.edit("/work/app/store/store.go")
	l.bashFail("go test ./...", "Exit code 1\n--- FAIL: TestCacheEviction (0.01s)\n    store_test.go:52: got 3 entries, want 2\nFAIL\tgithub.com/acme/app/store\t0.120s\nFAIL")
	l.edit("/work/app/store/cache.go")
	l.bash("gofmt -l .", "")
	l.bash("go vet ./...", "")
	payload := `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"go test ./..."},"tool_response":{"stdout":"ok  \tgithub.com/acme/app/store\t0.412s\nok  \tgithub.com/acme/app/cmd\t0.020s\n","stderr":"","interrupted":false,"isImage":false}}`
	n := uint64(len(l.entries) + 1)
	run := schemas.Entry{N: n, Hash: fmt.Sprintf("sha256:%064d", n), EventID: fmt.Sprintf("01JD%022d", n), Kind: schemas.EntryEvent, HookEvent: "PostToolUse", ToolName: "Bash", Payload: &payload}
	l.entries = append(l.entries, evidence.Decode(run))
	return &l, run
}

// benchVerdict builds the verdict the way the verifier's decide does.
func benchVerdict(c schemas.Claim, r Result, l *ledger, policyVersion, policyDigest string) schemas.Verdict {
	last := l.entries[len(l.entries)-1]
	v := schemas.Verdict{
		V: 1, RequestID: c.RequestID, SessionID: "00893aaf-19fa-41d2-8238-13269b9b3ca0", Claim: c.Claim, Validator: c.Validator,
		Args: c.Args, Verdict: r.Verdict, Reasons: r.Reasons, NextStep: r.NextStep, Matched: r.Matched,
		Range:    schemas.Range{From: 1, To: last.N, HeadHash: last.Hash},
		Contract: r.Contract, Policy: schemas.PolicyRef{Version: policyVersion, Digest: policyDigest},
		Verifier: "bench-1",
	}
	if v.Reasons == nil {
		v.Reasons = []string{}
	}
	v.AttestationID, _ = attest.ID(c.RequestID)
	return v
}

package e2e

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/clock"
	"github.com/claimcheck/claimcheck/pkg/identity"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
)

// TestServicesKeepTheNATSServersTime: a verifier and a rotator whose host
// clocks are ten minutes behind (clock.SkewFileEnv, read by the standalone
// service binaries) date attestations and key windows by the NATS server's
// clock. Before they did, such a verifier did not start (no key was valid
// ten minutes before it was made), one behind by less dated attestations
// in the past, and a rotation by such a rotator retired the old key at a
// time already past for everyone else, so what was signed meanwhile no
// longer verified (the 30-minute torture run of seed 202170534).
func TestServicesKeepTheNATSServersTime(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	_, url := up(t, data, "127.0.0.1:0", "--services", "ingest,gatekeeper")
	skew := filepath.Join(dir, "skew")
	if err := os.WriteFile(skew, []byte("-10m"), 0o600); err != nil {
		t.Fatal(err)
	}
	off := []string{clock.SkewFileEnv + "=" + skew}
	v := start(t, append(off, "CLAIMCHECK_VERIFIER_KEY_DIR="+filepath.Join(data, "keys")), "verifier", "--nats-url", url, "--http-listen", "")
	r := start(t, append(off, "CLAIMCHECK_ROTATOR_KEY_DIR="+filepath.Join(data, "keys"),
		"CLAIMCHECK_ROTATOR_ARCHIVE_URL=file://"+filepath.Join(dir, "archive")), "rotator", "--nats-url", url, "--http-listen", "")
	v.WaitStderr(t, 30*time.Second, "verifier running")
	r.WaitStderr(t, 30*time.Second, "rotator running")
	// The offset is measured (half the round trip corrects it), so it is
	// ten minutes within a second, not to the millisecond (-9m59.998s seen).
	offset := regexp.MustCompile(`local_minus_server=(\S+)`)
	for _, p := range []*proc{v, r} {
		m := offset.FindStringSubmatch(p.Stderr())
		if m == nil {
			t.Fatalf("a service with its clock ten minutes behind did not say so:\n%s", p.Stderr())
		}
		if d, err := time.ParseDuration(m[1]); err != nil || (d+10*time.Minute).Abs() > time.Second {
			t.Fatalf("a service ten minutes behind logged local_minus_server=%s:\n%s", m[1], p.Stderr())
		}
	}

	env := []string{"CLAIMCHECK_NATS_URL=" + url, "CLAIMCHECK_HOOK_STATE_DIR=" + filepath.Join(dir, "hook"), "CLAIMCHECK_HOOK_GATE=false",
		"CLAIMCHECK_DATA_DIR=" + data}
	a := newAgent(t, env, "clock")
	a.prompt(matrixPrompt)
	_, js, _ := connectAs(t, url, identity.RoleAuditor)
	pass := func() {
		t.Helper()
		a.bash("go test ./...", goTestPass)
		vd, res := a.claim("done", "test_pass", `{"command_substring":"go test ./..."}`)
		if res.code != 0 || vd.Verdict != schemas.Pass {
			t.Fatalf("claim: %+v %+v", vd, res)
		}
		st, err := js.Stream(t.Context(), stream.Attest)
		if err != nil {
			t.Fatal(err)
		}
		m, err := st.GetLastMsgForSubject(t.Context(), subject.Attestation(a.session, vd.AttestationID))
		if err != nil {
			t.Fatal(err)
		}
		var env struct {
			Payload string `json:"payload"`
		}
		var s schemas.Statement
		if err := json.Unmarshal(m.Data, &env, json.RejectUnknownMembers(false)); err != nil {
			t.Fatal(err)
		}
		raw, err := base64.StdEncoding.DecodeString(env.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &s, json.RejectUnknownMembers(false)); err != nil {
			t.Fatal(err)
		}
		at, err := time.Parse(time.RFC3339Nano, s.Predicate.SignedAt)
		if err != nil {
			t.Fatal(err)
		}
		if d := m.Time.Sub(at); d > 5*time.Second || d < -5*time.Second {
			t.Fatalf("attestation signed at %s, stored by NATS at %s: %v apart", s.Predicate.SignedAt, m.Time.UTC().Format(time.RFC3339Nano), d)
		}
	}
	pass()

	cli := func(args ...string) result {
		t.Helper()
		return runBin(t, env, nil, "claimcheck", args...)
	}
	before := time.Now()
	if res := cli("keys", "rotate", "--overlap", "30s"); res.code != 0 || !strings.Contains(res.stdout, "created v2") {
		t.Fatalf("rotate: %+v", res)
	}
	reg, err := keyring.OpenRegistry(t.Context(), js)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := reg.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	window := map[string][2]string{}
	for _, k := range keys {
		until := ""
		if k.ValidUntil != nil {
			until = *k.ValidUntil
		}
		window[k.KeyID] = [2]string{k.ValidFrom, until}
	}
	near := func(what, s string, want time.Time) {
		t.Helper()
		got, err := time.Parse(keyring.TimeFormat, s)
		if err != nil {
			t.Fatalf("%s %q: %v (windows %v)", what, s, err, window)
		}
		if d := got.Sub(want); d > 5*time.Second || d < -5*time.Second {
			t.Fatalf("%s is %s, %v from the NATS server's time (windows %v)", what, s, d, window)
		}
	}
	near("v2's valid_from", window["v2"][0], before)
	near("v1's valid_until", window["v1"][1], before.Add(30*time.Second))
	pass()
	if res := cli("attest", "verify"); res.code != 0 || !strings.Contains(res.stdout, "2 verified, 0 failed") {
		t.Fatalf("attest verify: %+v", res)
	}
}

package oneshot

import (
	"bytes"
	"crypto/ed25519"
	"testing"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
)

// TestCredentialsAgreeWithNKeys: the hand-written reading of credentials
// gives the key, public key and signatures the nkeys package gives, for
// .creds files (as jwt.FormatUserConfig writes them) and bare seeds; and
// refuses what nkeys refuses.
func TestCredentialsAgreeWithNKeys(t *testing.T) {
	for range 50 {
		kp, _ := nkeys.CreateUser()
		seed, _ := kp.Seed()
		pub, _ := kp.PublicKey()
		uc := jwt.NewUserClaims(pub)
		uc.Name = "hook:dev1.example.com"
		uc.Tags.Add("role:hook", "name:dev1_example_com")
		acct, _ := nkeys.CreateAccount()
		token, err := uc.Encode(acct)
		if err != nil {
			t.Fatal(err)
		}
		file, _ := jwt.FormatUserConfig(token, seed)
		for name, raw := range map[string][]byte{"creds": file, "seed": seed, "seed with newline": append(append([]byte{}, seed...), '\n')} {
			c, err := ParseCredentials(raw)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			key := ed25519.NewKeyFromSeed(c.seed)
			if c.public(key) != pub {
				t.Fatalf("%s: public key %s, nkeys says %s", name, c.public(key), pub)
			}
			jwtGot, nkey, sig := c.Sign("nonce-123")
			want, _ := kp.Sign([]byte("nonce-123"))
			if !bytes.Equal(ed25519.Sign(key, []byte("nonce-123")), want) || sig == "" {
				t.Fatalf("%s: signature differs from nkeys'", name)
			}
			if name == "creds" {
				if jwtGot != token || nkey != "" || c.Name != uc.Name || c.Tag("role") != "hook" || c.Tag("name") != "dev1_example_com" {
					t.Fatalf("creds: jwt %v nkey %q name %q tags %v", jwtGot == token, nkey, c.Name, c.Tags)
				}
			} else if jwtGot != "" || nkey != pub {
				t.Fatalf("%s: jwt %q nkey %q", name, jwtGot, nkey)
			}
		}
	}
	acct, _ := nkeys.CreateAccount()
	acctSeed, _ := acct.Seed()
	for name, raw := range map[string][]byte{
		"account seed": acctSeed, "garbage": []byte("SUxyz"), "empty": nil,
		"flipped checksum": func() []byte {
			kp, _ := nkeys.CreateUser()
			s, _ := kp.Seed()
			s = append([]byte{}, s...)
			// A middle character: every bit of it is data, so the
			// CRC must catch it. (The last character of a seed
			// carries two padding bits that base32 decoding ignores.)
			s[len(s)/2] ^= 1
			return s
		}(),
	} {
		if _, err := ParseCredentials(raw); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

// FuzzParseSeed: ParseSeed accepts exactly the user seeds nkeys accepts,
// with the same 32 bytes.
func FuzzParseSeed(f *testing.F) {
	kp, _ := nkeys.CreateUser()
	s, _ := kp.Seed()
	f.Add(append([]byte{}, s...))
	a, _ := nkeys.CreateAccount()
	s2, _ := a.Seed()
	f.Add(append([]byte{}, s2...))
	f.Add([]byte("SU"))
	f.Fuzz(func(t *testing.T, seed []byte) {
		got, err := ParseSeed(seed)
		prefix, want, werr := nkeys.DecodeSeed(seed)
		nkOK := werr == nil && prefix == nkeys.PrefixByteUser
		if (err == nil) != nkOK {
			t.Fatalf("ParseSeed(%q): err %v, nkeys: prefix %v err %v", seed, err, prefix, werr)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("ParseSeed(%q) = %x, nkeys %x", seed, got, want)
		}
	})
}

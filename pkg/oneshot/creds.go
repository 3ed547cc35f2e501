package oneshot

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base32"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Credentials are a NATS identity read from a file: a .creds file (a user
// JWT and its nkey seed, as nsc and `claimcheck creds issue` write them) or
// a bare nkey seed.
//
// They are read here, not with github.com/nats-io/nkeys: that package
// compiles regular expressions and pulls golang.org/x/crypto and
// golang.org/x/sys/cpu into package initialisation (0.5–1 ms of every
// hook run on this project's machines, measured with GODEBUG=inittrace=1),
// while the seed format is small and fixed (base32 of a two-byte prefix,
// the 32-byte ed25519 seed and a CRC-16/XMODEM). TestCredentialsAgreeWithNKeys
// and FuzzParseSeed hold this reading to the nkeys package.
type Credentials struct {
	JWT  string // "" for a bare seed
	seed []byte // the 32-byte ed25519 seed; the key is derived when a nonce is signed
	Name string // the user JWT's name
	Tags []string
}

// ErrCredentials is wrapped by every failure to read credentials.
var ErrCredentials = errors.New("nats credentials")

// ReadCredentials reads a credentials file.
func ReadCredentials(path string) (*Credentials, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCredentials, err)
	}
	defer clear(raw)
	c, err := ParseCredentials(raw)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrCredentials, path, err)
	}
	return c, nil
}

// ParseCredentials reads the contents of a credentials file.
func ParseCredentials(raw []byte) (*Credentials, error) {
	var blocks [][]byte
	lines := bytes.Split(raw, []byte("\n"))
	for i := 0; i < len(lines); i++ {
		l := bytes.TrimSpace(lines[i])
		if bytes.HasPrefix(l, []byte("---")) && bytes.Contains(l, []byte("BEGIN")) && i+1 < len(lines) {
			blocks = append(blocks, bytes.TrimSpace(lines[i+1]))
			i++
		}
	}
	var c Credentials
	var seed []byte
	switch {
	case len(blocks) >= 2:
		c.JWT, seed = string(blocks[0]), blocks[1]
	case len(blocks) == 1 && bytes.HasPrefix(blocks[0], []byte("S")):
		seed = blocks[0]
	default:
		for _, l := range lines {
			if l = bytes.TrimSpace(l); bytes.HasPrefix(l, []byte("SU")) {
				seed = l
				break
			}
		}
	}
	if seed == nil {
		return nil, errors.New("neither a .creds file (user JWT and seed) nor an nkey seed")
	}
	raw32, err := ParseSeed(seed)
	if err != nil {
		return nil, err
	}
	c.seed = raw32
	if c.JWT != "" {
		if err := c.readClaims(); err != nil {
			return nil, err
		}
	}
	return &c, nil
}

// readClaims reads the user JWT's name and tags (without verifying it: the
// server does).
func (c *Credentials) readClaims() error {
	parts := strings.Split(c.JWT, ".")
	if len(parts) != 3 {
		return errors.New("the user JWT is not header.claims.signature")
	}
	body, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return fmt.Errorf("the user JWT's claims: %w", err)
	}
	var claims struct {
		Name string `json:"name"`
		NATS struct {
			Tags []string `json:"tags"`
		} `json:"nats"`
	}
	if err := json.Unmarshal(body, &claims); err != nil {
		return fmt.Errorf("the user JWT's claims: %w", err)
	}
	c.Name, c.Tags = claims.Name, claims.NATS.Tags
	return nil
}

// Tag returns the value of the JWT tag key:value ("" when absent).
func (c *Credentials) Tag(key string) string {
	for _, t := range c.Tags {
		if v, ok := strings.CutPrefix(t, key+":"); ok {
			return v
		}
	}
	return ""
}

// Sign signs the server's nonce: CONNECT then carries the JWT (or the
// public key, for a bare seed) and this signature.
func (c *Credentials) Sign(nonce string) (jwt, nkey, sig string) {
	key := ed25519.NewKeyFromSeed(c.seed)
	s := ed25519.Sign(key, []byte(nonce))
	if c.JWT == "" {
		nkey = c.public(key)
	}
	return c.JWT, nkey, base64.RawURLEncoding.EncodeToString(s)
}

// public is the nkey public key (U…) of key, for seed-only authentication.
func (c *Credentials) public(key ed25519.PrivateKey) string {
	return encodeKey(prefixUser, key.Public().(ed25519.PublicKey))
}

// nkey prefix bytes (the first base32 character of an encoded key).
const (
	prefixSeed = 18 << 3 // 'S'
	prefixUser = 20 << 3 // 'U'
)

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// ParseSeed decodes a user nkey seed ("SU…") into its 32-byte ed25519 seed.
func ParseSeed(seed []byte) ([]byte, error) {
	raw := make([]byte, b32.DecodedLen(len(seed)))
	n, err := b32.Decode(raw, seed)
	if err != nil {
		return nil, fmt.Errorf("nkey seed: %w", err)
	}
	raw = raw[:n]
	if n != 2+ed25519.SeedSize+2 {
		return nil, fmt.Errorf("nkey seed: %d bytes, want %d", n, 2+ed25519.SeedSize+2)
	}
	if crc16(raw[:n-2]) != binary.LittleEndian.Uint16(raw[n-2:]) {
		return nil, errors.New("nkey seed: checksum mismatch")
	}
	b1 := raw[0] & 248
	b2 := (raw[0]&7)<<5 | (raw[1]&248)>>3
	if b1 != prefixSeed || b2 != prefixUser {
		return nil, errors.New("nkey seed: not a user seed (SU…)")
	}
	return raw[2 : 2+ed25519.SeedSize], nil
}

// encodeKey encodes a public key with its prefix byte and checksum.
func encodeKey(prefix byte, key []byte) string {
	raw := append([]byte{prefix}, key...)
	raw = binary.LittleEndian.AppendUint16(raw, crc16(raw))
	return b32.EncodeToString(raw)
}

// crc16 is CRC-16/XMODEM (polynomial 0x1021, initial value 0), as nkeys
// checks its encodings.
func crc16(data []byte) uint16 {
	var crc uint16
	for _, b := range data {
		crc ^= uint16(b) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

package transparency

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	tnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	tlogfmt "github.com/transparency-dev/formats/log"

	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/schemas"
)

// Signature type bytes of c2sp.org/signed-note.
const (
	sigEd25519 = 0x01
	sigECDSA   = 0x02
)

// Checkpoint is a checkpoint as read: the log's origin, the tree's size and
// root hash, the signed note it came in, and the names of the witnesses
// whose cosignatures verified.
type Checkpoint struct {
	Origin    string
	Tree      tlog.Tree
	Note      []byte
	Witnesses []string
}

// Body is the text of a checkpoint (c2sp.org/tlog-checkpoint): the origin,
// the size and the root hash, a line each.
func Body(origin string, tree tlog.Tree) []byte {
	return tlogfmt.Checkpoint{Origin: origin, Size: uint64(tree.N), Hash: tree.Hash[:]}.Marshal()
}

// Sign signs a checkpoint body as a note with the signers (the log's keys
// in force).
func Sign(body []byte, signers ...note.Signer) ([]byte, error) {
	if len(signers) == 0 {
		return nil, errors.New("sign checkpoint: no key to sign with")
	}
	b, err := note.Sign(&note.Note{Text: string(body)}, signers...)
	if err != nil {
		return nil, fmt.Errorf("sign checkpoint: %w", err)
	}
	return b, nil
}

// NoteSigner signs notes with a registry key: name is the note key name
// (the log's origin), k the key's registry entry and s its signer. ECDSA
// P-256 keys sign as signed-note type 0x02 (ASN.1 over SHA-256, key ID
// from the public key's DER), Ed25519 keys as type 0x01.
func NoteSigner(name string, k schemas.Key, s signature.Signer) (note.Signer, error) {
	pub, err := cryptoutils.UnmarshalPEMToPublicKey([]byte(k.PublicKeyPEM))
	if err != nil {
		return nil, fmt.Errorf("note signer %s: %w", k.KeyID, err)
	}
	hash, err := keyHash(name, pub)
	if err != nil {
		return nil, fmt.Errorf("note signer %s: %w", k.KeyID, err)
	}
	return &noteSigner{name: name, hash: hash, s: s}, nil
}

type noteSigner struct {
	name string
	hash uint32
	s    signature.Signer
}

func (n *noteSigner) Name() string    { return n.name }
func (n *noteSigner) KeyHash() uint32 { return n.hash }
func (n *noteSigner) Sign(msg []byte) ([]byte, error) {
	return n.s.SignMessage(bytes.NewReader(msg))
}

// VerifierKey is the note verifier key (name+hash+base64(type||key)) of a
// registry key, as formats/note reads it.
func VerifierKey(name string, k schemas.Key) (string, error) {
	pub, err := cryptoutils.UnmarshalPEMToPublicKey([]byte(k.PublicKeyPEM))
	if err != nil {
		return "", fmt.Errorf("verifier key %s: %w", k.KeyID, err)
	}
	hash, err := keyHash(name, pub)
	if err != nil {
		return "", fmt.Errorf("verifier key %s: %w", k.KeyID, err)
	}
	var raw []byte
	switch p := pub.(type) {
	case ed25519.PublicKey:
		raw = append([]byte{sigEd25519}, p...)
	case *ecdsa.PublicKey:
		der, err := x509.MarshalPKIXPublicKey(p)
		if err != nil {
			return "", fmt.Errorf("verifier key %s: %w", k.KeyID, err)
		}
		raw = append([]byte{sigECDSA}, der...)
	}
	return fmt.Sprintf("%s+%08x+%s", name, hash, base64.StdEncoding.EncodeToString(raw)), nil
}

// keyHash is the signed-note key ID of a public key.
func keyHash(name string, pub crypto.PublicKey) (uint32, error) {
	switch p := pub.(type) {
	case ed25519.PublicKey:
		h := sha256.Sum256(append(append([]byte(name+"\n"), sigEd25519), p...))
		return binary.BigEndian.Uint32(h[:4]), nil
	case *ecdsa.PublicKey:
		der, err := x509.MarshalPKIXPublicKey(p)
		if err != nil {
			return 0, err
		}
		h := sha256.Sum256(der)
		return binary.BigEndian.Uint32(h[:4]), nil
	}
	return 0, fmt.Errorf("a %T key cannot sign notes (ECDSA P-256 or Ed25519)", pub)
}

// LogVerifiers are the note verifiers of the registry's keys that may
// have signed a checkpoint: every key not revoked (a revoked key's
// signatures are not trusted, since checkpoints carry no time to hold
// against its window).
func LogVerifiers(origin string, keys []schemas.Key) ([]note.Verifier, error) {
	var out []note.Verifier
	for _, k := range keys {
		if k.Status == keyring.Revoked || k.RevokedAt != nil {
			continue
		}
		vkey, err := VerifierKey(origin, k)
		if err != nil {
			return nil, err
		}
		v, err := tnote.NewVerifier(vkey)
		if err != nil {
			return nil, fmt.Errorf("verifier of %s: %w", k.KeyID, err)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, errors.New("no key of the registry can verify checkpoints (all revoked?)")
	}
	return out, nil
}

// Open verifies a signed checkpoint: a signature of one of the log's keys
// (logKeys), the origin, and the text; cosignatures of witnesses (their
// cosignature/v1 verifiers) that verify are named in Witnesses, others are
// ignored.
func Open(signed []byte, origin string, logKeys, witnesses []note.Verifier) (*Checkpoint, error) {
	all := append(append([]note.Verifier(nil), logKeys...), witnesses...)
	n, err := note.Open(signed, note.VerifierList(all...))
	if err != nil {
		var unknown *note.UnverifiedNoteError
		if errors.As(err, &unknown) {
			return nil, errors.New("checkpoint: no signature of the log's keys (signed by another key, or the keys are not known)")
		}
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	isLog := func(s note.Signature) bool {
		for _, v := range logKeys {
			if v.Name() == s.Name && v.KeyHash() == s.Hash {
				return true
			}
		}
		return false
	}
	cp := &Checkpoint{Note: signed}
	signedByLog := false
	for _, s := range append(n.Sigs, n.UnverifiedSigs...) {
		// One signature has one text: other padding bits decode to it too.
		if b, err := base64.StdEncoding.Strict().DecodeString(s.Base64); err != nil || base64.StdEncoding.EncodeToString(b) != s.Base64 {
			return nil, fmt.Errorf("checkpoint: the signature of %s is not in standard base64", s.Name)
		}
	}
	for _, s := range n.Sigs {
		if isLog(s) {
			signedByLog = true
		} else {
			cp.Witnesses = append(cp.Witnesses, s.Name)
		}
	}
	if !signedByLog {
		return nil, errors.New("checkpoint: no signature of the log's keys (only cosignatures)")
	}
	out, err := parseText(n.Text, origin, signed)
	if err != nil {
		return nil, err
	}
	out.Witnesses = cp.Witnesses
	return out, nil
}

// parseText reads a checkpoint's text.
func parseText(text, origin string, signed []byte) (*Checkpoint, error) {
	var c tlogfmt.Checkpoint
	rest, err := c.Unmarshal([]byte(text))
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	if len(rest) > 0 {
		return nil, fmt.Errorf("checkpoint: %d bytes after the root hash (this log writes no extension lines)", len(rest))
	}
	if c.Origin != origin {
		return nil, fmt.Errorf("checkpoint: origin %q, want %q", c.Origin, origin)
	}
	if len(c.Hash) != tlog.HashSize || c.Size > 1<<62 {
		return nil, fmt.Errorf("checkpoint: a root hash of %d bytes for %d leaves", len(c.Hash), c.Size)
	}
	cp := &Checkpoint{Origin: c.Origin, Note: signed, Tree: tlog.Tree{N: int64(c.Size)}}
	copy(cp.Tree.Hash[:], c.Hash)
	return cp, nil
}

// validOrigin: an origin is one line of printable ASCII without spaces
// or "+" (it is also the note key name).
func validOrigin(s string) bool {
	return s != "" && !strings.ContainsAny(s, " +\n\t") && strings.IndexFunc(s, func(r rune) bool { return r < 0x21 || r > 0x7e }) < 0
}

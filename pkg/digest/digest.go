// Package digest formats content digests the way every claimcheck message
// carries them: "sha256:" followed by 64 lower-case hex digits.
package digest

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Prefix starts every digest string.
const Prefix = "sha256:"

// Zero is the digest-shaped value used as prev_hash of a chain's first entry.
const Zero = Prefix + "0000000000000000000000000000000000000000000000000000000000000000"

// SHA256 returns "sha256:<hex>" of b.
func SHA256(b []byte) string {
	sum := sha256.Sum256(b)
	return Prefix + hex.EncodeToString(sum[:])
}

// Hex returns the hex part of a digest string, or "" if d is not one.
func Hex(d string) string {
	h, ok := strings.CutPrefix(d, Prefix)
	if !ok || !Valid(d) {
		return ""
	}
	return h
}

// Valid reports whether d is a well-formed digest string.
func Valid(d string) bool {
	h, ok := strings.CutPrefix(d, Prefix)
	if !ok || len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

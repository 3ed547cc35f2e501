// Package identity gives every claimcheck component its own NATS identity
// with only the subjects it uses, using NATS's decentralised JWT
// authentication (operator → account → user, signed with nkeys; packages
// github.com/nats-io/jwt/v2 and github.com/nats-io/nkeys).
//
// One operator signs two accounts: the system account (used only to push
// account updates to running servers) and the claimcheck account, which
// holds every stream. The claimcheck account has one scoped signing key
// per role (hook, ingest, verifier, gatekeeper, rotator, operator, auditor,
// admin); a scope carries the role's permission template, so a user's
// permissions come from the account, not from the user's own JWT: a
// credentials file says only which role and name it is (tags role:<role>
// and name:<name>), and the templates bind subjects to the name (a hook's
// host). Upgrading claimcheck changes the templates in the account JWT and
// every credentials file already issued follows, without reissuing.
//
// Revocation adds the user's public key to the account JWT's revocation
// list; pushed to running servers through the system account, it closes
// the user's connections and refuses new ones without a restart.
package identity

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"

	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/subject"
)

// Roles.
const (
	// RoleHook is claimcheck-hook and `claimcheck claim` on one agent host
	// (the name is the host's token): publish that host's events, gate
	// requests and claim requests; receive that host's replies.
	RoleHook = "hook"
	// RoleIngest chains INTAKE into the ledger.
	RoleIngest = "ingest"
	// RoleVerifier judges claims and writes attestations.
	RoleVerifier = "verifier"
	// RoleGatekeeper answers gate requests and records its decisions.
	RoleGatekeeper = "gatekeeper"
	// RoleRotator archives, trims the hot ledger behind verified copies and
	// writes the key registry.
	RoleRotator = "rotator"
	// RoleOperator is a person running claimcheck: gate overrides, key
	// rotation and revocation, and everything an auditor may read.
	RoleOperator = "operator"
	// RoleAuditor reads the ledger, attestations, buckets and artifacts;
	// it writes nothing.
	RoleAuditor = "auditor"
	// RoleAdmin creates and updates streams and buckets (never deletes or
	// purges them) and restores archived entries.
	RoleAdmin = "admin"
)

// Roles lists every role.
var Roles = []string{RoleHook, RoleIngest, RoleVerifier, RoleGatekeeper, RoleRotator, RoleOperator, RoleAuditor, RoleAdmin}

// ServiceRoles are the roles of the four services.
var ServiceRoles = []string{RoleIngest, RoleVerifier, RoleGatekeeper, RoleRotator}

// ErrNotCredentials is wrapped when a file is not a NATS credentials file
// this package can read.
var ErrNotCredentials = errors.New("not a claimcheck NATS credentials file")

// Identity is who a credentials file says it is.
type Identity struct {
	Role string
	// Name is the identity's name: for RoleHook the host's token
	// (id.HostToken), for the others a name of the operator's choice
	// (default: the role).
	Name string
	// Host is the host name a hook identity was issued for, as given
	// (RoleHook only).
	Host string
	// User is the user's public key.
	User string
}

// Inbox is the identity's reply-subject prefix (subject.Inbox): the only
// place it may receive replies.
func (i Identity) Inbox() string { return subject.Inbox(i.Role, i.Name) }

// CheckRole reports an unknown role.
func CheckRole(role string) error {
	if !slices.Contains(Roles, role) {
		return fmt.Errorf("role %s: must be one of %s", id.Quote(role), strings.Join(Roles, ", "))
	}
	return nil
}

// userName is the user JWT's name: "<role>:<name>", or for hooks
// "hook:<host>" (the host as given; its token is in the name tag).
func userName(i Identity) string {
	if i.Role == RoleHook && i.Host != "" {
		return i.Role + ":" + i.Host
	}
	return i.Role + ":" + i.Name
}

// FromJWT reads the identity a user JWT carries (its tags and name). It
// does not verify the signature: the server does.
func FromJWT(token string) (Identity, error) {
	uc, err := jwt.DecodeUserClaims(token)
	if err != nil {
		return Identity{}, fmt.Errorf("%w: %w", ErrNotCredentials, err)
	}
	var i Identity
	i.User = uc.Subject
	for _, t := range uc.Tags {
		k, v, _ := strings.Cut(t, ":")
		switch k {
		case "role":
			i.Role = v
		case "name":
			i.Name = v
		}
	}
	if err := CheckRole(i.Role); err != nil {
		return Identity{}, fmt.Errorf("%w: %w", ErrNotCredentials, err)
	}
	if err := id.CheckName(i.Name); err != nil {
		return Identity{}, fmt.Errorf("%w: name tag: %w", ErrNotCredentials, err)
	}
	if i.Role == RoleHook {
		i.Host, _ = strings.CutPrefix(uc.Name, RoleHook+":")
		if tok, err := id.HostToken(i.Host); err != nil || tok != i.Name {
			i.Host = i.Name
		}
	}
	return i, nil
}

// ReadCreds reads the identity of a .creds file (a user JWT and its seed,
// as `nsc` and `claimcheck creds issue` write them).
func ReadCreds(path string) (Identity, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Identity{}, fmt.Errorf("nats credentials: %w", err)
	}
	defer clear(raw)
	token, err := jwt.ParseDecoratedJWT(raw)
	if err != nil {
		return Identity{}, fmt.Errorf("nats credentials %s: %w: %w", path, ErrNotCredentials, err)
	}
	if _, err := nkeys.ParseDecoratedNKey(raw); err != nil {
		return Identity{}, fmt.Errorf("nats credentials %s: %w: no nkey seed: %w", path, ErrNotCredentials, err)
	}
	i, err := FromJWT(token)
	if err != nil {
		return Identity{}, fmt.Errorf("nats credentials %s: %w", path, err)
	}
	return i, nil
}

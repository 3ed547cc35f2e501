package identity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/claimcheck/claimcheck/pkg/embedded"
	"github.com/claimcheck/claimcheck/pkg/id"
)

// Files of an authority directory.
const (
	authorityFile = "authority.json" // the seeds (0600)
	issuedFile    = "issued.json"    // every identity issued to a file, and its revocation (0600)
	lockName      = ".lock"
)

// AccountName names the claimcheck account in its JWT.
const AccountName = "CLAIMCHECK"

// Authority is the signing material of one claimcheck installation: the
// operator, the system account, the claimcheck account and the scoped
// signing key of each role. It lives in a directory that only its owner
// can read (0700, files 0600): whoever reads it can issue any identity.
type Authority struct {
	dir      string
	operator nkeys.KeyPair
	system   nkeys.KeyPair
	account  nkeys.KeyPair
	signers  map[string]nkeys.KeyPair
}

type state struct {
	V        int               `json:"v"`
	Operator string            `json:"operator"`
	System   string            `json:"system"`
	Account  string            `json:"account"`
	Signers  map[string]string `json:"signers"`
}

// Issued is one identity issued to a file.
type Issued struct {
	Role      string `json:"role"`
	Name      string `json:"name"`
	Host      string `json:"host,omitempty"`
	User      string `json:"user"` // public key
	IssuedAt  int64  `json:"issued_at"`
	Expires   int64  `json:"expires,omitempty"`
	RevokedAt int64  `json:"revoked_at,omitempty"`
}

// ErrNoAuthority is wrapped by Load when dir holds no authority.
var ErrNoAuthority = errors.New("no NATS authority")

// Open loads the authority in dir, creating it (and dir, 0700) on first
// use; created reports that it did.
func Open(dir string) (a *Authority, created bool, err error) {
	if err := privateDir(dir); err != nil {
		return nil, false, err
	}
	unlock, err := lock(dir)
	if err != nil {
		return nil, false, err
	}
	defer unlock()
	a, err = Load(dir)
	if errors.Is(err, ErrNoAuthority) {
		a, err = create(dir)
		return a, err == nil, err
	}
	if err != nil {
		return nil, false, err
	}
	// A role added by a newer claimcheck gets its signing key now.
	if missing := a.missingSigners(); len(missing) > 0 {
		for _, r := range missing {
			if a.signers[r], err = nkeys.CreateAccount(); err != nil {
				return nil, false, err
			}
		}
		if err := a.save(); err != nil {
			return nil, false, err
		}
	}
	return a, false, nil
}

// Load loads the authority in dir.
func Load(dir string) (*Authority, error) {
	raw, err := os.ReadFile(filepath.Join(dir, authorityFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w in %s", ErrNoAuthority, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("nats authority: %w", err)
	}
	defer clear(raw)
	if err := private(filepath.Join(dir, authorityFile)); err != nil {
		return nil, err
	}
	var st state
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, fmt.Errorf("nats authority %s: %w", filepath.Join(dir, authorityFile), err)
	}
	if st.V != 1 {
		return nil, fmt.Errorf("nats authority %s: version %d, this claimcheck reads version 1", filepath.Join(dir, authorityFile), st.V)
	}
	a := &Authority{dir: dir, signers: map[string]nkeys.KeyPair{}}
	for _, k := range []struct {
		seed   string
		prefix nkeys.PrefixByte
		out    *nkeys.KeyPair
	}{{st.Operator, nkeys.PrefixByteOperator, &a.operator}, {st.System, nkeys.PrefixByteAccount, &a.system}, {st.Account,
		nkeys.PrefixByteAccount, &a.account}} {
		if *k.out, err = seedOf(k.seed, k.prefix); err != nil {
			return nil, fmt.Errorf("nats authority %s: %w", dir, err)
		}
	}
	for role, seed := range st.Signers {
		if err := CheckRole(role); err != nil {
			return nil, fmt.Errorf("nats authority %s: signer: %w", dir, err)
		}
		if a.signers[role], err = seedOf(seed, nkeys.PrefixByteAccount); err != nil {
			return nil, fmt.Errorf("nats authority %s: signer %s: %w", dir, role, err)
		}
	}
	return a, nil
}

func seedOf(seed string, want nkeys.PrefixByte) (nkeys.KeyPair, error) {
	kp, err := nkeys.FromSeed([]byte(seed))
	if err != nil {
		return nil, err
	}
	pub, err := kp.PublicKey()
	if err != nil {
		return nil, err
	}
	if nkeys.Prefix(pub) != want {
		return nil, fmt.Errorf("a %s seed where a %s seed belongs", nkeys.Prefix(pub), want)
	}
	return kp, nil
}

func create(dir string) (*Authority, error) {
	a := &Authority{dir: dir, signers: map[string]nkeys.KeyPair{}}
	var err error
	if a.operator, err = nkeys.CreateOperator(); err != nil {
		return nil, err
	}
	if a.system, err = nkeys.CreateAccount(); err != nil {
		return nil, err
	}
	if a.account, err = nkeys.CreateAccount(); err != nil {
		return nil, err
	}
	for _, r := range Roles {
		if a.signers[r], err = nkeys.CreateAccount(); err != nil {
			return nil, err
		}
	}
	return a, a.save()
}

func (a *Authority) missingSigners() []string {
	var out []string
	for _, r := range Roles {
		if a.signers[r] == nil {
			out = append(out, r)
		}
	}
	return out
}

func (a *Authority) save() error {
	st := state{V: 1, Signers: map[string]string{}}
	seed := func(kp nkeys.KeyPair) string { s, _ := kp.Seed(); return string(s) }
	st.Operator, st.System, st.Account = seed(a.operator), seed(a.system), seed(a.account)
	for r, kp := range a.signers {
		st.Signers[r] = seed(kp)
	}
	raw, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	defer clear(raw)
	return writeFile(filepath.Join(a.dir, authorityFile), raw)
}

// Dir is the authority's directory.
func (a *Authority) Dir() string { return a.dir }

// AccountKey is the claimcheck account's public key (its JetStream data
// lives under this name in a server's store).
func (a *Authority) AccountKey() string { pub, _ := a.account.PublicKey(); return pub }

// SystemKey is the system account's public key.
func (a *Authority) SystemKey() string { pub, _ := a.system.PublicKey(); return pub }

// OperatorJWT is the operator's self-signed JWT, naming the system account.
func (a *Authority) OperatorJWT() (string, error) {
	pub, _ := a.operator.PublicKey()
	oc := jwt.NewOperatorClaims(pub)
	oc.Name = "claimcheck"
	oc.SystemAccount = a.SystemKey()
	return oc.Encode(a.operator)
}

// SystemAccountJWT is the system account's JWT.
func (a *Authority) SystemAccountJWT() (string, error) {
	ac := jwt.NewAccountClaims(a.SystemKey())
	ac.Name = "SYS"
	return ac.Encode(a.operator)
}

// AccountJWT is the claimcheck account's JWT: JetStream without limits,
// the scoped signing key of every role with this claimcheck's permission
// templates, nothing for users without a role, and every revocation.
func (a *Authority) AccountJWT() (string, error) {
	ac := jwt.NewAccountClaims(a.AccountKey())
	ac.Name = AccountName
	ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: jwt.NoLimit, DiskStorage: jwt.NoLimit,
		Streams: jwt.NoLimit, Consumer: jwt.NoLimit}
	// A user signed by the account key itself (never issued) gets nothing.
	ac.DefaultPermissions = jwt.Permissions{Pub: jwt.Permission{Deny: []string{">"}}, Sub: jwt.Permission{Deny: []string{">"}}}
	for _, r := range Roles {
		scope := jwt.NewUserScope()
		scope.Key, _ = a.signers[r].PublicKey()
		scope.Role = r
		scope.Template.Permissions = Permissions(r)
		// A hook identity is a bearer token: the server does not ask it to
		// sign a nonce, so claimcheck-hook sends its event with its
		// CONNECT, without waiting for the server's greeting (on loopback
		// only; see oneshot.Options.Bearer). Whoever can read a hook's
		// credentials file holds the seed too, so this gives nothing away
		// there; over a network the hook speaks TLS.
		scope.Template.BearerToken = r == RoleHook
		ac.SigningKeys.AddScopedSigner(scope)
	}
	issued, err := a.List()
	if err != nil {
		return "", err
	}
	for _, is := range issued {
		if is.RevokedAt != 0 {
			ac.RevokeAt(is.User, time.Unix(is.RevokedAt, 0))
		}
	}
	return ac.Encode(a.operator)
}

// Request asks for an identity.
type Request struct {
	Role string
	// Name: the identity's name (default: the role). Ignored for hooks,
	// whose name is the host's token.
	Name string
	// Host: the agent host a hook identity is for (RoleHook only).
	Host string
	// Expires, when positive, bounds the credentials' life.
	Expires time.Duration
	// Record keeps the identity in the issued list, so that it can be
	// revoked by role and name; set it for credentials written to files.
	Record bool
}

// Creds are a user's JWT and seed.
type Creds struct {
	JWT      string
	Seed     []byte
	Identity Identity
}

// File is the credentials in the .creds format nats.go and `nsc` read.
func (c Creds) File() ([]byte, error) { return jwt.FormatUserConfig(c.JWT, c.Seed) }

// Option authenticates a nats.go connection as this identity and puts its
// replies under the identity's inbox prefix.
func (c Creds) Option() nats.Option {
	return func(o *nats.Options) error {
		if err := nats.UserJWTAndSeed(c.JWT, string(c.Seed))(o); err != nil {
			return err
		}
		return nats.CustomInboxPrefix(c.Identity.Inbox())(o)
	}
}

// Issue signs a new user for req with the role's scoped signing key.
func (a *Authority) Issue(req Request) (Creds, error) {
	if err := CheckRole(req.Role); err != nil {
		return Creds{}, err
	}
	i := Identity{Role: req.Role, Name: req.Name}
	switch {
	case req.Role == RoleHook:
		if req.Host == "" {
			return Creds{}, errors.New("a hook identity needs the host it is for")
		}
		tok, err := id.HostToken(req.Host)
		if err != nil {
			return Creds{}, err
		}
		i.Name, i.Host = tok, req.Host
	case req.Host != "":
		return Creds{}, fmt.Errorf("only hook identities are bound to a host (role %s)", req.Role)
	case i.Name == "":
		i.Name = req.Role
	}
	if err := id.CheckName(i.Name); err != nil {
		return Creds{}, fmt.Errorf("identity name: %w", err)
	}
	now := time.Now()
	var expires int64
	if req.Expires > 0 {
		expires = now.Add(req.Expires).Unix()
	}
	c, err := newUser(a.signers[req.Role], func(uc *jwt.UserClaims) {
		i.User = uc.Subject
		uc.Name = userName(i)
		uc.IssuerAccount = a.AccountKey()
		uc.UserPermissionLimits = jwt.UserPermissionLimits{} // the scope's template applies
		uc.Tags.Add("role:"+i.Role, "name:"+i.Name)
		uc.IssuedAt, uc.Expires = now.Unix(), expires
	})
	if err != nil {
		return Creds{}, err
	}
	c.Identity = i
	if req.Record {
		err := a.update(func(list []Issued) ([]Issued, error) {
			return append(list, Issued{Role: i.Role, Name: i.Name, Host: i.Host, User: i.User, IssuedAt: now.Unix(), Expires: expires}), nil
		})
		if err != nil {
			return Creds{}, err
		}
	}
	return c, nil
}

// newUser makes a user key pair and its JWT, shaped by claims and signed
// by signer.
func newUser(signer nkeys.KeyPair, claims func(*jwt.UserClaims)) (Creds, error) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		return Creds{}, err
	}
	defer kp.Wipe()
	pub, _ := kp.PublicKey()
	uc := jwt.NewUserClaims(pub)
	claims(uc)
	token, err := uc.Encode(signer)
	if err != nil {
		return Creds{}, err
	}
	seed, err := kp.Seed()
	if err != nil {
		return Creds{}, err
	}
	seed = append([]byte(nil), seed...) // kp.Wipe zeroes kp's own copy
	return Creds{JWT: token, Seed: seed}, nil
}

// SystemUser issues a short-lived user of the system account, to push
// account updates to running servers (Push).
func (a *Authority) SystemUser() (Creds, error) {
	c, err := newUser(a.system, func(uc *jwt.UserClaims) {
		uc.Name = "claimcheck-system"
		uc.Expires = time.Now().Add(10 * time.Minute).Unix()
	})
	if err != nil {
		return Creds{}, err
	}
	c.Identity = Identity{Role: "system", Name: "system"}
	return c, nil
}

// Revoke marks every recorded identity of role and name revoked at at,
// and returns how many it marked (0 when there is none, or all were
// already revoked). The account JWT (AccountJWT) then carries the
// revocations; Push delivers it to running servers.
func (a *Authority) Revoke(role, name string, at time.Time) (int, error) {
	n := 0
	err := a.update(func(list []Issued) ([]Issued, error) {
		for i := range list {
			if list[i].Role == role && list[i].Name == name && list[i].RevokedAt == 0 {
				// NATS revokes JWTs issued at or before this second.
				list[i].RevokedAt = max(at.Unix(), list[i].IssuedAt)
				n++
			}
		}
		return list, nil
	})
	return n, err
}

// List returns the recorded identities.
func (a *Authority) List() ([]Issued, error) {
	raw, err := os.ReadFile(filepath.Join(a.dir, issuedFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("issued identities: %w", err)
	}
	var list []Issued
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("issued identities %s: %w", filepath.Join(a.dir, issuedFile), err)
	}
	return list, nil
}

func (a *Authority) update(f func([]Issued) ([]Issued, error)) error {
	unlock, err := lock(a.dir)
	if err != nil {
		return err
	}
	defer unlock()
	list, err := a.List()
	if err != nil {
		return err
	}
	if list, err = f(list); err != nil {
		return err
	}
	slices.SortStableFunc(list, func(x, y Issued) int { return int(x.IssuedAt - y.IssuedAt) })
	raw, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(a.dir, issuedFile), raw)
}

// ClaimsUpdate is where a system-account user pushes an account JWT to the
// servers of a cluster (full resolvers store and share it).
const ClaimsUpdate = "$SYS.REQ.CLAIMS.UPDATE"

// Push delivers an account JWT to the running servers nc reaches; nc must
// be a system-account connection (SystemUser).
func Push(ctx context.Context, nc *nats.Conn, accountJWT string) error {
	m, err := nc.RequestWithContext(ctx, ClaimsUpdate, []byte(accountJWT))
	if err != nil {
		return fmt.Errorf("push the account to the NATS servers: %w", err)
	}
	var r struct {
		Data *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"data"`
		Error *struct {
			Code        int    `json:"code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(m.Data, &r); err != nil {
		return fmt.Errorf("push the account: unreadable answer %q: %w", m.Data, err)
	}
	if r.Error != nil {
		return fmt.Errorf("push the account: the server refused it: %s (%d)", r.Error.Description, r.Error.Code)
	}
	return nil
}

// WriteCreds writes c to path (0600; the directory is created 0700),
// replacing it atomically.
func WriteCreds(path string, c Creds) error {
	b, err := c.File()
	if err != nil {
		return err
	}
	defer clear(b)
	if err := privateDir(filepath.Dir(path)); err != nil {
		return err
	}
	return writeFile(path, b)
}

// privateDir creates dir 0700 or checks that an existing one is not open
// to other users.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s is readable by other users (mode %s): it holds NATS credentials; chmod 700 it", dir, fi.Mode().Perm())
	}
	return nil
}

// private refuses a secret file others can read.
func private(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s is readable by other users (mode %s): chmod 600 it", path, fi.Mode().Perm())
	}
	return nil
}

// writeFile writes b to path atomically, 0600, and syncs it.
func writeFile(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if err := tmp.Chmod(0o600); err != nil {
		_ = tmp.Close()
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// lock takes the directory's exclusive lock.
func lock(dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return func() { _ = f.Close() }, nil
}

// Server is what a NATS server needs to trust this authority: the
// operator, the system account, and the two accounts' JWTs, kept by a full
// resolver in resolverDir.
func (a *Authority) Server(resolverDir string) (*embedded.Auth, error) {
	op, sys, acc, err := a.jwts()
	if err != nil {
		return nil, err
	}
	return &embedded.Auth{OperatorJWT: op, SystemAccount: a.SystemKey(), ResolverDir: resolverDir,
		Accounts: map[string]string{a.SystemKey(): sys, a.AccountKey(): acc}}, nil
}

// jwts are what a server trusts: the operator's, the system account's and
// the claimcheck account's JWTs.
func (a *Authority) jwts() (op, sys, acc string, err error) {
	if op, err = a.OperatorJWT(); err != nil {
		return "", "", "", err
	}
	if sys, err = a.SystemAccountJWT(); err != nil {
		return "", "", "", err
	}
	if acc, err = a.AccountJWT(); err != nil {
		return "", "", "", err
	}
	return op, sys, acc, nil
}

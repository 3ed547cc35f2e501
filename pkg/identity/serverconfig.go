package identity

import (
	"fmt"
	"strconv"
	"strings"
)

// ServerConfig is the part of a nats-server configuration file that makes
// a server outside claimcheck up (a cluster node, a Kubernetes pod) trust
// this authority: the operator, the system account, a full account
// resolver keeping its JWTs in resolverDir (revocations pushed with
// `claimcheck creds push` reach it through the system account, and a
// cluster's full resolvers pass them on), and the two accounts preloaded so
// that a node starts with them. Include it from the node's own file:
//
//	include "auth.conf"
func (a *Authority) ServerConfig(resolverDir string) ([]byte, error) {
	if resolverDir == "" || strings.ContainsAny(resolverDir, "\"\n\\") {
		return nil, fmt.Errorf("resolver dir %q: must be a path without quotes, backslashes or newlines", resolverDir)
	}
	op, sys, acc, err := a.jwts()
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("# claimcheck's NATS authority (claimcheck creds server-config); regenerate, do not edit.\n")
	fmt.Fprintf(&b, "operator: %s\n", op)
	fmt.Fprintf(&b, "system_account: %s\n", a.SystemKey())
	b.WriteString("resolver: {\n  type: full\n")
	fmt.Fprintf(&b, "  dir: %s\n", strconv.Quote(resolverDir))
	// Never delete an account JWT on request: the claimcheck account holds
	// every revocation.
	b.WriteString("  allow_delete: false\n  interval: \"2m\"\n}\n")
	b.WriteString("resolver_preload: {\n")
	fmt.Fprintf(&b, "  %s: %s\n", a.SystemKey(), sys)
	fmt.Fprintf(&b, "  %s: %s\n", a.AccountKey(), acc)
	b.WriteString("}\n")
	return []byte(b.String()), nil
}

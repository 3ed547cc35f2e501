package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/identity"
)

func (a *app) credsCommand() *cobra.Command {
	creds := &cobra.Command{
		Use:   "creds",
		Short: "Issue, list and revoke the NATS identities of hosts, services and people",
		Long: `Every client of claimcheck's NATS has an identity with only the subjects its role
uses (hook, ingest, verifier, gatekeeper, rotator, operator, auditor, admin). The
NATS authority that signs them lives in <data-dir>/auth, which only its owner can
read: run these commands where it is (as the user running claimcheck up, or
wherever the fleet keeps it). Revocations reach running servers at once.`,
	}
	creds.AddCommand(a.credsInitCommand(), a.credsIssueCommand(), a.credsRevokeCommand(), a.credsListCommand(), a.credsPushCommand(),
		a.credsServerConfigCommand())
	creds.RunE = unknownSubcommand
	return creds
}

// unknownSubcommand makes a command group refuse what it does not know.
func unknownSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return cmd.Help()
	}
	return &exitError{ExitError, fmt.Errorf("unknown command %q for %q (see %s --help)", args[0], cmd.CommandPath(), cmd.CommandPath())}
}

// authority loads the NATS authority of the data directory.
func (a *app) authority() (*identity.Authority, error) {
	dir := filepath.Join(a.dataDir(), authSubdir)
	au, err := identity.Load(dir)
	if errors.Is(err, identity.ErrNoAuthority) {
		return nil, fmt.Errorf("%w: start `claimcheck up --data-dir %s` once to create it, or pass --data-dir", err, a.dataDir())
	}
	return au, err
}

func (a *app) credsIssueCommand() *cobra.Command {
	var role, name, host, out string
	var expires time.Duration
	cmd := &cobra.Command{
		Use:   "issue --role ROLE [--host H | --name N] [--out FILE]",
		Short: "Issue NATS credentials for a role (a .creds file)",
		Long: `issue signs a new identity of a role and writes its .creds file (0600) to --out,
or to standard output. A hook identity is bound to one agent host (--host): with it
claimcheck-hook and claimcheck claim can publish that host's events, gate requests and
claim requests and read that host's replies, nothing else. Give each host its own.`,
		Example: `  claimcheck creds issue --role hook --host dev1.example.com --out dev1.creds
  claimcheck creds issue --role verifier --name verifier-a --out verifier.creds
  claimcheck creds issue --role admin --expires 1h --out admin.creds`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := identity.CheckRole(role); err != nil {
				return &exitError{ExitError, fmt.Errorf("--role: %w", err)}
			}
			if role == identity.RoleHook && host == "" {
				return &exitError{ExitError, errors.New("--host: a hook identity is for one agent host; name it")}
			}
			au, err := a.authority()
			if err != nil {
				return &exitError{ExitError, err}
			}
			c, err := au.Issue(identity.Request{Role: role, Name: name, Host: host, Expires: expires, Record: true})
			if err != nil {
				return &exitError{ExitError, err}
			}
			if out == "" || out == "-" {
				b, err := c.File()
				if err != nil {
					return err
				}
				_, err = a.env.Stdout.Write(b)
				return err
			}
			if err := identity.WriteCreds(out, c); err != nil {
				return &exitError{ExitError, err}
			}
			fmt.Fprintf(a.env.Stdout, "issued %s identity %s (user %s) to %s\n", c.Identity.Role, c.Identity.Name, c.Identity.User, out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&role, "role", "", "role: "+strings.Join(identity.Roles, ", "))
	f.StringVar(&host, "host", "", "the agent host a hook identity is for")
	f.StringVar(&name, "name", "", "the identity's name (default: the role; hooks are named by their host)")
	f.StringVar(&out, "out", "", "write the .creds file here (0600); default: standard output")
	f.DurationVar(&expires, "expires", 0, "the credentials expire after this long (default: never; revoke them instead)")
	return cmd
}

func (a *app) credsRevokeCommand() *cobra.Command {
	var role, name, host string
	cmd := &cobra.Command{
		Use:   "revoke (--host H | --role ROLE [--name N])",
		Short: "Revoke an identity: its connections are closed and refused from now on",
		Long: `revoke marks every identity issued for a host (or a role and name) revoked and pushes
the account to the running NATS servers (--nats-url), which close its connections and
refuse it from then on; other identities keep working. A server that is not running
learns it at its next start.`,
		Example: `  claimcheck creds revoke --host dev1.example.com
  claimcheck creds revoke --role verifier --name verifier-a`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case host != "":
				if role != "" && role != identity.RoleHook {
					return &exitError{ExitError, errors.New("--host names a hook identity; leave out --role or say --role hook")}
				}
				tok, err := id.HostToken(host)
				if err != nil {
					return &exitError{ExitError, fmt.Errorf("--host: %w", err)}
				}
				role, name = identity.RoleHook, tok
			case role == "":
				return &exitError{ExitError, errors.New("say what to revoke: --host H, or --role ROLE [--name N]")}
			default:
				if err := identity.CheckRole(role); err != nil {
					return &exitError{ExitError, fmt.Errorf("--role: %w", err)}
				}
				if name == "" {
					name = role
				}
			}
			au, err := a.authority()
			if err != nil {
				return &exitError{ExitError, err}
			}
			n, err := au.Revoke(role, name, time.Now())
			if err != nil {
				return &exitError{ExitError, err}
			}
			if n == 0 {
				return &exitError{ExitError, fmt.Errorf(
					"no identity of role %s named %s is issued and not yet revoked (see claimcheck creds list)", role, name)}
			}
			fmt.Fprintf(a.env.Stdout, "revoked %d %s identit%s named %s\n", n, role, plural(n, "y", "ies"), name)
			return a.push(cmd.Context(), au)
		},
	}
	f := cmd.Flags()
	f.StringVar(&host, "host", "", "revoke the hook identities of this agent host")
	f.StringVar(&role, "role", "", "revoke the identities of this role")
	f.StringVar(&name, "name", "", "with --role: the identity's name (default: the role)")
	return cmd
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// push delivers the current account JWT to the running servers.
func (a *app) push(ctx context.Context, au *identity.Authority) error {
	acc, err := au.AccountJWT()
	if err != nil {
		return &exitError{ExitError, err}
	}
	sys, err := au.SystemUser()
	if err != nil {
		return &exitError{ExitError, err}
	}
	url := a.v.GetString("nats.url")
	nc, err := nats.Connect(url, nats.UserJWTAndSeed(sys.JWT, string(sys.Seed)), nats.Name("claimcheck-creds"), nats.Timeout(5*time.Second))
	if err != nil {
		fmt.Fprintf(a.env.Stdout,
			"no NATS server reached at %s (%v): the servers apply this when they next start (claimcheck up), or run `claimcheck creds push --nats-url …` when they run\n", url, err)
		return nil
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := identity.Push(ctx, nc, acc); err != nil {
		return &exitError{ExitError, err}
	}
	fmt.Fprintf(a.env.Stdout, "the NATS servers at %s apply it now\n", url)
	return nil
}

func (a *app) credsPushCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "push",
		Short: "Send the account (role permissions, revocations) to the running NATS servers",
		Long: `push sends the claimcheck account's JWT, with this claimcheck's role permissions and
every revocation, to the NATS servers at --nats-url through the system account.
claimcheck up does this itself at every start; run it for servers claimcheck does not
start (a NATS cluster) after an upgrade.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			au, err := a.authority()
			if err != nil {
				return &exitError{ExitError, err}
			}
			return a.push(cmd.Context(), au)
		},
	}
}

func (a *app) credsListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the identities issued to files, and which are revoked",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			au, err := a.authority()
			if err != nil {
				return &exitError{ExitError, err}
			}
			list, err := au.List()
			if err != nil {
				return &exitError{ExitError, err}
			}
			tw := tabwriter.NewWriter(a.env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ROLE\tNAME\tHOST\tISSUED\tSTATUS\tUSER")
			for _, is := range list {
				status := "active"
				switch {
				case is.RevokedAt != 0:
					status = "revoked " + time.Unix(is.RevokedAt, 0).UTC().Format(time.RFC3339)
				case is.Expires != 0 && time.Unix(is.Expires, 0).Before(time.Now()):
					status = "expired"
				case is.Expires != 0:
					status = "expires " + time.Unix(is.Expires, 0).UTC().Format(time.RFC3339)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", is.Role, is.Name, is.Host,
					time.Unix(is.IssuedAt, 0).UTC().Format(time.RFC3339), status, is.User)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if len(list) == 0 {
				fmt.Fprintln(a.env.Stderr, "no identity has been issued to a file yet")
			}
			return nil
		},
	}
}

func (a *app) credsInitCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "init",
		Short: "Create the NATS authority in --data-dir without starting a server (for a NATS cluster claimcheck up does not run)",
		Long: `init creates the NATS authority (operator, system account, claimcheck account and a
signing key per role) in <data-dir>/auth, 0700, as claimcheck up does at its first start.
It does nothing to an authority that exists. Then give the NATS servers
claimcheck creds server-config, and every service and host its credentials with
claimcheck creds issue.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			dir := filepath.Join(a.dataDir(), authSubdir)
			au, created, err := identity.Open(dir)
			if err != nil {
				return &exitError{ExitError, err}
			}
			if created {
				fmt.Fprintf(a.env.Stdout, "created the NATS authority in %s (account %s); keep it private: "+
					"whoever reads it can issue any identity\n", au.Dir(), au.AccountKey())
			} else {
				fmt.Fprintf(a.env.Stdout, "the NATS authority in %s exists (account %s); nothing changed\n", au.Dir(), au.AccountKey())
			}
			return nil
		},
	}
}

func (a *app) credsServerConfigCommand() *cobra.Command {
	var resolverDir, out string
	cmd := &cobra.Command{
		Use:   "server-config [--resolver-dir DIR] [--out FILE]",
		Short: "Print the nats-server configuration that makes a server trust this authority (include it from the server's file)",
		Long: `server-config prints a nats-server configuration fragment: the operator's JWT, the
system account, a full account resolver keeping account JWTs in --resolver-dir on the
server, and the claimcheck and system accounts preloaded. Include it from each NATS
node's configuration (include "auth.conf"). It holds no secret (JWTs are public), but it
decides whom the servers trust: give it to them the way you give them their config.
After revoking or upgrading, claimcheck creds push brings running servers up to date.`,
		Example: `  claimcheck creds server-config --resolver-dir /data/resolver --out auth.conf
  kubectl -n claimcheck create secret generic claimcheck-nats-auth --from-file=auth.conf`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			au, err := a.authority()
			if err != nil {
				return &exitError{ExitError, err}
			}
			b, err := au.ServerConfig(resolverDir)
			if err != nil {
				return &exitError{ExitError, fmt.Errorf("--resolver-dir: %w", err)}
			}
			if out == "" || out == "-" {
				_, err = a.env.Stdout.Write(b)
				return err
			}
			if err := writeAtomic(out, b, 0o644, 0o755); err != nil {
				return &exitError{ExitError, err}
			}
			fmt.Fprintf(a.env.Stdout, "wrote the NATS servers' trust configuration to %s\n", out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&resolverDir, "resolver-dir", "/data/resolver",
		"where each server keeps account JWTs (a path on the server, on persistent storage)")
	f.StringVar(&out, "out", "", "write it here; default: standard output")
	return cmd
}

// Command claimcheck is claimcheck's command line: run everything on one
// machine (`claimcheck up`), install the agent hooks, and read or verify the
// ledger. See package cli.
package main

import (
	"context"
	"os"

	"github.com/claimcheck/claimcheck/cmd/claimcheck/internal/cli"
)

func main() {
	os.Exit(cli.Main(context.Background(), os.Args[1:], cli.Env{Getenv: os.Getenv, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}))
}

// Command claimcheck-hook is the hook Claude Code (or another agent CLI) runs
// for every event: it records the event in claimcheck's ledger. See package
// hook.
package main

import (
	"context"
	"os"

	"github.com/claimcheck/claimcheck/cmd/claimcheck-hook/internal/hook"
)

func main() {
	os.Exit(hook.Main(context.Background(), os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}

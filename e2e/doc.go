// Package e2e holds claimcheck's black-box tests: they build the real
// binaries, start `claimcheck up` (or a standalone service) as a child
// process on a temporary data directory and a free port, and drive it the
// way Claude Code and a user would.
package e2e

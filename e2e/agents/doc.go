// Package agents runs the real, published agent CLIs (Claude Code, pinned in
// clients.json) against claimcheck's built binaries, offline: each test
// process re-executes itself inside a loopback-only network namespace, where
// a scripted Anthropic Messages API served by the test plays the model. It
// holds nothing but tests.
package agents

// Package agents runs the real, published agent CLIs (Claude Code, Codex and
// Gemini CLI, pinned in clients.json) against claimcheck's built binaries,
// offline: each test process re-executes itself inside a loopback-only
// network namespace, where a scripted model served by the test (the
// Anthropic Messages API for Claude Code, the OpenAI Responses API for
// Codex, the Gemini API for Gemini CLI) plays the model. It holds nothing
// but tests.
package agents

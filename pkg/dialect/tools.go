package dialect

import "strings"

// Inspected reports whether the post-tool firewall inspects the results of
// tool (claimcheck-hook asks the gatekeeper about them, which scans them
// with pkg/inject): the tools whose results bring outside or file content
// into the agent's context (Read, WebFetch, WebSearch, MCP tools, shell output, a
// sub-agent's answer, and Gemini CLI's counterparts). Edits and writes
// echo what the agent itself wrote and are not inspected.
func Inspected(tool string) bool {
	if strings.HasPrefix(tool, "mcp__") {
		return true
	}
	switch tool {
	case "Read", "NotebookRead", "WebFetch", "WebSearch", "Bash", "BashOutput", "Grep", "Task", "Agent",
		"read_file", "read_many_files", "web_fetch", "google_web_search", "run_shell_command", "shell", "search_file_content":
		return true
	}
	return false
}

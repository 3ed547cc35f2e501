// Package tools pins the development tools (golangci-lint) run with
// `go tool -modfile=tools/go.mod`. It is not part of the workspace.
package tools

// Package tools pins the development tools (golangci-lint) run with
// `go tool -modfile=tools/go.mod`, and holds cmd/ociimage, which `make images`
// builds from here. It is not part of the workspace: its dependencies
// (golangci-lint's, go-containerregistry) stay out of the product modules.
package tools

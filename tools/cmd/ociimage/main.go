// Command ociimage builds OCI images of claimcheck's static binaries without
// a container daemon (`make images`; see docs/images.md). Each image is one
// layer on nothing: the binary at /usr/local/bin/<name>, a minimal
// /etc/passwd and /etc/group naming the non-root user 65532, its home and
// /tmp. Timestamps come from -epoch, so the same binaries give the same
// digests.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ociimage:", err)
		os.Exit(1)
	}
}

// run parses args, builds the images and prints each one's reference and
// digest to stdout.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cfg, err := parseFlags(args, getenv)
	if err != nil {
		return err
	}
	built, err := Build(ctx, cfg)
	if err != nil {
		return err
	}
	for _, b := range built {
		fmt.Fprintf(stdout, "%s %s\n", b.Ref, b.Digest)
	}
	fmt.Fprintf(stdout, "OCI layout: %s\n", cfg.layoutDir())
	return nil
}

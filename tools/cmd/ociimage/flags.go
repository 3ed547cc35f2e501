package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// parseFlags reads the configuration from args; -epoch defaults to
// $SOURCE_DATE_EPOCH.
func parseFlags(args []string, getenv func(string) string) (Config, error) {
	cfg := DefaultConfig()
	fs := flag.NewFlagSet("ociimage", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	names := fs.String("names", strings.Join(cfg.Names, ","), "binaries (separated by commas or spaces) in -bin to make images of")
	epoch := fs.String("epoch", getenv("SOURCE_DATE_EPOCH"), "Unix time of every timestamp in the images (default $SOURCE_DATE_EPOCH)")
	fs.StringVar(&cfg.BinDir, "bin", cfg.BinDir, "directory with the static binaries")
	fs.StringVar(&cfg.OutDir, "out", cfg.OutDir, "output directory: <out>/oci (one OCI layout) and <out>/<name>.tar")
	fs.StringVar(&cfg.Repository, "repository", cfg.Repository, "images are named <repository>/<name>:<version>")
	fs.StringVar(&cfg.Version, "version", cfg.Version, "image tag and org.opencontainers.image.version")
	fs.StringVar(&cfg.Source, "source", cfg.Source, "org.opencontainers.image.source")
	fs.StringVar(&cfg.Revision, "revision", cfg.Revision, "org.opencontainers.image.revision (the commit)")
	fs.StringVar(&cfg.Arch, "arch", runtime.GOARCH, "GOARCH the binaries were built for")
	fs.BoolVar(&cfg.DockerArchives, "docker-archives", cfg.DockerArchives, "also write <out>/<name>.tar for docker load / podman load")
	var usage strings.Builder
	fs.SetOutput(&usage)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.PrintDefaults()
		}
		return Config{}, fmt.Errorf("%w\n%s", err, usage.String())
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	cfg.Names = strings.FieldsFunc(*names, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
	if *epoch == "" {
		return Config{}, errors.New("no -epoch and no $SOURCE_DATE_EPOCH: the images' timestamps must be fixed")
	}
	secs, err := strconv.ParseInt(*epoch, 10, 64)
	if err != nil {
		return Config{}, fmt.Errorf("-epoch %q: not a Unix time in seconds", *epoch)
	}
	cfg.Created = time.Unix(secs, 0).UTC()
	return cfg, cfg.Validate()
}

package main

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's user: the non-root uid and gid distroless images use.
const (
	nonrootID   = 65532
	nonrootName = "nonroot"
	nonrootHome = "/home/nonroot"
	binDir      = "/usr/local/bin"
)

// Annotation and label keys (OCI image spec, annotations.md).
const (
	annotationRefName  = "org.opencontainers.image.ref.name"
	labelVersion       = "org.opencontainers.image.version"
	labelSource        = "org.opencontainers.image.source"
	labelRevision      = "org.opencontainers.image.revision"
	labelTitle         = "org.opencontainers.image.title"
	labelCreated       = "org.opencontainers.image.created"
	defaultRepository  = "claimcheck"
	defaultSource      = "https://github.com/claimcheck/claimcheck"
	layoutSubdirectory = "oci"
)

// Config says which images to build and how to label them.
type Config struct {
	BinDir     string   // the static binaries
	Names      []string // binaries in BinDir, one image each
	OutDir     string   // OutDir/oci is the OCI layout; OutDir/<name>.tar the docker archives
	Repository string   // images are named Repository/<name>:Version
	Version    string
	Source     string
	Revision   string
	Created    time.Time // every timestamp in the images
	Arch       string    // GOARCH of the binaries
	// DockerArchives also writes OutDir/<name>.tar (docker load, podman load).
	DockerArchives bool
}

// DefaultConfig is the configuration of `make images` but for the version,
// revision and time, which the Makefile passes.
func DefaultConfig() Config {
	return Config{
		BinDir:         "bin",
		Names:          []string{"claimcheck", "ingest", "verifier", "gatekeeper", "rotator"},
		OutDir:         filepath.Join("bin", "images"),
		Repository:     defaultRepository,
		Source:         defaultSource,
		DockerArchives: true,
	}
}

// Validate reports every problem of the configuration at once.
func (c Config) Validate() error {
	var errs []error
	if len(c.Names) == 0 {
		errs = append(errs, errors.New("no image names"))
	}
	for _, n := range c.Names {
		if n == "" || n != filepath.Base(n) || n == "." || n == ".." {
			errs = append(errs, fmt.Errorf("image name %q: want a binary's file name", n))
		} else if _, err := name.NewTag(c.ref(n)); err != nil {
			errs = append(errs, fmt.Errorf("image %s: %w", c.ref(n), err))
		}
	}
	if c.Version == "" {
		errs = append(errs, errors.New("no version"))
	}
	if c.BinDir == "" || c.OutDir == "" {
		errs = append(errs, errors.New("no binary or output directory"))
	}
	if c.Created.IsZero() {
		errs = append(errs, errors.New("no creation time"))
	}
	if _, ok := elfMachines[c.Arch]; !ok {
		errs = append(errs, fmt.Errorf("architecture %q: not one of %v", c.Arch, slices.Sorted(mapsKeys(elfMachines))))
	}
	return errors.Join(errs...)
}

func (c Config) ref(n string) string { return c.Repository + "/" + n + ":" + c.Version }

func (c Config) layoutDir() string { return filepath.Join(c.OutDir, layoutSubdirectory) }

// Built is one image written.
type Built struct {
	Name   string
	Ref    string  // Repository/name:Version, the layout's ref.name annotation
	Digest v1.Hash // the manifest's digest
}

// Build checks that every binary is static and of cfg.Arch, then writes
// the OCI layout afresh (and the docker archives) and returns the images
// in cfg.Names order.
func Build(ctx context.Context, cfg Config) ([]Built, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	imgs := make([]v1.Image, len(cfg.Names))
	for i, n := range cfg.Names {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		bin := filepath.Join(cfg.BinDir, n)
		if err := checkStatic(bin, cfg.Arch); err != nil {
			return nil, err
		}
		img, err := cfg.image(n, bin)
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", n, err)
		}
		imgs[i] = img
	}
	dir := cfg.layoutDir()
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return nil, fmt.Errorf("oci layout %s: %w", dir, err)
	}
	out := make([]Built, len(cfg.Names))
	for i, n := range cfg.Names {
		ref := cfg.ref(n)
		if err := p.AppendImage(imgs[i], layout.WithAnnotations(map[string]string{annotationRefName: ref}),
			layout.WithPlatform(v1.Platform{OS: "linux", Architecture: cfg.Arch})); err != nil {
			return nil, fmt.Errorf("oci layout %s: %s: %w", dir, ref, err)
		}
		d, err := imgs[i].Digest()
		if err != nil {
			return nil, err
		}
		out[i] = Built{Name: n, Ref: ref, Digest: d}
		if cfg.DockerArchives {
			tag, err := name.NewTag(ref)
			if err != nil {
				return nil, err
			}
			tarPath := filepath.Join(cfg.OutDir, n+".tar")
			if err := tarball.WriteToFile(tarPath, tag, imgs[i]); err != nil {
				return nil, fmt.Errorf("docker archive %s: %w", tarPath, err)
			}
		}
	}
	return out, nil
}

// image is the image of the binary at bin: one layer on nothing, run as
// nonroot.
func (c Config) image(n, bin string) (v1.Image, error) {
	content, err := c.layerTar(n, bin)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(content)), nil },
		tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	created := v1.Time{Time: c.Created}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{Layer: layer, MediaType: types.OCILayer,
		History: v1.History{Created: created, CreatedBy: "ociimage: " + n + " (make images)"}})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Created, cf.OS, cf.Architecture, cf.Author = created, "linux", c.Arch, ""
	entry := binDir + "/" + n
	cf.Config = v1.Config{
		User:       fmt.Sprintf("%d:%d", nonrootID, nonrootID),
		Entrypoint: []string{entry},
		WorkingDir: nonrootHome,
		Env:        []string{"PATH=" + binDir + ":/usr/bin:/bin", "HOME=" + nonrootHome},
		Labels: map[string]string{
			labelVersion:  c.Version,
			labelSource:   c.Source,
			labelRevision: c.Revision,
			labelTitle:    n,
			labelCreated:  c.Created.Format(time.RFC3339),
		},
	}
	return mutate.ConfigFile(img, cf)
}

// layerTar is the layer's uncompressed tar: directories, /etc/passwd,
// /etc/group and the binary, every entry stamped c.Created.
func (c Config) layerTar(n, bin string) ([]byte, error) {
	exe, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:%s:%s:/sbin/nologin\n",
		nonrootName, nonrootID, nonrootID, nonrootName, nonrootHome)
	group := fmt.Sprintf("root:x:0:\n%s:x:%d:\n", nonrootName, nonrootID)
	type entry struct {
		path     string
		mode     int64
		owner    int
		contents []byte // nil: a directory
	}
	entries := []entry{
		{path: "etc/", mode: 0o755},
		{path: "etc/group", mode: 0o644, contents: []byte(group)},
		{path: "etc/passwd", mode: 0o644, contents: []byte(passwd)},
		{path: "home/", mode: 0o755},
		{path: "home/" + nonrootName + "/", mode: 0o700, owner: nonrootID},
		{path: "tmp/", mode: 0o1777},
		{path: "usr/", mode: 0o755},
		{path: "usr/local/", mode: 0o755},
		{path: "usr/local/bin/", mode: 0o755},
		{path: "usr/local/bin/" + n, mode: 0o755, contents: exe},
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	mtime := c.Created.Truncate(time.Second)
	for _, e := range entries {
		h := &tar.Header{Name: e.path, Mode: e.mode, Uid: e.owner, Gid: e.owner, ModTime: mtime, Format: tar.FormatPAX,
			Typeflag: tar.TypeDir}
		if e.contents != nil {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.contents))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.contents); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func mapsKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

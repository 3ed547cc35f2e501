package main

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// buildStatic builds a tiny Go program with CGO_ENABLED=0 into dir/name.
func buildStatic(t *testing.T, dir, name string) {
	t.Helper()
	src := t.TempDir()
	files := map[string]string{
		"go.mod":  "module example.com/hello\n\ngo 1.22\n",
		"main.go": "package main\n\nimport \"os\"\n\nfunc main() { _, _ = os.Stdout.WriteString(\"hello\\n\") }\n",
	}
	for f, s := range files {
		if err := os.WriteFile(filepath.Join(src, f), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.CommandContext(t.Context(), "go", "build", "-trimpath", "-o", filepath.Join(dir, name), ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
}

func testConfig(bin, out string) Config {
	cfg := DefaultConfig()
	cfg.BinDir, cfg.OutDir, cfg.Names = bin, out, []string{"hello", "hello2"}
	cfg.Version, cfg.Revision = "v1.2.3-4-gabcdef0", "abcdef0123456789abcdef0123456789abcdef01"
	cfg.Created = time.Unix(1764000000, 0).UTC()
	cfg.Arch = runtime.GOARCH
	return cfg
}

func TestBuild(t *testing.T) {
	bin := t.TempDir()
	buildStatic(t, bin, "hello")
	exe, err := os.ReadFile(filepath.Join(bin, "hello"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "hello2"), exe, 0o755); err != nil { //nolint:gosec // an executable
		t.Fatal(err)
	}
	out1, out2 := t.TempDir(), t.TempDir()
	cfg := testConfig(bin, out1)
	built1, err := Build(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.OutDir = out2
	built2, err := Build(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(built1, built2); diff != "" {
		t.Errorf("two builds of the same binaries differ (-first +second):\n%s", diff)
	}
	for _, f := range []string{filepath.Join("oci", "index.json"), "hello.tar"} {
		a, _ := os.ReadFile(filepath.Join(out1, f))
		b, _ := os.ReadFile(filepath.Join(out2, f))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s: not written, or not the same bytes in two builds", f)
		}
	}

	p, err := layout.FromPath(filepath.Join(out1, "oci"))
	if err != nil {
		t.Fatal(err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != len(cfg.Names) {
		t.Fatalf("index holds %d manifests, want %d", len(im.Manifests), len(cfg.Names))
	}
	for i, desc := range im.Manifests {
		n := cfg.Names[i]
		t.Run(n, func(t *testing.T) {
			wantRef := "claimcheck/" + n + ":v1.2.3-4-gabcdef0"
			if got := desc.Annotations[annotationRefName]; got != wantRef || built1[i].Ref != wantRef {
				t.Errorf("ref.name %q (printed %q), want %q", got, built1[i].Ref, wantRef)
			}
			if desc.Digest != built1[i].Digest {
				t.Errorf("layout digest %s, printed %s", desc.Digest, built1[i].Digest)
			}
			img, err := idx.Image(desc.Digest)
			if err != nil {
				t.Fatal(err)
			}
			checkImage(t, img, cfg, n, exe)
		})
	}

	// The docker archive holds the same image (config and layer; the
	// manifest is docker load's own) under the same name.
	tag, err := name.NewTag(built1[0].Ref)
	if err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(filepath.Join(out1, "hello.tar"), &tag)
	if err != nil {
		t.Fatal(err)
	}
	first, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := img.ConfigName()
	b, _ := first.ConfigName()
	if a != b {
		t.Errorf("docker archive config %s, layout %s", a, b)
	}
}

// checkImage checks the config and the layer of the image of binary n,
// whose bytes are exe.
func checkImage(t *testing.T, img v1.Image, cfg Config, n string, exe []byte) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	entry := "/usr/local/bin/" + n
	want := v1.Config{User: "65532:65532", Entrypoint: []string{entry}, WorkingDir: "/home/nonroot"}
	got := v1.Config{User: cf.Config.User, Entrypoint: cf.Config.Entrypoint, WorkingDir: cf.Config.WorkingDir}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	if u := strings.Split(cf.Config.User, ":")[0]; u == "" || u == "0" || u == "root" {
		t.Errorf("user %q is root", cf.Config.User)
	}
	if cf.OS != "linux" || cf.Architecture != runtime.GOARCH || !cf.Created.Equal(cfg.Created) {
		t.Errorf("os %s, architecture %s, created %s", cf.OS, cf.Architecture, cf.Created)
	}
	if l := cf.Config.Labels; l[labelVersion] != cfg.Version || l[labelRevision] != cfg.Revision || l[labelSource] != cfg.Source {
		t.Errorf("labels %v", l)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers (%v), want 1", len(layers), err)
	}
	files := layerFiles(t, layers[0])
	h, ok := files[strings.TrimPrefix(entry, "/")]
	if !ok {
		t.Fatalf("entrypoint %s not in the layer (%d entries)", entry, len(files))
	}
	if h.Typeflag != tar.TypeReg || h.Mode&0o111 != 0o111 {
		t.Errorf("entrypoint: type %c mode %o, want an executable file", h.Typeflag, h.Mode)
	}
	if !bytes.Equal(h.data, exe) {
		t.Errorf("entrypoint: %d bytes, not the binary's %d", len(h.data), len(exe))
	}
	f, err := elf.NewFile(bytes.NewReader(h.data))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary in the layer has a program interpreter")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary in the layer needs %v", libs)
	}
	if p := files["etc/passwd"]; p == nil || !strings.Contains(string(p.data), "nonroot:x:65532:65532:") {
		t.Error("/etc/passwd does not name nonroot 65532")
	}
	if g := files["etc/group"]; g == nil || !strings.Contains(string(g.data), "nonroot:x:65532:") {
		t.Error("/etc/group does not name nonroot 65532")
	}
	if tmp := files["tmp/"]; tmp == nil || tmp.Mode != 0o1777 {
		t.Errorf("/tmp: %+v, want a directory 1777", tmp)
	}
	for p, h := range files {
		if !h.ModTime.Equal(cfg.Created) {
			t.Errorf("%s: mtime %s, want %s", p, h.ModTime, cfg.Created)
		}
	}
}

type layerFile struct {
	*tar.Header
	data []byte
}

func layerFiles(t *testing.T, l v1.Layer) map[string]*layerFile {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Close() }()
	files := map[string]*layerFile{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = &layerFile{Header: h, data: data}
	}
}

// dynamicBinary is a dynamically linked executable of this machine, or ""
// if none of the usual ones is.
func dynamicBinary() string {
	for _, p := range []string{"/bin/true", "/usr/bin/true", "/bin/sh", "/usr/bin/env"} {
		f, err := elf.Open(p)
		if err != nil {
			continue
		}
		for _, pr := range f.Progs {
			if pr.Type == elf.PT_INTERP {
				_ = f.Close()
				return p
			}
		}
		_ = f.Close()
	}
	return ""
}

func TestBuildRefusesDynamicBinary(t *testing.T) {
	dyn := dynamicBinary()
	if dyn == "" {
		t.Skip("no dynamically linked executable on this machine")
	}
	bin, out := t.TempDir(), t.TempDir()
	exe, err := os.ReadFile(dyn)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "hello"), exe, 0o755); err != nil { //nolint:gosec // an executable
		t.Fatal(err)
	}
	cfg := testConfig(bin, out)
	cfg.Names = []string{"hello"}
	_, err = Build(t.Context(), cfg)
	if !errors.Is(err, ErrNotStatic) || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
		t.Fatalf("Build of %s: %v, want ErrNotStatic saying how to build it", dyn, err)
	}
	if _, err := os.Stat(filepath.Join(out, "oci")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a layout was written for a refused binary: %v", err)
	}
}

func TestParseFlags(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		wantErr string
	}{
		{name: "epoch from the environment", args: []string{"-version", "v1"}, env: map[string]string{"SOURCE_DATE_EPOCH": "1764000000"}},
		{name: "epoch flag", args: []string{"-version", "v1", "-epoch", "0"}},
		{name: "no epoch", args: []string{"-version", "v1"}, wantErr: "SOURCE_DATE_EPOCH"},
		{name: "bad epoch", args: []string{"-version", "v1", "-epoch", "yesterday"}, wantErr: "Unix time"},
		{name: "no version", args: []string{"-epoch", "1"}, wantErr: "no version"},
		{name: "bad tag", args: []string{"-version", "v1/2", "-epoch", "1"}, wantErr: "claimcheck/claimcheck:v1/2"},
		{name: "path as name", args: []string{"-version", "v1", "-epoch", "1", "-names", "../x"}, wantErr: "file name"},
		{name: "unknown arch", args: []string{"-version", "v1", "-epoch", "1", "-arch", "mips"}, wantErr: "architecture"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseFlags(tt.args, env(tt.env))
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("parseFlags(%q): %v, want error containing %q", tt.args, err, tt.wantErr)
			}
		})
	}
}

func TestRun(t *testing.T) {
	bin, out := t.TempDir(), t.TempDir()
	buildStatic(t, bin, "hello")
	var stdout bytes.Buffer
	err := run(context.Background(), []string{"-bin", bin, "-out", out, "-names", "hello", "-version", "v9", "-docker-archives=false"},
		func(k string) string { return map[string]string{"SOURCE_DATE_EPOCH": "1764000000"}[k] }, &stdout)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stdout.String(), "claimcheck/hello:v9 sha256:") {
		t.Errorf("output %q, want the ref and digest", stdout.String())
	}
	if _, err := os.Stat(filepath.Join(out, "hello.tar")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("-docker-archives=false wrote a tarball: %v", err)
	}
}

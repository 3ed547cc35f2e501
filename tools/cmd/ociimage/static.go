package main

import (
	"debug/elf"
	"errors"
	"fmt"
)

// ErrNotStatic is returned for a binary that needs a dynamic loader or
// shared libraries: an image with nothing but the binary cannot run it.
// Build it with CGO_ENABLED=0 (make build does).
var ErrNotStatic = errors.New("not statically linked")

// elfMachines maps the GOARCH values images are made for to their ELF
// machine.
var elfMachines = map[string]elf.Machine{
	"amd64":   elf.EM_X86_64,
	"arm64":   elf.EM_AARCH64,
	"arm":     elf.EM_ARM,
	"386":     elf.EM_386,
	"ppc64le": elf.EM_PPC64,
	"riscv64": elf.EM_RISCV,
	"s390x":   elf.EM_S390,
}

// checkStatic checks that path is an ELF executable for arch with no
// program interpreter (PT_INTERP) and no needed libraries (DT_NEEDED).
func checkStatic(path, arch string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s: not an ELF executable: %w", path, err)
	}
	defer func() { _ = f.Close() }()
	if want := elfMachines[arch]; f.Machine != want {
		return fmt.Errorf("%s: built for %s, not %s (%s)", path, f.Machine, arch, want)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s: %w: it has a program interpreter (PT_INTERP); build it with CGO_ENABLED=0", path, ErrNotStatic)
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		return fmt.Errorf("%s: dynamic section: %w", path, err)
	}
	if len(libs) > 0 {
		return fmt.Errorf("%s: %w: it needs %v (DT_NEEDED); build it with CGO_ENABLED=0", path, ErrNotStatic, libs)
	}
	return nil
}

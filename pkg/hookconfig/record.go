package hookconfig

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/schemas"
)

// RecordFile is the install record's name in claimcheck-hook's state
// directory.
const RecordFile = "installed-hooks.json"

// Installation is what `claimcheck hooks install` wrote: the settings file,
// the hook command and the events it handed to it, and the digest of those
// handlers (Installed). claimcheck-hook and `claimcheck hooks verify` read
// it to tell a changed hook command from the one install wrote.
type Installation struct {
	V           int      `json:"v"`
	Settings    string   `json:"settings"`
	Command     string   `json:"command"`
	Events      []string `json:"events"`
	Handlers    string   `json:"handlers"`
	InstalledAt string   `json:"installed_at"`
}

// NewInstallation describes an install of command into settings for every
// event of schemas.HookEvents.
func NewInstallation(settings, command, at string) Installation {
	in := Installation{V: 1, Settings: settings, Command: command, Handlers: Installed(command), InstalledAt: at}
	for _, ev := range schemas.HookEvents {
		in.Events = append(in.Events, ev.Name)
	}
	return in
}

// Expect is what the installation says the configuration should hold.
func (in Installation) Expect() Expect { return Expect{Command: in.Command} }

// LoadInstallation reads an install record; ok is false when there is none.
func LoadInstallation(path string) (in Installation, ok bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return in, false, nil
	}
	if err != nil {
		return in, false, err
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return in, false, err
	}
	if err := json.Unmarshal(data, &in, json.RejectUnknownMembers(false)); err != nil {
		return in, false, fmt.Errorf("%s: %w", path, err)
	}
	switch {
	case in.V != 1:
		return in, false, fmt.Errorf("%s: v %d, want 1", path, in.V)
	case in.Command == "":
		return in, false, fmt.Errorf("%s: no command", path)
	}
	return in, true, nil
}

// WriteInstallation writes an install record (0600 in a 0700 directory,
// replaced atomically).
func WriteInstallation(path string, in Installation) error {
	data, err := json.Marshal(in, json.Deterministic(true))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".installed-*.json")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

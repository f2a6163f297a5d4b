package browser

import (
	"fmt"
	"os"
	"path/filepath"
)

// ProfilePrefix starts the name of every directory this package creates under
// the system temporary directory, so that tests and operators can find leaks.
const ProfilePrefix = "chromekeeper-"

// Profile is a private directory for one Chrome: its user data directory and
// the TMPDIR it runs with (Chrome leaves scoped_dir* and similar files there
// after a SIGKILL). A relaunch after a crash reuses the Profile, so cookies,
// storage, caches and service-worker registrations survive.
type Profile struct {
	Root string
}

// maxTempDir is the longest temporary directory a profile is created in:
// Chrome puts its singleton socket at TMPDIR/org.chromium.Chromium.XXXXXX/
// SingletonSocket, and a Unix socket path has at most 107 bytes.
const maxTempDir = 40

// NewProfile creates a fresh profile under the system temporary directory,
// or under /tmp when that one is too long for Chrome's sockets.
func NewProfile() (*Profile, error) {
	parent := os.TempDir()
	if len(parent) > maxTempDir {
		parent = "/tmp"
	}
	root, err := os.MkdirTemp(parent, ProfilePrefix)
	if err != nil {
		return nil, fmt.Errorf("create profile: %w", err)
	}
	p := &Profile{Root: root}
	for _, dir := range []string{p.UserDataDir(), p.TempDir()} {
		if err := os.Mkdir(dir, 0o700); err != nil {
			_ = os.RemoveAll(root)
			return nil, fmt.Errorf("create profile: %w", err)
		}
	}
	return p, nil
}

// UserDataDir is Chrome's --user-data-dir.
func (p *Profile) UserDataDir() string { return filepath.Join(p.Root, "user-data") }

// TempDir is Chrome's TMPDIR.
func (p *Profile) TempDir() string { return filepath.Join(p.Root, "tmp") }

// Remove deletes the profile and everything in it.
func (p *Profile) Remove() error {
	if err := os.RemoveAll(p.Root); err != nil {
		return fmt.Errorf("remove profile: %w", err)
	}
	return nil
}

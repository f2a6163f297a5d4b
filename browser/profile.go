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

const (
	// maxSocketPath is the longest Unix socket path (sun_path holds 108 bytes).
	maxSocketPath = 107
	// singletonSocket is where, under its TMPDIR, Chrome puts its singleton socket.
	singletonSocket = "/org.chromium.Chromium.XXXXXX/SingletonSocket"
)

// NewProfile creates a fresh profile under the system temporary directory,
// or under /tmp when that one is too long for Chrome's singleton socket
// (Chrome aborts at start with "Socket path too long").
func NewProfile() (*Profile, error) {
	root, err := os.MkdirTemp("", ProfilePrefix)
	if err == nil && len((&Profile{Root: root}).TempDir())+len(singletonSocket) > maxSocketPath {
		_ = os.Remove(root)
		root, err = os.MkdirTemp("/tmp", ProfilePrefix)
	}
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

// TempDir is Chrome's TMPDIR, short for the sockets Chrome puts in it.
func (p *Profile) TempDir() string { return filepath.Join(p.Root, "t") }

// Remove deletes the profile and everything in it.
func (p *Profile) Remove() error {
	if err := os.RemoveAll(p.Root); err != nil {
		return fmt.Errorf("remove profile: %w", err)
	}
	processGuard.disown(p.Root)
	return nil
}

package browser

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/go-rod/rod/lib/launcher"
)

// ErrNotFound reports that no Chrome or Chromium binary could be found.
var ErrNotFound = errors.New("no Chrome or Chromium found")

// InstallHint tells a user how to make a browser available.
const InstallHint = "install one (Debian/Ubuntu: apt-get install -y chromium) or point --chrome-path / CHROME_PATH at a Chrome binary"

// debianWrappers maps shell wrappers that distributions install on $PATH to the
// real binary beside them. Debian's /usr/bin/chromium sources /etc/chromium.d,
// which adds extension flags and costs a shell start on every launch.
var debianWrappers = map[string]string{
	"/usr/bin/chromium": "/usr/lib/chromium/chromium",
}

// Find returns the Chrome binary to launch. A non-empty explicit path (from
// --chrome-path or CHROME_PATH) must exist; otherwise the usual install paths and
// $PATH are searched. Find never downloads a browser.
func Find(explicit string) (string, error) {
	if explicit != "" {
		path, err := exec.LookPath(explicit)
		if err != nil {
			return "", fmt.Errorf("%w at %q: %s", ErrNotFound, explicit, InstallHint)
		}
		return unwrap(path), nil
	}
	path, ok := launcher.LookPath()
	if !ok {
		return "", fmt.Errorf("%w on this machine: %s", ErrNotFound, InstallHint)
	}
	return unwrap(path), nil
}

func unwrap(path string) string {
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		resolved = path
	}
	if real, ok := debianWrappers[resolved]; ok {
		if info, err := os.Stat(real); err == nil && !info.IsDir() {
			return real
		}
	}
	return path
}

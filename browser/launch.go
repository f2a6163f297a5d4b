package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-rod/rod/lib/proto"
	"go.uber.org/zap"
)

// Starter obtains a running browser for one conversation: by launching Chrome,
// or (later) by attaching to one the user already runs. reuse, when not nil, is
// the profile of a browser that died and is being replaced.
type Starter interface {
	Start(ctx context.Context, reuse *Profile) (*Browser, error)
}

// ErrLaunch reports that Chrome did not start or did not answer.
var ErrLaunch = errors.New("launch chrome")

// Launcher starts a system Chrome with a private profile. The zero value
// launches the first Chrome that Find sees, headless.
type Launcher struct {
	// ChromePath is the binary to run (--chrome-path, CHROME_PATH); empty
	// means search. It is resolved on every Start, so a Chrome installed while
	// the server runs is found by the next call.
	ChromePath string
	Headed     bool
	// Args are extra command-line flags, after the defaults.
	Args []string
	Log  *zap.Logger
}

// defaultFlags keep a headless Chrome quiet on a closed network and fast to
// start: no first-run UI, no background fetches, no crash reporter (it would
// run outside Chrome's process group), no throttling of hidden pages.
var defaultFlags = []string{
	"--remote-debugging-pipe",
	"--no-first-run",
	"--no-default-browser-check",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-crash-reporter",
	"--disable-breakpad",
	"--disable-sync",
	"--disable-default-apps",
	"--disable-extensions",
	"--disable-client-side-phishing-detection",
	"--disable-domain-reliability",
	"--disable-background-timer-throttling",
	"--disable-backgrounding-occluded-windows",
	"--disable-renderer-backgrounding",
	"--disable-hang-monitor",
	"--disable-ipc-flooding-protection",
	"--disable-popup-blocking",
	"--disable-prompt-on-repost",
	"--disable-features=Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider,AutofillServerCommunication,CertificateTransparencyComponentUpdater",
	"--metrics-recording-only",
	"--no-pings",
	"--password-store=basic",
	"--use-mock-keychain",
	"--force-color-profile=srgb",
	"--hide-scrollbars",
	"--mute-audio",
	"--window-size=1280,800",
}

// Flags returns the full command line (without the binary) for a profile.
func (l *Launcher) Flags(profile *Profile) []string {
	flags := append([]string{}, defaultFlags...)
	flags = append(flags, "--user-data-dir="+profile.UserDataDir())
	if !l.Headed {
		flags = append(flags, "--headless")
	}
	if os.Geteuid() == 0 {
		// Chrome refuses to run as root with its sandbox on.
		flags = append(flags, "--no-sandbox")
	}
	flags = append(flags, l.Args...)
	return append(flags, "about:blank")
}

// Start launches Chrome and waits until it answers on the pipe.
func (l *Launcher) Start(ctx context.Context, reuse *Profile) (*Browser, error) {
	log := l.Log
	if log == nil {
		log = zap.NewNop()
	}
	bin, err := Find(l.ChromePath)
	if err != nil {
		return nil, err
	}
	profile := reuse
	if profile == nil {
		if profile, err = NewProfile(); err != nil {
			return nil, err
		}
	} else {
		removeSingletonLocks(profile)
	}
	b, err := l.start(ctx, bin, profile, log)
	if err != nil && reuse == nil {
		_ = profile.Remove()
	}
	return b, err
}

func (l *Launcher) start(ctx context.Context, bin string, profile *Profile, log *zap.Logger) (*Browser, error) {
	// Chrome reads commands from its fd 3 and writes answers to its fd 4.
	chromeIn, toChrome, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLaunch, err)
	}
	fromChrome, chromeOut, err := os.Pipe()
	if err != nil {
		_ = chromeIn.Close()
		_ = toChrome.Close()
		return nil, fmt.Errorf("%w: %w", ErrLaunch, err)
	}
	stderr := &tailBuffer{max: 8 << 10}
	cmd := exec.Command(bin, l.Flags(profile)...)
	cmd.Env = append(os.Environ(), "TMPDIR="+profile.TempDir())
	cmd.Stderr = stderr // never our stdout: it carries the MCP stream
	// A helper that left the group could hold stderr open: Wait must not hang on it.
	cmd.WaitDelay = 2 * time.Second
	cmd.ExtraFiles = []*os.File{chromeIn, chromeOut}
	proc, err := startProcess(cmd)
	_ = chromeIn.Close()
	_ = chromeOut.Close()
	if err != nil {
		_ = toChrome.Close()
		_ = fromChrome.Close()
		return nil, fmt.Errorf("%w %s: %w", ErrLaunch, bin, err)
	}
	processGuard.own(profile.Root)
	processGuard.group(proc.pid())

	pipe := newPipeTransport(toChrome, fromChrome)
	b := newBrowser(newConn(pipe, pipe.Close, log), proc, profile)
	version, err := b.handshake(ctx)
	if err != nil {
		b.Kill()
		return nil, fmt.Errorf("%w %s: %w%s", ErrLaunch, bin, err, stderr.summary())
	}
	b.Version = version
	log.Debug("chrome started", zap.Int("pid", b.PID()), zap.String("version", version),
		zap.String("profile", profile.Root))
	return b, nil
}

// handshake waits for Chrome's first answer, or for it to exit.
func (b *Browser) handshake(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	go func() {
		select {
		case <-b.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	res, err := proto.BrowserGetVersion{}.Call(b.Conn.Session(ctx, ""))
	if err != nil {
		if b.proc != nil && b.proc.hasExited() {
			return "", fmt.Errorf("chrome exited during start-up")
		}
		return "", err
	}
	return res.Product, nil
}

// removeSingletonLocks deletes the locks a SIGKILLed Chrome leaves in its
// profile; the caller knows that Chrome is gone.
func removeSingletonLocks(p *Profile) {
	for _, name := range []string{"SingletonLock", "SingletonSocket", "SingletonCookie"} {
		_ = os.Remove(filepath.Join(p.UserDataDir(), name))
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// summary is the tail as an error suffix, or empty.
func (t *tailBuffer) summary() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	text := strings.TrimSpace(string(t.buf))
	if text == "" {
		return ""
	}
	lines := strings.Split(text, "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return "; chrome said: " + strings.Join(lines, " | ")
}

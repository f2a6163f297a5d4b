package browser

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromekeeper/chromekeeper/internal/leakcheck"
)

func TestMain(m *testing.M) {
	RunGuardIfAsked()
	os.Exit(leakcheck.Run(m, StopGuard))
}

func testLauncher(t *testing.T) *Launcher {
	t.Helper()
	return &Launcher{ChromePath: os.Getenv("CHROME_PATH")}
}

func startBrowser(t *testing.T, l *Launcher, reuse *Profile) *Browser {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := l.Start(ctx, reuse)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func TestFindExplicitMissing(t *testing.T) {
	_, err := Find("/nonexistent/chrome")
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("Find(missing) error = %v, want ErrNotFound", err)
	}
	for _, want := range []string{"apt-get install", "CHROME_PATH"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Find(missing) error %q does not mention %q", err, want)
		}
	}
}

func TestFindUnwrapsDebianWrapper(t *testing.T) {
	if _, err := os.Stat("/usr/lib/chromium/chromium"); err != nil {
		t.Skip("Debian chromium not installed")
	}
	got, err := Find("/usr/bin/chromium")
	if err != nil {
		t.Fatal(err)
	}
	if got != "/usr/lib/chromium/chromium" {
		t.Errorf("Find(/usr/bin/chromium) = %q, want the real binary", got)
	}
}

func TestStartProbeClose(t *testing.T) {
	b := startBrowser(t, testLauncher(t), nil)
	if b.PID() <= 0 {
		t.Fatalf("PID = %d", b.PID())
	}
	if !strings.Contains(b.Version, "Chrome/") {
		t.Errorf("Version = %q, want Chrome/…", b.Version)
	}
	if err := b.Probe(context.Background()); err != nil {
		t.Fatalf("Probe on a live browser: %v", err)
	}
	pid, root := b.PID(), b.Profile.Root
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("after Close, kill(%d, 0) = %v, want ESRCH", pid, err)
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Errorf("after Close, profile %s still exists (stat: %v)", root, err)
	}
	if !b.Gone() {
		t.Error("after Close, Gone() = false")
	}
}

func TestProbeDetectsHungBrowser(t *testing.T) {
	b := startBrowser(t, testLauncher(t), nil)
	if err := syscall.Kill(b.PID(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := b.Probe(context.Background())
	if !errors.Is(err, ErrUnresponsive) {
		t.Fatalf("Probe on a stopped browser = %v, want ErrUnresponsive", err)
	}
	if elapsed := time.Since(start); elapsed > ProbeTimeout+2*time.Second {
		t.Errorf("Probe took %s, want about %s", elapsed, ProbeTimeout)
	}
}

func TestCrashIsSeenAndRelaunchReusesProfile(t *testing.T) {
	l := testLauncher(t)
	first := startBrowser(t, l, nil)
	marker := filepath.Join(first.Profile.UserDataDir(), "marker")
	if err := os.WriteFile(marker, []byte("kept"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(first.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-first.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed after SIGKILL")
	}
	if err := first.Probe(context.Background()); !errors.Is(err, ErrConnectionLost) {
		t.Errorf("Probe after SIGKILL = %v, want ErrConnectionLost", err)
	}
	first.Kill()

	second := startBrowser(t, l, first.Profile)
	if err := second.Probe(context.Background()); err != nil {
		t.Fatalf("relaunched browser does not answer: %v", err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("profile content lost across a relaunch: %v", err)
	}
	if got := len(leakcheck.Processes("--user-data-dir=" + first.Profile.UserDataDir())); got == 0 {
		t.Errorf("no process runs on the reused profile")
	}
}

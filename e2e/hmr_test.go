package e2e_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startVite copies the Vite fixture app to a temporary directory and serves it
// with the real Vite dev server from e2e/node_modules (npm ci). It returns the
// app's URL and directory; the server is stopped when the test ends.
func startVite(t *testing.T) (string, string) {
	t.Helper()
	viteBin, err := filepath.Abs(filepath.Join("node_modules", "vite", "bin", "vite.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(viteBin); err != nil {
		t.Fatalf("Vite is not installed (%v): run `npm ci` in e2e/ (make test does)", err)
	}
	app := filepath.Join(t.TempDir(), "app")
	if err := os.CopyFS(app, os.DirFS(filepath.Join("testdata", "vite"))); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command("node", viteBin, app, "--host", "127.0.0.1", "--port", port, "--strictPort", "--clearScreen", "false")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("start vite: %v", err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	logs := &syncBuffer{}
	go func() {
		scanner := bufio.NewScanner(out)
		for scanner.Scan() {
			fmt.Fprintln(logs, scanner.Text())
		}
	}()
	url := "http://" + addr + "/"
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		res, err := http.DefaultClient.Do(req)
		cancel()
		if err == nil {
			_ = res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return url, app
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("vite did not answer on %s: %v\n%s", url, err, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestViteHotUpdateIsDetected(t *testing.T) {
	t.Parallel()
	url, app := startVite(t)
	s := startServer(t)
	s.ok("browser_navigate", map[string]any{"url": url})
	waitForText(t, s, "#message", "first version")
	// Vite pushes updates over its WebSocket: edit only once the client is connected.
	eventually(t, 10*time.Second, "[vite] connected.", func() bool {
		return hasLine(consoleLines(s.ok("browser_console_logs", nil).Text), "[vite] connected.")
	})

	before := s.ok("browser_console_logs", nil)
	lines := consoleLines(before.Text)
	if !hasLine(lines, "debug page [vite] connected.") || !hasLine(lines, "log page rendered: first version") {
		t.Errorf("console before the edit:\n%s", before.Text)
	}
	s.eval("console.error('error before the edit'); 1")
	s.ok("browser_console_logs", nil)

	if err := os.WriteFile(filepath.Join(app, "message.js"), []byte(`export const message = "second version";`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitForText(t, s, "#message", "second version")

	after := s.ok("browser_console_logs", nil)
	if !strings.Contains(after.Text, "\n[HMR UPDATE occurred since your last query]\n") {
		t.Errorf("no HMR delta after a hot update:\n%s", after.Text)
	}
	if got := field(after.Text, "HMR updates"); !strings.HasPrefix(got, "1 this epoch, last ") {
		t.Errorf("HMR updates = %q", got)
	}
	if got := after.Structured["hmrUpdates"]; got != float64(1) {
		t.Errorf("structured hmrUpdates = %v", got)
	}
	lines = consoleLines(after.Text)
	if !hasLine(lines, "error page error before the edit", "[previous HMR generation]") {
		t.Errorf("the error from before the edit is not marked as the previous HMR generation:\n%s", after.Text)
	}
	if !hasLine(lines, "[vite] hot updated: /message.js") || hasLine(lines, "rendered: second version", "[previous HMR generation]") {
		t.Errorf("the update and the re-render:\n%s", after.Text)
	}
	if !strings.Contains(field(after.Text, "Epoch"), "began with a navigation") {
		t.Errorf("a hot update started a new epoch:\n%s", after.Text)
	}
}

// waitForText waits until the element matching selector has text.
func waitForText(t *testing.T, s *server, selector, text string) {
	t.Helper()
	expr := fmt.Sprintf(`await new Promise((resolve) => {
		const check = () => document.querySelector(%q)?.textContent === %q ? resolve(true) : setTimeout(check, 20);
		check();
	})`, selector, text)
	if r := s.call("browser_eval", map[string]any{"expression": expr, "timeout_ms": 15000}); field(r.Text, "Result") != "true" {
		t.Fatalf("%s never showed %q:\n%s", selector, text, r.Text)
	}
}

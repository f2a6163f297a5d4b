package e2e_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromekeeper/chromekeeper/browser"
)

// userChrome starts a Chromium the way a user would for attach mode, with a
// DevTools port and one tab open on url. It returns the http endpoint.
func userChrome(t *testing.T, url string) string {
	t.Helper()
	bin, err := browser.Find(os.Getenv("CHROME_PATH"))
	if err != nil {
		t.Fatal(err)
	}
	// Chrome's singleton socket lives in TMPDIR and must fit a socket path: keep it short.
	dir, err := os.MkdirTemp("", "uc-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	args := []string{"--headless", "--remote-debugging-port=0", "--user-data-dir=" + filepath.Join(dir, "profile"),
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-crash-reporter", url}
	if os.Geteuid() == 0 {
		args = append(args, "--no-sandbox")
	}
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = append(os.Environ(), "TMPDIR="+dir)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	listening := regexp.MustCompile(`DevTools listening on ws://([^/]+)/`)
	found := make(chan string, 1)
	go func() {
		scanner := bufio.NewScanner(stderr)
		for scanner.Scan() {
			if m := listening.FindStringSubmatch(scanner.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case host := <-found:
		return "http://" + host
	case <-time.After(30 * time.Second):
		t.Fatal("the user's Chromium did not start")
		return ""
	}
}

// openTabs lists the page targets of a DevTools endpoint.
func openTabs(t *testing.T, endpoint string) []string {
	t.Helper()
	res, err := http.Get(endpoint + "/json/list")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var targets []struct{ Type, URL string }
	if err := json.NewDecoder(res.Body).Decode(&targets); err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, target := range targets {
		if target.Type == "page" {
			urls = append(urls, target.URL)
		}
	}
	return urls
}

func TestAttachObservesTheUsersTabAndLeavesItOpen(t *testing.T) {
	t.Parallel()
	tab := fixture.page("/network.html")
	endpoint := userChrome(t, tab)
	s := startServer(t, "--cdp-url", endpoint)

	list := s.ok("browser_pages", map[string]any{"action": "select", "page_id": "p1"})
	if field(list.Text, "URL") != tab {
		t.Fatalf("the user's tab is not p1:\n%s", list.Text)
	}
	pages := s.ok("browser_pages", nil)
	if !strings.Contains(pages.Text, "* p1 "+tab) {
		t.Errorf("pages in attach mode:\n%s", pages.Text)
	}
	if st := s.status(); st.Structured["pid"] != nil || st.Structured["running"] != true {
		t.Errorf("status in attach mode: %v", st.Structured)
	}

	// The user's tab may still be loading when chromekeeper attaches.
	eventually(t, 10*time.Second, "the user's tab loaded", func() bool { return s.eval("typeof go") == `"function"` })
	s.ok("browser_watch_network", nil)
	s.eval("console.log('hello from the user tab'); 1")
	runNetworkFixture(t, s)
	if console := s.ok("browser_console_logs", nil); !hasLine(consoleLines(console.Text), "log page hello from the user tab") {
		t.Errorf("console of the user's tab:\n%s", console.Text)
	}
	if xml := s.call("browser_get_network_requests", nil).Text; !strings.HasPrefix(xml, `<network_requests count="6"`) {
		t.Errorf("network of the user's tab:\n%s", truncateForLog(xml))
	}
	if events := s.ok("browser_read_events", map[string]any{"kinds": []any{"console"}}); !strings.Contains(events.Text, `"hello from the user tab"`) {
		t.Errorf("events of the user's tab:\n%s", events.Text)
	}
	if got := s.eval("innerWidth"); got == "1280" {
		t.Errorf("attach mode changed the user's viewport to 1280 px")
	}

	s.stop()
	if tabs := openTabs(t, endpoint); len(tabs) != 1 || tabs[0] != tab {
		t.Errorf("after the session ended the user's tabs are %v, want [%s]", tabs, tab)
	}
}

func TestAttachRefusesRemoteAndNamesUnreachableEndpoints(t *testing.T) {
	t.Parallel()
	remote := startServer(t, "--cdp-url", "http://10.1.2.3:9222")
	start := time.Now()
	r := remote.fails("browser_pages", map[string]any{"action": "new"}, "SECURITY_BLOCKED")
	if elapsed := time.Since(start); elapsed > time.Second || !strings.Contains(r.Text, "10.1.2.3:9222") || !strings.Contains(r.Text, "--allow-remote-cdp") {
		t.Errorf("a remote endpoint (%s):\n%s", elapsed, r.Text)
	}

	refused := strings.TrimSuffix(refusedURL(t), "/")
	down := startServer(t, "--cdp-url", refused)
	r = down.fails("browser_eval", map[string]any{"expression": "1"}, "BROWSER_UNREACHABLE")
	if !strings.Contains(r.Text, strings.TrimPrefix(refused, "http://")) {
		t.Errorf("an unreachable endpoint does not name its host and port:\n%s", r.Text)
	}
}

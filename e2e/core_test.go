package e2e_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/jpeg"
	"image/png"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"golang.org/x/image/webp"
)

func TestNavigateEvalScreenshot(t *testing.T) {
	t.Parallel()
	s := startServer(t)

	nav := s.ok("browser_navigate", map[string]any{"url": fixture.page("/")})
	for key, want := range map[string]string{
		"URL": fixture.page("/"), "Status": "200", "Title": "chromekeeper fixture", "Page": "p1",
	} {
		if got := field(nav.Text, key); got != want {
			t.Errorf("navigate %s = %q, want %q\n%s", key, got, want, nav.Text)
		}
	}
	if got := nav.Structured["status"]; got != float64(200) {
		t.Errorf("structured status = %v, want 200", got)
	}

	if got := s.eval("document.querySelector('#title').textContent + ' ' + (1+1)"); got != `"Hello from the fixture 2"` {
		t.Errorf("eval = %s", got)
	}

	shot := s.ok("browser_screenshot", nil)
	if len(shot.Images) != 1 || shot.Images[0].MIMEType != "image/png" {
		t.Fatalf("screenshot content: %d images %v", len(shot.Images), shot.Images)
	}
	img := decodeImage(t, shot.Images[0])
	width, height := shot.Structured["width"].(float64), shot.Structured["height"].(float64)
	if img.Bounds().Dx() != int(width) || img.Bounds().Dy() != int(height) {
		t.Errorf("PNG is %v, answer says %vx%v", img.Bounds().Size(), width, height)
	}
	if img.Bounds().Dx() != 1280 || img.Bounds().Dy() != 800 {
		t.Errorf("viewport screenshot is %v, want 1280x800", img.Bounds().Size())
	}
	// The green box is at (20+x, 20+h1) in the page: sample its middle.
	if r, g, b, _ := img.At(150, 140).RGBA(); !(g>>8 > 0x90 && r>>8 < 0x50 && b>>8 < 0x80) {
		t.Errorf("pixel in #box is rgb(%d,%d,%d), want the box's green", r>>8, g>>8, b>>8)
	}
}

func TestErrorsLeaveTheSessionUsable(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.ok("browser_navigate", map[string]any{"url": fixture.page("/")})
	refused := refusedURL(t)
	cases := []struct {
		name string
		tool string
		args map[string]any
		code string
		want string
	}{
		{"unreachable", "browser_navigate", map[string]any{"url": refused}, "NAVIGATION_FAILED", "net::ERR_CONNECTION_REFUSED"},
		{"invalid url", "browser_navigate", map[string]any{"url": "http://exa mple.com/"}, "INVALID_INPUT", "url"},
		{"chrome scheme", "browser_navigate", map[string]any{"url": "chrome://settings"}, "SECURITY_BLOCKED", "chrome:"},
		{"file scheme", "browser_navigate", map[string]any{"url": "file:///etc/passwd"}, "SECURITY_BLOCKED", "--allow-file-urls"},
		{"javascript scheme", "browser_navigate", map[string]any{"url": "javascript:alert(1)"}, "SECURITY_BLOCKED", "javascript:"},
		{"missing url", "browser_navigate", map[string]any{}, "INVALID_INPUT", "url is required"},
		{"wrong wait_until", "browser_navigate", map[string]any{"url": fixture.URL, "wait_until": "soon"}, "INVALID_INPUT", "wait_until"},
		{"unknown argument", "browser_navigate", map[string]any{"url": fixture.URL, "selector": "x"}, "INVALID_INPUT", "selector"},
		{"eval syntax error", "browser_eval", map[string]any{"expression": "1 +* 2"}, "EVAL_EXCEPTION", "SyntaxError"},
		{"eval throw", "browser_eval", map[string]any{"expression": "(function boom() { throw new Error('kaput') })()"}, "EVAL_EXCEPTION", "Error: kaput"},
		{"missing expression", "browser_eval", nil, "INVALID_INPUT", "expression is required"},
		{"unknown page", "browser_eval", map[string]any{"expression": "1", "page_id": "p9"}, "TARGET_NOT_FOUND", "p9"},
		{"bad timeout", "browser_eval", map[string]any{"expression": "1", "timeout_ms": -5}, "INVALID_INPUT", "timeout_ms"},
		{"no such element", "browser_screenshot", map[string]any{"selector": "#nope"}, "TARGET_NOT_FOUND", "#nope"},
		{"save_to escapes", "browser_screenshot", map[string]any{"save_to": "../../etc/x.png"}, "SECURITY_BLOCKED", "output directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s.t = t
			r := s.fails(tc.tool, tc.args, tc.code)
			if !strings.Contains(r.Text, tc.want) {
				t.Errorf("answer does not mention %q:\n%s", tc.want, r.Text)
			}
			if code, _ := r.Structured["error"].(map[string]any)["code"].(string); code != tc.code {
				t.Errorf("structured error code = %q, want %q", code, tc.code)
			}
			if got := s.eval("1+1"); got != "2" {
				t.Errorf("after the error, eval of 1+1 = %s", got)
			}
		})
	}
	if r := s.call("browser_navigate", map[string]any{"url": refused}); field(r.Text, "URL") != refused {
		t.Errorf("NAVIGATION_FAILED does not name the URL:\n%s", r.Text)
	}
	if r := s.call("browser_eval", map[string]any{"expression": "(function boom() { throw new Error('kaput') })()"}); !strings.Contains(r.Text, "Stack: at boom") {
		t.Errorf("EVAL_EXCEPTION has no stack frame of boom:\n%s", r.Text)
	}
}

func TestEvalDescribesEveryValue(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.ok("browser_navigate", map[string]any{"url": fixture.page("/")})
	cases := []struct{ expr, typ, want string }{
		{"1+1", "number", "2"},
		{"'str'", "string", `"str"`},
		{"undefined", "undefined", "undefined"},
		{"null", "null", "null"},
		{"NaN", "number", "[NaN]"},
		{"[1, undefined, -Infinity]", "array", `[1,"[undefined]","[-Infinity]"]`},
		{"document.querySelector('#box')", "node", `<div class="green box" id="box">`},
		{"(() => { const o = {name: 'loop'}; o.self = o; return o })()", "object", `{"name":"loop","self":"[Circular]"}`},
		{"(() => { const shared = {v: 1}; return [shared, shared] })()", "array", `[{"v":1},{"v":1}]`},
		{"new Map([['k', 1]])", "map", `{"k":1}`},
		{"10n ** 3n", "bigint", "[BigInt: 1000n]"},
		{"Promise.resolve(42)", "number", "42"},
		{"await new Promise(r => setTimeout(() => r('late'), 50))", "string", `"late"`},
		{"let x = 5; x * 2", "number", "10"},
		{"let x = 6; x * 2", "number", "12"},
		{"(function named() {})", "function", "[Function: function named() {}]"},
		{"window", "window", "[Window]"},
	}
	for _, tc := range cases {
		r := s.ok("browser_eval", map[string]any{"expression": tc.expr})
		if got := field(r.Text, "Type"); got != tc.typ {
			t.Errorf("eval(%s) type = %q, want %q", tc.expr, got, tc.typ)
		}
		if got := field(r.Text, "Result"); got != tc.want {
			t.Errorf("eval(%s) = %s, want %s", tc.expr, got, tc.want)
		}
	}

	r := s.ok("browser_eval", map[string]any{"expression": "Promise.resolve(1)", "await_promise": false})
	if got := field(r.Text, "Type"); got != "promise" {
		t.Errorf("with await_promise false, type = %q, want promise", got)
	}

	big := s.ok("browser_eval", map[string]any{"expression": "'x'.repeat(100000)"})
	if !strings.Contains(big.Text, "[truncated: the result is 100002 bytes") {
		t.Errorf("a 100 KB result is not truncated with its size:\n%.300s", big.Text[len(big.Text)-200:])
	}
	if len(big.Text) > 21<<10 {
		t.Errorf("truncated answer is %d bytes, want about 20 KB", len(big.Text))
	}
	if big.Structured["truncated"] != true || big.Structured["size"] != float64(100002) {
		t.Errorf("structured truncation = %v / %v", big.Structured["truncated"], big.Structured["size"])
	}
}

func TestEvalTimeoutTerminatesAndRecovers(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.ok("browser_navigate", map[string]any{"url": fixture.page("/")})
	r := s.fails("browser_eval", map[string]any{"expression": "while (true) {}", "timeout_ms": 500}, "TIMEOUT")
	if !strings.Contains(r.Text, "terminated") {
		t.Errorf("timeout answer does not say the script was terminated:\n%s", r.Text)
	}
	s.fails("browser_eval", map[string]any{"expression": "new Promise(() => {})", "timeout_ms": 300}, "TIMEOUT")
	if got := s.eval("window.fixtureLoaded"); got != "true" {
		t.Errorf("after timeouts, eval = %s", got)
	}
	if got := field(s.status().Text, "Relaunches"); got != "0" {
		t.Errorf("a slow page relaunched Chrome: Relaunches = %s", got)
	}
}

func TestNavigateWaitsAndReportsStatus(t *testing.T) {
	t.Parallel()
	s := startServer(t)

	missing := s.ok("browser_navigate", map[string]any{"url": fixture.page("/missing")})
	if field(missing.Text, "Status") != "404" || field(missing.Text, "Title") != "Not here" {
		t.Errorf("404 page:\n%s", missing.Text)
	}

	start := time.Now()
	s.ok("browser_navigate", map[string]any{"url": fixture.page("/slow-image.html"), "wait_until": "domcontentloaded"})
	if got := s.eval("document.images[0].complete"); got != "false" {
		t.Errorf("domcontentloaded waited for the slow image (complete = %s)", got)
	}
	s.ok("browser_navigate", map[string]any{"url": fixture.page("/slow-image.html"), "wait_until": "load"})
	if got := s.eval("document.images[0].complete"); got != "true" {
		t.Errorf("load did not wait for the image (complete = %s)", got)
	}
	if elapsed := time.Since(start); elapsed < time.Second {
		t.Errorf("load of a page with a 1 s image took %s", elapsed)
	}
	s.ok("browser_navigate", map[string]any{"url": fixture.page("/"), "wait_until": "networkidle"})

	r := s.fails("browser_navigate", map[string]any{"url": fixture.page("/slow?ms=3000"), "timeout_ms": 300}, "TIMEOUT")
	if !strings.Contains(r.Text, "timeout_ms 300") {
		t.Errorf("timeout answer does not name the timeout:\n%s", r.Text)
	}

	s.ok("browser_navigate", map[string]any{"url": fixture.page("/")})
	reload := s.ok("browser_reload", map[string]any{"ignore_cache": true})
	if field(reload.Text, "Title") != "chromekeeper fixture" || field(reload.Text, "Status") != "200" {
		t.Errorf("reload:\n%s", reload.Text)
	}

	same := s.ok("browser_navigate", map[string]any{"url": fixture.page("/#box")})
	if field(same.Text, "URL") != fixture.page("/#box") {
		t.Errorf("fragment navigation URL:\n%s", same.Text)
	}

	dialog := s.ok("browser_navigate", map[string]any{"url": fixture.page("/dialog.html")})
	if !strings.Contains(dialog.Text, `Dialog: alert "hello from alert" (accepted)`) {
		t.Errorf("the alert is not reported:\n%s", dialog.Text)
	}
	if got := s.eval("document.title"); got != `"dialog page"` {
		t.Errorf("after an alert, eval = %s", got)
	}
}

func TestScreenshotOptions(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	s := startServer(t, "--output-dir", out)
	s.ok("browser_navigate", map[string]any{"url": fixture.page("/")})

	jpg := s.ok("browser_screenshot", map[string]any{"format": "jpeg", "quality": 50, "max_width": 640})
	img := decodeImage(t, jpg.Images[0])
	if img.Bounds().Dx() != 640 || img.Bounds().Dy() != 400 {
		t.Errorf("jpeg downscaled to 640 is %v, want 640x400", img.Bounds().Size())
	}

	full := s.ok("browser_screenshot", map[string]any{"full_page": true, "format": "webp"})
	img = decodeImage(t, full.Images[0])
	if img.Bounds().Dy() < 3000 {
		t.Errorf("full page is %v high, want the whole 3000+ px page", img.Bounds().Dy())
	}

	box := s.ok("browser_screenshot", map[string]any{"selector": "#box"})
	img = decodeImage(t, box.Images[0])
	if img.Bounds().Dx() != 300 || img.Bounds().Dy() != 120 {
		t.Errorf("element screenshot is %v, want 300x120", img.Bounds().Size())
	}

	saved := s.ok("browser_screenshot", map[string]any{"save_to": "shots/home.jpg"})
	path := filepath.Join(out, "shots", "home.jpg")
	if field(saved.Text, "Saved") != path || len(saved.Images) != 0 {
		t.Errorf("save_to answer:\n%s", saved.Text)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jpeg.Decode(bytes.NewReader(data)); err != nil {
		t.Errorf("saved file is not a JPEG (inferred from .jpg): %v", err)
	}

	if err := os.Symlink("/etc", filepath.Join(out, "link")); err != nil {
		t.Fatal(err)
	}
	s.fails("browser_screenshot", map[string]any{"save_to": "link/x.png"}, "SECURITY_BLOCKED")
	s.fails("browser_screenshot", map[string]any{"save_to": "/tmp/elsewhere.png"}, "SECURITY_BLOCKED")
	s.fails("browser_screenshot", map[string]any{"full_page": true, "selector": "#box"}, "INVALID_INPUT")
}

func TestPages(t *testing.T) {
	t.Parallel()
	s := startServer(t)

	list := s.ok("browser_pages", nil)
	if !strings.Contains(list.Text, "SUCCESS: 0 pages") || !strings.Contains(list.Text, "not running") {
		t.Errorf("list before any call:\n%s", list.Text)
	}
	if st := s.status(); st.Structured["running"] != false {
		t.Fatalf("listing pages or asking status started Chrome:\n%s", st.Text)
	}

	s.ok("browser_navigate", map[string]any{"url": fixture.page("/")})
	opened := s.ok("browser_pages", map[string]any{"action": "new", "url": fixture.page("/second.html")})
	if !strings.Contains(opened.Text, "SUCCESS: Opened p2") || field(opened.Text, "Title") != "second page" {
		t.Errorf("new page:\n%s", opened.Text)
	}
	if got := s.eval("document.title"); got != `"second page"` {
		t.Errorf("the new page is not current: eval = %s", got)
	}

	list = s.ok("browser_pages", map[string]any{"action": "list"})
	if !strings.Contains(list.Text, "  p1 "+fixture.page("/")) || !strings.Contains(list.Text, "* p2 "+fixture.page("/second.html")) {
		t.Errorf("list:\n%s", list.Text)
	}

	r := s.ok("browser_eval", map[string]any{"expression": "document.title", "page_id": "p1"})
	if field(r.Text, "Result") != `"chromekeeper fixture"` {
		t.Errorf("eval with page_id p1:\n%s", r.Text)
	}
	s.ok("browser_pages", map[string]any{"action": "select", "page_id": "p1"})
	if got := s.eval("document.title"); got != `"chromekeeper fixture"` {
		t.Errorf("after select p1, eval = %s", got)
	}

	// A page the site opens itself gets the next id.
	s.eval("window.open('/second.html'); 1")
	eventually(t, 5*time.Second, "popup listed as p3", func() bool {
		return strings.Contains(s.ok("browser_pages", nil).Text, " p3 ")
	})

	closed := s.ok("browser_pages", map[string]any{"action": "close", "page_id": "p2"})
	if !strings.Contains(closed.Text, "SUCCESS: Closed p2") {
		t.Errorf("close:\n%s", closed.Text)
	}
	s.fails("browser_eval", map[string]any{"expression": "1", "page_id": "p2"}, "TARGET_NOT_FOUND")
	s.fails("browser_pages", map[string]any{"action": "select"}, "INVALID_INPUT")
	s.ok("browser_pages", map[string]any{"action": "close", "page_id": "p1"})
	s.ok("browser_pages", map[string]any{"action": "close"})
	// With every page closed, the next call opens a fresh one.
	if got := s.eval("location.href"); got != `"about:blank"` {
		t.Errorf("after closing all pages, eval runs on %s", got)
	}
}

func TestIdleReaperClosesChromeAndNextCallStartsFresh(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--idle-timeout", "2s")
	s.ok("browser_navigate", map[string]any{"url": fixture.page("/")})
	pid, profile := s.chrome()

	eventually(t, 10*time.Second, "Chrome reaped after 2s idle", func() bool { return processGone(pid) && !exists(profile) })
	if st := s.status(); st.Structured["running"] != false {
		t.Errorf("status after reap:\n%s", st.Text)
	}

	r := s.ok("browser_eval", map[string]any{"expression": "location.href"})
	if !strings.Contains(r.Text, "NOTICE: the previous Chrome was closed after 2s without calls") {
		t.Errorf("first call after the reap carries no NOTICE:\n%s", r.Text)
	}
	newPID, _ := s.chrome()
	if newPID == pid {
		t.Errorf("same Chrome pid %d after the reap", pid)
	}
}

func TestCallInFlightIsNeverReaped(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--idle-timeout", "1s")
	s.ok("browser_navigate", map[string]any{"url": fixture.page("/")})
	pid, _ := s.chrome()
	r := s.ok("browser_eval", map[string]any{"expression": "await new Promise(r => setTimeout(() => r('done'), 4000))"})
	if field(r.Text, "Result") != `"done"` || strings.Contains(r.Text, "NOTICE") {
		t.Errorf("4 s eval with a 1 s idle timeout:\n%s", r.Text)
	}
	if processGone(pid) {
		t.Errorf("Chrome %d was reaped during the call", pid)
	}
}

func TestKilledChromeIsHealedOnTheNextCall(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.ok("browser_navigate", map[string]any{"url": fixture.page("/")})
	s.ok("browser_pages", map[string]any{"action": "new", "url": fixture.page("/second.html")})
	s.ok("browser_pages", map[string]any{"action": "select", "page_id": "p1"})
	s.eval("localStorage.setItem('kept', 'yes'); 1")
	pid, profile := s.chrome()

	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "Chrome gone", func() bool { return processGone(pid) })

	r := s.ok("browser_eval", map[string]any{"expression": "location.href"})
	if field(r.Text, "Result") != strconv.Quote(fixture.page("/")) {
		t.Errorf("eval after the crash did not run on the restored URL:\n%s", r.Text)
	}
	notice := strings.SplitN(r.Text, "\n", 2)[0]
	for _, want := range []string{"NOTICE: Chrome crashed", "relaunch 1", "same profile", "p1 restored to " + fixture.page("/"), "Lost: p2 (" + fixture.page("/second.html") + ")"} {
		if !strings.Contains(notice, want) {
			t.Errorf("notice does not say %q:\n%s", want, notice)
		}
	}
	newPID, newProfile := s.chrome()
	if newPID == pid || newProfile != profile {
		t.Errorf("after healing: pid %d→%d, profile %s→%s; want a new pid on the same profile", pid, newPID, profile, newProfile)
	}
	if got := field(s.status().Text, "Relaunches"); got != "1" {
		t.Errorf("Relaunches = %s, want 1", got)
	}
	if got := s.eval("document.title"); got != `"chromekeeper fixture"` {
		t.Errorf("second call after healing = %s", got)
	}
}

func TestHungChromeIsHealedOnTheNextCall(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.ok("browser_navigate", map[string]any{"url": fixture.page("/")})
	pid, _ := s.chrome()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	time.Sleep(6 * time.Second) // past the idle pause after which a call probes first

	r := s.ok("browser_eval", map[string]any{"expression": "document.title"})
	if !strings.Contains(r.Text, "NOTICE: Chrome stopped answering") || field(r.Text, "Result") != `"chromekeeper fixture"` {
		t.Errorf("call to a hung Chrome:\n%s", r.Text)
	}
	if !processGone(pid) {
		t.Errorf("the hung Chrome %d was not killed", pid)
	}
}

func TestClosingStdinLeavesNothing(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.ok("browser_navigate", map[string]any{"url": fixture.page("/")})
	pid, profile := s.chrome()
	s.stop()
	if !s.cmd.ProcessState.Exited() {
		t.Errorf("server did not exit on stdin EOF: %v", s.cmd.ProcessState)
	}
	eventually(t, 5*time.Second, "Chrome and profile gone after stdin closed", func() bool {
		return processGone(pid) && !exists(profile)
	})
}

func TestSIGKILLOfTheServerLeavesNothing(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.ok("browser_navigate", map[string]any{"url": fixture.page("/")})
	pid, profile := s.chrome()
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "Chrome and profile gone after the server was SIGKILLed", func() bool {
		return processGone(pid) && !exists(profile)
	})
}

func TestBrowserNotFound(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--chrome-path", "/nonexistent/chrome")
	r := s.fails("browser_navigate", map[string]any{"url": fixture.URL}, "BROWSER_NOT_FOUND")
	for _, want := range []string{"apt-get install", "CHROME_PATH"} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("BROWSER_NOT_FOUND does not mention %q:\n%s", want, r.Text)
		}
	}
	s.fails("browser_eval", map[string]any{"expression": "1"}, "BROWSER_NOT_FOUND")
}

func TestProtocolVersions(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			s := startServerWith(t, []client.ClientOption{client.WithProtocolVersion(version)})
			ctx := t.Context()
			tools, err := s.client.ListTools(ctx, mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if len(tools.Tools) != len(toolNames) {
				t.Errorf("%d tools, want %d", len(tools.Tools), len(toolNames))
			}
			s.t = t
			if st := s.status(); st.Structured["running"] != false {
				t.Errorf("status: %v", st.Structured)
			}
		})
	}
}

func TestToolsListFitsTheBudget(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tools, err := s.client.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	// SPEC: sixteen tools in 12 KB; issue 2: the six core tools in 5 KB.
	encoded, _ := json.Marshal(tools)
	if budget := 12 << 10; len(encoded) > budget {
		t.Errorf("tools/list is %d bytes for %d tools, budget %d", len(encoded), len(tools.Tools), budget)
	}
	core := 0
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		if tool.RawOutputSchema == nil && tool.OutputSchema.Type == "" {
			t.Errorf("%s has no output schema", tool.Name)
		}
		if slices.Contains(toolNames[:6], tool.Name) {
			b, _ := json.Marshal(tool)
			core += len(b)
		}
	}
	if core > 5<<10 {
		t.Errorf("the six core tools take %d bytes, budget 5 KB", core)
	}
	want := slices.Sorted(slices.Values(toolNames))
	if slices.Sort(names); !slices.Equal(names, want) {
		t.Errorf("tools = %v, want %v", names, want)
	}
}

// refusedURL returns a loopback URL whose port nothing listens on.
func refusedURL(t *testing.T) string {
	t.Helper()
	return "http://" + freeAddr(t) + "/"
}

// freeAddr returns a loopback host:port that nothing listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// toolNames are the tools, the six core tools of issue 2 first.
var toolNames = []string{
	"browser_navigate", "browser_reload", "browser_screenshot", "browser_eval", "browser_pages", "browser_session",
	"browser_set_offline", "browser_service_workers", "browser_network_sources", "browser_console_logs",
	"browser_watch_network", "browser_get_network_requests", "browser_read_events", "browser_clear_events",
	"browser_get_response_body", "browser_event_filters",
}

func decodeImage(t *testing.T, c mcp.ImageContent) image.Image {
	t.Helper()
	data, err := base64.StdEncoding.DecodeString(c.Data)
	if err != nil {
		t.Fatal(err)
	}
	var img image.Image
	switch c.MIMEType {
	case "image/png":
		img, err = png.Decode(bytes.NewReader(data))
	case "image/jpeg":
		img, err = jpeg.Decode(bytes.NewReader(data))
	case "image/webp":
		img, err = webp.Decode(bytes.NewReader(data))
	}
	if err != nil || img == nil {
		t.Fatalf("decode %s: %v", c.MIMEType, err)
	}
	return img
}

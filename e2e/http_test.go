package e2e_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// httpServer is one chromekeeper process serving MCP over streamable HTTP.
type httpServer struct {
	base   string // http://127.0.0.1:port
	token  string
	cmd    *exec.Cmd
	stderr *syncBuffer
}

// startHTTP starts chromekeeper --transport http on a free loopback port.
func startHTTP(t *testing.T, token string, args ...string) *httpServer {
	t.Helper()
	addr := freeAddr(t)
	h := &httpServer{base: "http://" + addr, token: token, stderr: &syncBuffer{}}
	args = append([]string{"--transport", "http", "--listen", addr}, args...)
	if token != "" {
		args = append(args, "--auth-token", token)
	}
	h.cmd = exec.Command(binary, args...)
	h.cmd.Env = append(os.Environ(), "TMPDIR="+privateTempDir(t))
	h.cmd.Stderr = h.stderr
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = h.cmd.Process.Signal(syscall.SIGTERM)
		_ = h.cmd.Wait()
		if t.Failed() {
			t.Logf("chromekeeper stderr:\n%s", h.stderr.String())
		}
	})
	eventually(t, 10*time.Second, "/healthz answers", func() bool {
		res, err := http.Get(h.base + "/healthz")
		if err == nil {
			_ = res.Body.Close()
		}
		return err == nil && res.StatusCode == http.StatusOK
	})
	return h
}

// connect opens one MCP conversation; it ends (DELETE) when the test ends
// or when stop is called.
func (h *httpServer) connect(t *testing.T) *server {
	t.Helper()
	headers := map[string]string{}
	if h.token != "" {
		headers["Authorization"] = "Bearer " + h.token
	}
	tr, err := transport.NewStreamableHTTP(h.base+"/mcp", transport.WithHTTPHeaders(headers))
	if err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, client: client.NewClient(tr), cmd: h.cmd, stderr: h.stderr}
	if err := s.client.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.stop)
	res := s.initialize("chromekeeper-e2e-http")
	if res.ProtocolVersion == mcp.ProtocolVersion20260728 {
		t.Fatalf("negotiated %s over HTTP, want a session-oriented version", res.ProtocolVersion)
	}
	return s
}

func TestHTTPConversationsAreIsolated(t *testing.T) {
	t.Parallel()
	h := startHTTP(t, "")
	a, b := h.connect(t), h.connect(t)
	a.ok("browser_navigate", map[string]any{"url": fixture.page("/")})
	b.ok("browser_navigate", map[string]any{"url": fixture.page("/second.html")})
	a.eval("document.cookie = 'who=a; max-age=3600'; localStorage.setItem('who', 'a'); 1")
	if got := b.eval("document.cookie + '|' + localStorage.getItem('who')"); got != `"|null"` {
		t.Errorf("conversation b sees a's cookie or storage: %s", got)
	}
	if got := a.eval("document.cookie"); got != `"who=a"` {
		t.Errorf("conversation a lost its cookie: %s", got)
	}
	pagesA, pagesB := a.ok("browser_pages", nil).Text, b.ok("browser_pages", nil).Text
	if !strings.Contains(pagesA, "* p1 "+fixture.page("/")) || strings.Contains(pagesA, "second.html") ||
		!strings.Contains(pagesB, "* p1 "+fixture.page("/second.html")) || strings.Contains(pagesB, `"chromekeeper fixture"`) {
		t.Errorf("page lists bleed:\na: %s\nb: %s", pagesA, pagesB)
	}
	pidA, profileA := a.chrome()
	pidB, _ := b.chrome()
	if pidA == pidB {
		t.Fatalf("both conversations share Chrome %d", pidA)
	}

	a.stop() // DELETE ends the MCP session
	eventually(t, 5*time.Second, "a's Chrome gone after its session ended", func() bool {
		return processGone(pidA) && !exists(profileA)
	})
	if processGone(pidB) {
		t.Errorf("ending a's session killed b's Chrome")
	}
	if got := b.eval("document.title"); got != `"second page"` {
		t.Errorf("b after a ended: %s", got)
	}
}

func TestHTTPRefusesForeignOriginsHostsAndTokens(t *testing.T) {
	t.Parallel()
	h := startHTTP(t, "let-me-in")
	post := func(mutate func(*http.Request)) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, h.base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer let-me-in")
		mutate(req)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	for _, tc := range []struct {
		name   string
		mutate func(*http.Request)
		status int
		body   string
	}{
		{"foreign origin", func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") }, 403, `Origin "https://evil.example"`},
		{"rebound host", func(r *http.Request) { r.Host = "evil.example:8931" }, 403, "DNS rebinding"},
		{"no token", func(r *http.Request) { r.Header.Del("Authorization") }, 401, "Authorization: Bearer"},
		{"wrong token", func(r *http.Request) { r.Header.Set("Authorization", "Bearer guess") }, 401, "Unauthorized"},
	} {
		status, body := post(tc.mutate)
		if status != tc.status || !strings.Contains(body, tc.body) {
			t.Errorf("%s: %d %q, want %d mentioning %q", tc.name, status, body, tc.status, tc.body)
		}
	}
	if status, _ := post(func(r *http.Request) { r.Header.Set("Origin", "http://localhost:6274") }); status == 403 || status == 401 {
		t.Errorf("a local origin with the token was refused: %d", status)
	}
	h.connect(t).status() // the right token works end to end

	out, err := exec.Command(binary, "--transport", "http", "--listen", "0.0.0.0:0").CombinedOutput()
	if code := exitCode(err); code != 2 || !strings.Contains(string(out), "without --auth-token") {
		t.Errorf("listening beyond loopback without a token: exit %d\n%s", code, out)
	}
}

func TestHTTPSessionLimit(t *testing.T) {
	t.Parallel()
	h := startHTTP(t, "", "--max-sessions", "2")
	first, second, third := h.connect(t), h.connect(t), h.connect(t)
	first.ok("browser_navigate", map[string]any{"url": fixture.page("/")})
	second.ok("browser_navigate", map[string]any{"url": fixture.page("/")})
	r := third.fails("browser_navigate", map[string]any{"url": fixture.page("/")}, "SESSION_LIMIT")
	if !strings.Contains(r.Text, "--max-sessions 2") {
		t.Errorf("SESSION_LIMIT does not name the limit:\n%s", r.Text)
	}
	if got := first.eval("1+1"); got != "2" {
		t.Errorf("a conversation within the limit degraded: %s", got)
	}
	second.ok("browser_session", map[string]any{"action": "close"})
	third.ok("browser_navigate", map[string]any{"url": fixture.page("/")})
}

func TestHTTPHealthAndMetrics(t *testing.T) {
	t.Parallel()
	h := startHTTP(t, "")
	s := h.connect(t)
	s.ok("browser_navigate", map[string]any{"url": fixture.page("/")})
	s.fails("browser_eval", map[string]any{"expression": "throw new Error('x')"}, "EVAL_EXCEPTION")
	res, err := http.Get(h.base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	health, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(health), `"browsers":1`) || !strings.Contains(string(health), `"status":"ok"`) {
		t.Errorf("/healthz: %s", health)
	}
	res, err = http.Get(h.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{
		"chromekeeper_sessions 1", "chromekeeper_browsers_running 1", "chromekeeper_browser_launches_total 1",
		"chromekeeper_crashes_healed_total 0", "chromekeeper_browser_reaps_total 0",
		`chromekeeper_tool_calls_total{tool="browser_navigate"} 1`,
		`chromekeeper_tool_errors_total{code="EVAL_EXCEPTION",tool="browser_eval"} 1`,
		`chromekeeper_tool_call_seconds_count{tool="browser_eval"} 1`,
	} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// loadTest runs conversations × calls mixed tool calls at once and returns
// the latencies by tool; any failed call fails the test.
func loadTest(t *testing.T, h *httpServer, conversations, calls int) map[string][]time.Duration {
	t.Helper()
	var mu sync.Mutex
	latencies := map[string][]time.Duration{}
	mix := []struct {
		tool string
		args map[string]any
	}{
		{"browser_navigate", map[string]any{"url": fixture.page("/")}},
		{"browser_eval", map[string]any{"expression": "document.title"}},
		{"browser_screenshot", map[string]any{"max_width": 640}},
		{"browser_console_logs", map[string]any{"limit": 20}},
	}
	var wg sync.WaitGroup
	for i := range conversations {
		s := h.connect(t)
		wg.Go(func() {
			for j := range calls {
				c := mix[(i+j)%len(mix)]
				start := time.Now()
				r := s.call(c.tool, c.args)
				elapsed := time.Since(start)
				if r.IsError {
					t.Errorf("conversation %d call %d %s: %s", i, j, c.tool, r.Text)
				}
				mu.Lock()
				latencies[c.tool] = append(latencies[c.tool], elapsed)
				mu.Unlock()
			}
			s.stop()
		})
	}
	wg.Wait()
	return latencies
}

func TestHTTPLoadShort(t *testing.T) {
	t.Parallel()
	h := startHTTP(t, "")
	loadTest(t, h, 4, 12)
	eventually(t, 10*time.Second, "no Chrome of this server left once the sessions ended", func() bool {
		return len(chromeMains(h.cmd.Process.Pid)) == 0
	})
}

func TestHTTPChaosKillingChromes(t *testing.T) {
	t.Parallel()
	h := startHTTP(t, "")
	const conversations = 8
	var clients []*server
	for range conversations {
		s := h.connect(t)
		s.ok("browser_navigate", map[string]any{"url": fixture.page("/")})
		clients = append(clients, s)
	}
	stop := make(chan struct{})
	var kills int
	var killer sync.WaitGroup
	killer.Go(func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if pids := chromeMains(h.cmd.Process.Pid); len(pids) > 0 {
					_ = syscall.Kill(pids[rand.IntN(len(pids))], syscall.SIGKILL)
					kills++
				}
			}
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	var mu sync.Mutex
	healed, failed, total := 0, 0, 0
	var wg sync.WaitGroup
	for i, s := range clients {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				r := s.call("browser_eval", map[string]any{"expression": fmt.Sprintf("%d * 2", i)})
				mu.Lock()
				total++
				switch {
				case !r.IsError && field(r.Text, "Result") == fmt.Sprint(i*2):
					if strings.HasPrefix(r.Text, "NOTICE: ") {
						healed++
					}
				case r.IsError && strings.HasPrefix(withoutNotices(r.Text), "ERROR: BROWSER_UNREACHABLE: "):
					failed++ // a clear error is allowed; a wrong answer is not
				default:
					t.Errorf("conversation %d: unclear answer under chaos:\n%s", i, r.Text)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(stop)
	killer.Wait()
	t.Logf("%d calls, %d healed with NOTICE, %d clear errors, %d Chromes killed", total, healed, failed, kills)
	if kills < 10 || healed == 0 {
		t.Errorf("chaos did not bite: %d kills, %d healed calls", kills, healed)
	}
	if failed*10 > total {
		t.Errorf("%d of %d calls failed; healing should absorb most kills", failed, total)
	}
	for _, s := range clients {
		s.stop()
	}
	eventually(t, 10*time.Second, "no Chrome left after the chaos", func() bool {
		return len(chromeMains(h.cmd.Process.Pid)) == 0
	})
}

func TestHTTPSIGTERMClosesEveryBrowser(t *testing.T) {
	t.Parallel()
	h := startHTTP(t, "")
	var profiles []string
	var pids []int
	for range 8 {
		s := h.connect(t)
		s.ok("browser_navigate", map[string]any{"url": fixture.page("/")})
		pid, profile := s.chrome()
		pids, profiles = append(pids, pid), append(profiles, profile)
	}
	start := time.Now()
	if err := h.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- h.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("still running 5 s after SIGTERM")
	}
	t.Logf("exited %s after SIGTERM", time.Since(start).Round(time.Millisecond))
	for i, pid := range pids {
		if !processGone(pid) || exists(profiles[i]) {
			t.Errorf("after SIGTERM, Chrome %d or its profile %s is left", pid, profiles[i])
		}
	}
}

// chromeMains returns the Chrome main processes a server started (its direct children).
func chromeMains(serverPID int) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if len(fields) > 1 && fields[0] != "Z" && fields[1] == fmt.Sprint(serverPID) && strings.Contains(string(cmdline), "--remote-debugging-pipe") {
			pids = append(pids, pid)
		}
	}
	sort.Ints(pids)
	return pids
}

func exitCode(err error) int {
	if exit, ok := err.(*exec.ExitError); ok {
		return exit.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func TestHTTPReaperIsPerConversation(t *testing.T) {
	t.Parallel()
	h := startHTTP(t, "", "--idle-timeout", "2s")
	idle, busy := h.connect(t), h.connect(t)
	idle.ok("browser_navigate", map[string]any{"url": fixture.page("/")})
	busy.ok("browser_navigate", map[string]any{"url": fixture.page("/")})
	idlePID, _ := idle.chrome()
	busyPID, _ := busy.chrome()
	deadline := time.Now().Add(3500 * time.Millisecond)
	for time.Now().Before(deadline) { // keep one conversation busy
		busy.eval("1")
		time.Sleep(300 * time.Millisecond)
	}
	if !processGone(idlePID) || processGone(busyPID) {
		t.Fatalf("after 3.5 s: idle Chrome gone = %v (want true), busy Chrome gone = %v (want false)", processGone(idlePID), processGone(busyPID))
	}
	// The MCP session outlived its browser: the next call starts a fresh one.
	r := idle.ok("browser_eval", map[string]any{"expression": "1+1"})
	if !strings.Contains(r.Text, "NOTICE: the previous Chrome was closed after 2s without calls") {
		t.Errorf("first call after the reap:\n%s", r.Text)
	}
}

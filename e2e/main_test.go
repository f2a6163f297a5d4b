// Package e2e_test builds the real chromekeeper binary and drives it over stdio
// with mcp-go's client against real Chromium and pages served on 127.0.0.1
// from testdata.
package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"golang.org/x/net/websocket"

	"github.com/chromekeeper/chromekeeper/internal/leakcheck"
)

var (
	binary  string    // the chromekeeper binary under test
	fixture *fixtures // pages served on 127.0.0.1
)

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	binDir, err := os.MkdirTemp("", "ck-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(binDir)
	binary = filepath.Join(binDir, "chromekeeper")
	build := exec.Command("go", "build", "-o", binary, "../cmd/chromekeeper")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build chromekeeper:", err)
		return 1
	}
	fixture, err = startFixtures("testdata")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer fixture.close()
	return leakcheck.Run(m)
}

// fixtures serves testdata and a few dynamic endpoints on 127.0.0.1 and
// counts the requests it receives.
type fixtures struct {
	URL      string
	server   *http.Server
	requests atomic.Int64
	// swVersion is the version the service worker of /pwa-update/ carries;
	// changing it makes the next update check install a new version.
	swVersion atomic.Int64

	mu   sync.Mutex
	seen []string // request paths in arrival order
}

func startFixtures(dir string) (*fixtures, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f := &fixtures{URL: "http://" + ln.Addr().String()}
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir(dir)))
	// The PWA is served twice: /pwa/ with a service worker that never
	// changes, and /pwa-update/ whose worker version the update test bumps.
	f.swVersion.Store(1)
	serveWorker := func(version func() int64) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/javascript")
			w.Header().Set("Cache-Control", "no-cache")
			fmt.Fprintf(w, serviceWorkerScript, version())
		}
	}
	mux.HandleFunc("/pwa/sw.js", serveWorker(func() int64 { return 1 }))
	mux.Handle("/pwa-update/", http.StripPrefix("/pwa-update/", http.FileServer(http.Dir(filepath.Join(dir, "pwa")))))
	mux.HandleFunc("/pwa-update/sw.js", serveWorker(f.swVersion.Load))
	// A service worker that caches nothing: the offline check must fail.
	mux.Handle("/pwa-nocache/", http.StripPrefix("/pwa-nocache/", http.FileServer(http.Dir(filepath.Join(dir, "pwa")))))
	mux.HandleFunc("/pwa-nocache/sw.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprint(w, networkOnlyWorker)
	})
	cached := http.StripPrefix("/cached/", http.FileServer(http.Dir(filepath.Join(dir, "cached"))))
	mux.HandleFunc("/cached/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		cached.ServeHTTP(w, r)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		ms, _ := strconv.Atoi(r.URL.Query().Get("ms"))
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<title>slow %d</title><p>waited %d ms</p>", ms, ms)
	})
	mux.HandleFunc("/api/echo", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Set-Cookie", "session=abc123")
		fmt.Fprintf(w, `{"method":%q,"query":%q,"body":%q}`, r.Method, r.URL.RawQuery, body)
	})
	mux.HandleFunc("/api/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, strings.Repeat("0123456789", 5000)) // 50 KB
	})
	mux.Handle("/ws", websocket.Handler(func(ws *websocket.Conn) {
		var msg string
		if websocket.Message.Receive(ws, &msg) == nil {
			_ = websocket.Message.Send(ws, "echo: "+msg)
		}
		_, _ = io.Copy(io.Discard, ws) // until the client closes
	}))
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, "<title>Not here</title><p>404</p>")
	})
	f.server = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		f.mu.Lock()
		f.seen = append(f.seen, r.URL.Path)
		f.mu.Unlock()
		mux.ServeHTTP(w, r)
	})}
	go func() { _ = f.server.Serve(ln) }()
	return f, nil
}

func (f *fixtures) close() { _ = f.server.Close() }

// serviceWorkerScript precaches the PWA shell and one API response, answers
// from the cache first and passes everything else to the network. %d is its
// version. It does not call skipWaiting: a new version waits.
const serviceWorkerScript = `const VERSION = %d;
const CACHE = "shell-v" + VERSION;
const PRECACHE = ["./", "index.html", "style.css", "app.js", "api/data.json"];
self.addEventListener("install", (event) => {
  console.log("sw installing version", VERSION);
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(PRECACHE)));
});
self.addEventListener("activate", (event) => {
  event.waitUntil(self.clients.claim());
});
self.addEventListener("fetch", (event) => {
  console.log("sw fetch", new URL(event.request.url).pathname);
  event.respondWith(caches.match(event.request).then((hit) => hit || fetch(event.request)));
});
`

// networkOnlyWorker controls its pages but caches nothing.
const networkOnlyWorker = `self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));
self.addEventListener("fetch", (event) => event.respondWith(fetch(event.request)));
`

// requestsSince returns the paths requested after mark (a value of
// requestCount) and a new mark.
func (f *fixtures) requestsSince(mark int) ([]string, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen[mark:]...), len(f.seen)
}

// requestCount is a mark for requestsSince.
func (f *fixtures) requestCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.seen)
}

// privateFixtures starts a fixture server of the test's own: a test that
// counts the requests a server receives must not see its neighbours'.
func privateFixtures(t *testing.T) *fixtures {
	t.Helper()
	f, err := startFixtures("testdata")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.close)
	return f
}

// page returns the URL of a fixture path.
func (f *fixtures) page(path string) string { return f.URL + path }

// server is one chromekeeper process with a connected MCP client.
type server struct {
	t      *testing.T
	client *client.Client
	cmd    *exec.Cmd
	stderr *syncBuffer
}

// startServer starts chromekeeper with args and initializes an MCP session.
// The server is stopped (stdin closed) when the test ends, and its log is
// printed if the test failed.
func startServer(t *testing.T, args ...string) *server {
	t.Helper()
	return startServerWith(t, nil, args...)
}

func startServerWith(t *testing.T, clientOpts []client.ClientOption, args ...string) *server {
	t.Helper()
	s := &server{t: t, stderr: &syncBuffer{}}
	env := append(os.Environ(), "TMPDIR="+privateTempDir(t))
	tr := transport.NewStdioWithOptions(binary, env, args,
		transport.WithCommandStderrWriter(s.stderr),
		transport.WithCommandFunc(func(ctx context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
			s.cmd = exec.Command(command, args...)
			s.cmd.Env = env
			return s.cmd, nil
		}))
	if err := tr.Start(context.Background()); err != nil {
		t.Fatalf("start chromekeeper: %v", err)
	}
	s.client = client.NewClient(tr, clientOpts...)
	if err := s.client.Start(context.Background()); err != nil { // installs the notification handler
		t.Fatalf("start client: %v", err)
	}
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			t.Logf("chromekeeper stderr:\n%s", s.stderr.String())
		}
	})
	s.initialize("chromekeeper-e2e")
	return s
}

// initialize opens the MCP session as the named client and returns what the
// server negotiated.
func (s *server) initialize(clientName string) *mcp.InitializeResult {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: clientName, Version: "1"}
	res, err := s.client.Initialize(ctx, init)
	if err != nil {
		s.t.Fatalf("initialize %s: %v", clientName, err)
	}
	return res
}

// privateTempDir gives one server process a TMPDIR of its own (short: Chrome's
// socket paths live there) and, once the test and its cleanups are done,
// fails the test if anything is left in it.
func privateTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "s-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var files []os.DirEntry
		var procs []string
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			files, _ = os.ReadDir(dir)
			if procs = leakcheck.Processes(dir); len(files) == 0 && len(procs) == 0 {
				break
			}
		}
		for _, e := range files {
			t.Errorf("the server left %s in its TMPDIR", filepath.Join(dir, e.Name()))
		}
		for _, p := range procs {
			t.Errorf("the server left a process running: %s", p)
		}
		_ = os.RemoveAll(dir)
	})
	return dir
}

// stop closes stdin and waits for the server to exit.
func (s *server) stop() { _ = s.client.Close() }

// result is a tool answer, decoded.
type result struct {
	Text       string
	IsError    bool
	Structured map[string]any
	Images     []mcp.ImageContent
}

// call calls a tool and fails the test on a protocol error (never on a tool error).
func (s *server) call(name string, args map[string]any) result {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := s.client.CallTool(ctx, req)
	if err != nil {
		s.t.Fatalf("%s(%v): protocol error: %v", name, args, err)
	}
	var r result
	r.IsError = res.IsError
	for _, c := range res.Content {
		switch c := c.(type) {
		case mcp.TextContent:
			r.Text += c.Text
		case mcp.ImageContent:
			r.Images = append(r.Images, c)
		}
	}
	switch sc := res.StructuredContent.(type) {
	case map[string]any:
		r.Structured = sc
	case json.RawMessage:
		_ = json.Unmarshal(sc, &r.Structured)
	}
	if r.Structured == nil && len(res.RawStructuredContent) > 0 {
		_ = json.Unmarshal(res.RawStructuredContent, &r.Structured)
	}
	return r
}

// ok calls a tool and fails the test unless it succeeded.
func (s *server) ok(name string, args map[string]any) result {
	s.t.Helper()
	r := s.call(name, args)
	if r.IsError || !strings.Contains(r.Text, "SUCCESS: ") {
		s.t.Fatalf("%s(%v) failed:\n%s", name, args, r.Text)
	}
	return r
}

// fails calls a tool and fails the test unless it answered ERROR with code.
func (s *server) fails(name string, args map[string]any, code string) result {
	s.t.Helper()
	r := s.call(name, args)
	if !r.IsError || !strings.HasPrefix(withoutNotices(r.Text), "ERROR: "+code+": ") {
		s.t.Fatalf("%s(%v): got\n%s\nwant ERROR: %s", name, args, r.Text, code)
	}
	return r
}

// eval evaluates an expression on the current page and returns its Result line.
func (s *server) eval(expr string) string {
	s.t.Helper()
	return field(s.ok("browser_eval", map[string]any{"expression": expr}).Text, "Result")
}

// status returns the browser_session status answer.
func (s *server) status() result {
	s.t.Helper()
	return s.ok("browser_session", nil)
}

// chromePID returns the running Chrome's pid and profile directory.
func (s *server) chrome() (pid int, profile string) {
	s.t.Helper()
	st := s.status().Structured
	pidValue, _ := st["pid"].(float64)
	profile, _ = st["profileDir"].(string)
	if pidValue == 0 || profile == "" {
		s.t.Fatalf("no running Chrome in status: %v", st)
	}
	return int(pidValue), profile
}

// field returns the value of the first "Key: value" line.
func field(text, key string) string {
	for _, l := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(l, key+": "); ok {
			return v
		}
	}
	return ""
}

func withoutNotices(text string) string {
	var kept []string
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, "NOTICE: ") {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}

// processGone reports whether pid no longer runs (a zombie counts as gone).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) > 0 && fields[0] == "Z"
}

// eventually polls cond until it holds or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// syncBuffer is a bytes.Buffer safe for concurrent writes and reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

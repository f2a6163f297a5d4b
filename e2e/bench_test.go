package e2e_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/launcher"
	"github.com/go-rod/rod/lib/proto"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/chromekeeper/chromekeeper/browser"
)

var benchTable = flag.Bool("bench-table", false, "run TestBenchmarkTable (make bench)")

// TestBenchmarkTable measures the real binary over stdio and, as the floor,
// the same operations done directly with rod in-process. It runs only under
// `make bench`: timing goals live here, never in pass/fail tests.
func TestBenchmarkTable(t *testing.T) {
	if !*benchTable {
		t.Skip("run with make bench")
	}
	var rows []benchRow
	add := func(name string, ours, floor, target string) {
		rows = append(rows, benchRow{name, ours, floor, target})
	}

	// Cold: a fresh server per sample; the timed call includes Chrome's launch.
	var cold []time.Duration
	for range 5 {
		s := startServer(t)
		cold = append(cold, timed(func() { s.ok("browser_navigate", map[string]any{"url": fixture.page("/")}) }))
		s.stop()
	}

	s := startServer(t)
	s.ok("browser_navigate", map[string]any{"url": fixture.page("/")})
	warm := repeat(20, func() { s.ok("browser_navigate", map[string]any{"url": fixture.page("/")}) })
	evals := repeat(200, func() { s.ok("browser_eval", map[string]any{"expression": "1+1"}) })
	var shotBytes int
	shots := repeat(30, func() {
		r := s.ok("browser_screenshot", nil)
		shotBytes = int(r.Structured["bytes"].(float64))
	})
	s.ok("browser_navigate", map[string]any{"url": fixture.page("/pwa/")})
	s.ok("browser_eval", map[string]any{"expression": "await window.swReady; 1"})
	s.ok("browser_reload", nil)
	sources := repeat(50, func() { s.ok("browser_network_sources", nil) })
	workers := repeat(50, func() { s.ok("browser_service_workers", nil) })
	ingest, lost := eventIngestion(t, s, 5000)
	s.ok("browser_clear_events", nil)
	s.eval("for (let i = 0; i < 1000; i++) console.log('bench', i); 1")
	time.Sleep(500 * time.Millisecond)
	reads := repeat(20, func() {
		if n := len(s.ok("browser_read_events", map[string]any{"limit": 1000}).Structured["events"].([]any)); n < 1000 {
			t.Fatalf("read %d events, want 1000", n)
		}
	})
	tools, err := s.client.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	toolsJSON, _ := json.Marshal(tools)
	time.Sleep(2 * time.Second) // let the server settle before reading its memory
	rss := rssKiB(s.cmd.Process.Pid)
	pid, _ := s.chrome()
	procs, pss := processGroup(pid)

	floor := rodFloor(t)

	// 16 conversations × 50 mixed calls over HTTP, each with its own Chrome.
	h := startHTTP(t, "")
	loadStart := time.Now()
	load := loadTest(t, h, 16, 50)
	loadElapsed := time.Since(loadStart)
	leftAfterLoad := 0
	eventually(t, 15*time.Second, "every Chrome of the load test closed", func() bool {
		leftAfterLoad = len(chromeMains(h.cmd.Process.Pid))
		return leftAfterLoad == 0
	})

	add("cold first navigate (Chrome launch included)", stats(cold),
		"launch+connect "+stats(floor.launch)+"; +page+load "+stats(floor.coldNavigate), "≤ 400 ms")
	add("warm navigate", stats(warm), "rod Navigate+WaitLoad "+stats(floor.warmNavigate), "")
	add("browser_eval 1+1 (200 calls)", stats(evals), "rod Page.Eval "+stats(floor.rodEval)+"; raw Runtime.evaluate "+stats(floor.rawEval), "median ≤ 3 ms")
	add("viewport screenshot 1280x800 png", fmt.Sprintf("%s, %d KB", stats(shots), shotBytes>>10), "rod Page.Screenshot "+stats(floor.screenshot), "≤ 60 ms")
	add("browser_network_sources (PWA page, 50 calls)", stats(sources), "", "")
	add("browser_service_workers list (50 calls)", stats(workers), "", "")
	add("event ingestion (5000 console events)", fmt.Sprintf("%.0f events/s, %d lost", ingest, lost), "", "no loss below capacity")
	add("browser_read_events, 1000 events (20 calls)", stats(reads), "", "")
	var loadTools []string
	for tool := range load {
		loadTools = append(loadTools, tool)
	}
	sort.Strings(loadTools)
	for _, tool := range loadTools {
		add("HTTP load 16×50: "+tool, stats(load[tool]), "", "zero errors")
	}
	add("HTTP: 17th conversation with 16 browsers up", seventeenth(t, h), "", "SESSION_LIMIT")
	add("HTTP load 16×50: whole run", fmt.Sprintf("%s, %d Chromes left after", loadElapsed.Round(time.Millisecond), leftAfterLoad), "", "0 left")
	add("server RSS while idle", fmt.Sprintf("%.1f MB", float64(rss)/1024), "", "≤ 40 MB")
	add("Chrome processes per session", fmt.Sprintf("%d processes, %.0f MB PSS", procs, float64(pss)/1024), "", "")
	add("tools/list answer", fmt.Sprintf("%d bytes, %d tools", len(toolsJSON), len(tools.Tools)), "", "≤ 12 KB for 16 tools")
	printTable(rows)
}

// seventeenth opens 16 conversations with a browser each, then asks for a
// 17th browser, which the default --max-sessions 16 must refuse.
func seventeenth(t *testing.T, h *httpServer) string {
	t.Helper()
	var open []*server
	for range 16 {
		s := h.connect(t)
		s.ok("browser_navigate", map[string]any{"url": fixture.page("/")})
		open = append(open, s)
	}
	extra := h.connect(t)
	r := extra.call("browser_navigate", map[string]any{"url": fixture.page("/")})
	for _, s := range append(open, extra) {
		s.stop()
	}
	if r.IsError && strings.HasPrefix(r.Text, "ERROR: SESSION_LIMIT: ") {
		return "SESSION_LIMIT (" + strings.TrimPrefix(strings.SplitN(r.Text, "\n", 2)[0], "ERROR: SESSION_LIMIT: ") + ")"
	}
	t.Errorf("the 17th conversation got:\n%s", r.Text)
	return "NOT REFUSED"
}

// eventIngestion logs n console messages in one burst and measures how fast
// they reach the page's event buffer, and how many never do.
func eventIngestion(t *testing.T, s *server, n int) (perSecond float64, lost int) {
	t.Helper()
	s.ok("browser_clear_events", nil)
	start := time.Now()
	s.eval(fmt.Sprintf("for (let i = 0; i < %d; i++) console.log('ingest', i); 1", n))
	total := 0
	for time.Since(start) < 30*time.Second {
		if total = countEvents(s, "console"); total >= n {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return float64(total) / time.Since(start).Seconds(), n - total
}

// countEvents pages through a page's buffer and counts the events of a kind.
func countEvents(s *server, kind string) int {
	total := 0
	for offset := 0.0; ; {
		page := s.ok("browser_read_events", map[string]any{"kinds": []any{kind}, "offset": offset, "limit": 1000})
		events := page.Structured["events"].([]any)
		total += len(events)
		next := page.Structured["nextOffset"].(float64)
		if len(events) == 0 || next == offset {
			return total
		}
		offset = next
	}
}

type benchRow struct{ name, ours, floor, target string }

func printTable(rows []benchRow) {
	fmt.Println()
	fmt.Printf("| %-46s | %-34s | %-66s | %-18s |\n", "measurement", "chromekeeper (stdio, real binary)", "floor: rod in-process, same Chrome", "target")
	fmt.Printf("|%s|%s|%s|%s|\n", strings.Repeat("-", 48), strings.Repeat("-", 36), strings.Repeat("-", 68), strings.Repeat("-", 20))
	for _, r := range rows {
		fmt.Printf("| %-46s | %-34s | %-66s | %-18s |\n", r.name, r.ours, r.floor, r.target)
	}
	fmt.Println()
}

type floorTimes struct {
	launch, coldNavigate, warmNavigate, rodEval, rawEval, screenshot []time.Duration
}

// rodFloor does the same work directly with rod: what Chrome itself costs.
func rodFloor(t *testing.T) floorTimes {
	t.Helper()
	bin, err := browser.Find(os.Getenv("CHROME_PATH"))
	if err != nil {
		t.Fatal(err)
	}
	var f floorTimes
	var b *rod.Browser
	var l *launcher.Launcher
	for i := range 5 {
		l = launcher.New().Bin(bin).Leakless(false).NoSandbox(os.Geteuid() == 0).
			UserDataDir(filepath.Join(os.TempDir(), "rod-floor-"+strconv.Itoa(i))).
			Set("disable-component-update").Set("disable-crash-reporter")
		start := time.Now()
		u, err := l.Launch()
		if err != nil {
			t.Fatal(err)
		}
		b = rod.New().ControlURL(u).NoDefaultDevice()
		if err := b.Connect(); err != nil {
			t.Fatal(err)
		}
		f.launch = append(f.launch, time.Since(start))
		b.MustPage(fixture.page("/")).MustWaitLoad()
		f.coldNavigate = append(f.coldNavigate, time.Since(start))
		if i < 4 {
			_ = b.Close()
			l.Kill()
			l.Cleanup()
		}
	}
	defer func() {
		_ = b.Close()
		l.Kill()
		l.Cleanup()
	}()
	page := b.MustPage(fixture.page("/")).MustWaitLoad()
	page.MustSetViewport(1280, 800, 1, false)
	f.warmNavigate = repeat(20, func() { page.MustNavigate(fixture.page("/")).MustWaitLoad() })
	f.rodEval = repeat(200, func() { page.MustEval("() => 1+1") })
	f.rawEval = repeat(200, func() {
		if _, err := (proto.RuntimeEvaluate{Expression: "1+1", ReturnByValue: true}).Call(page); err != nil {
			t.Fatal(err)
		}
	})
	f.screenshot = repeat(30, func() { page.MustScreenshot() })
	return f
}

func timed(f func()) time.Duration {
	start := time.Now()
	f()
	return time.Since(start)
}

func repeat(n int, f func()) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = timed(f)
	}
	return out
}

// stats formats the median and 95th percentile.
func stats(d []time.Duration) string {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	p := func(q float64) time.Duration { return s[int(q*float64(len(s)-1))] }
	return fmt.Sprintf("median %s, p95 %s", round(p(0.5)), round(p(0.95)))
}

func round(d time.Duration) string {
	if d < 10*time.Millisecond {
		return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000)
	}
	return fmt.Sprintf("%d ms", d.Milliseconds())
}

// rssKiB reads a process's resident set size.
func rssKiB(pid int) int {
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.Fields(v)[0])
			return n
		}
	}
	return 0
}

// processGroup counts the processes in a process group and sums their PSS in KiB.
func processGroup(pgid int) (count, pssKiB int) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) < 3 || fields[2] != strconv.Itoa(pgid) {
			continue
		}
		count++
		rollup, _ := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
		for _, l := range strings.Split(string(rollup), "\n") {
			if v, ok := strings.CutPrefix(l, "Pss:"); ok {
				n, _ := strconv.Atoi(strings.Fields(v)[0])
				pssKiB += n
			}
		}
	}
	return count, pssKiB
}

package e2e_test

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// installPWA loads the fixture PWA, waits for its service worker to take
// control, and reloads so that the page is served by it.
func installPWA(t *testing.T, s *server) {
	t.Helper()
	installPWAAt(t, s, fixture.page("/pwa/"))
}

func installPWAAt(t *testing.T, s *server, url string) {
	t.Helper()
	s.ok("browser_navigate", map[string]any{"url": url})
	s.ok("browser_eval", map[string]any{"expression": "await window.swReady; 'ready'"})
	s.ok("browser_reload", nil)
	waitForData(t, s, "hello from the API")
}

// waitForData waits until the PWA page shows text in #data.
func waitForData(t *testing.T, s *server, text string) {
	t.Helper()
	expr := fmt.Sprintf(`await new Promise((resolve) => {
		const check = () => document.getElementById("data")?.textContent === %q ? resolve(true) : setTimeout(check, 20);
		check();
	})`, text)
	if got := field(s.ok("browser_eval", map[string]any{"expression": expr, "timeout_ms": 5000}).Text, "Result"); got != "true" {
		t.Fatalf("#data never showed %q", text)
	}
}

// sourceLine returns the network_sources line for a URL path of the shared
// fixture server and an initiator ("" for the page itself).
func sourceLine(text, path, initiator string) string {
	return sourceLineOf(fixture, text, path, initiator)
}

func sourceLineOf(f *fixtures, text, path, initiator string) string {
	for _, l := range strings.Split(text, "\n") {
		fields := strings.Fields(l)
		url := ""
		for _, f := range fields {
			if strings.HasPrefix(f, "http://") {
				url = f
			}
		}
		if url != f.page(path) {
			continue
		}
		if (initiator == "" && !strings.Contains(l, "initiator:")) || (initiator != "" && strings.HasSuffix(l, "initiator: "+initiator)) {
			return l
		}
	}
	return ""
}

func TestServiceWorkerControlsThePageAndSourcesSayServiceWorker(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	installPWA(t, s)

	list := s.ok("browser_service_workers", nil)
	if !strings.Contains(list.Text, "SUCCESS: 1 service worker registrations") ||
		!regexp.MustCompile(`version \d+: activated, running, script `+regexp.QuoteMeta(fixture.page("/pwa/sw.js"))+`, controls p1`).MatchString(list.Text) ||
		!strings.Contains(list.Text, "Page p1 controlled: true") {
		t.Errorf("service workers:\n%s", list.Text)
	}
	regs := list.Structured["registrations"].([]any)
	if len(regs) != 1 || regs[0].(map[string]any)["scope"] != fixture.page("/pwa/") {
		t.Errorf("structured registrations: %v", regs)
	}

	src := s.ok("browser_network_sources", nil)
	for _, path := range []string{"/pwa/", "/pwa/style.css", "/pwa/app.js", "/pwa/api/data.json"} {
		if l := sourceLine(src.Text, path, ""); !strings.HasPrefix(l, `service-worker/cache-storage (cache "shell-v1") 200 GET`) {
			t.Errorf("%s: %q, want served by the service worker from cache storage\n%s", path, l, src.Text)
		}
	}
	for _, path := range []string{"/pwa/", "/pwa/style.css", "/pwa/app.js", "/pwa/api/data.json"} {
		if l := sourceLine(src.Text, path, "sw1"); l == "" {
			t.Errorf("the service worker's own precache request for %s is missing (initiator: sw1)\n%s", path, src.Text)
		}
	}
	if !regexp.MustCompile(`Sources: .*service-worker [4-9]`).MatchString(src.Text) {
		t.Errorf("summary does not count the service-worker bucket:\n%s", src.Text)
	}
	counts := src.Structured["counts"].(map[string]any)
	if counts["service-worker"].(float64) < 4 {
		t.Errorf("structured counts: %v", counts)
	}

	pages := s.ok("browser_pages", nil)
	if !strings.Contains(pages.Text, "  sw1 service_worker "+fixture.page("/pwa/sw.js")+" of p1") {
		t.Errorf("pages does not list the service worker:\n%s", pages.Text)
	}

	scope := s.ok("browser_eval", map[string]any{"expression": "self.registration.scope", "target": "sw1"})
	if field(scope.Text, "Result") != fmt.Sprintf("%q", fixture.page("/pwa/")) {
		t.Errorf("eval in sw1:\n%s", scope.Text)
	}
	keys := s.ok("browser_eval", map[string]any{"expression": "(await caches.keys()).join()", "target": "sw1"})
	if field(keys.Text, "Result") != `"shell-v1"` {
		t.Errorf("caches.keys() in sw1:\n%s", keys.Text)
	}
	s.fails("browser_eval", map[string]any{"expression": "1", "target": "sw9"}, "TARGET_NOT_FOUND")
}

func TestReloadServesCacheableAssetsFromTheHTTPCache(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.ok("browser_navigate", map[string]any{"url": fixture.page("/cached/")})
	first := s.ok("browser_network_sources", nil)
	if l := sourceLine(first.Text, "/cached/style.css", ""); !strings.HasPrefix(l, "network 200 GET") {
		t.Errorf("first load of style.css: %q, want network\n%s", l, first.Text)
	}
	s.ok("browser_reload", nil)
	again := s.ok("browser_network_sources", nil)
	cached := 0
	for _, path := range []string{"/cached/style.css", "/cached/app.js", "/cached/pixel.svg"} {
		l := sourceLine(again.Text, path, "")
		switch {
		case strings.HasPrefix(l, "disk-cache 200 GET"), strings.HasPrefix(l, "memory-cache 200 GET"):
			cached++
		case l == "":
			// A resource reused within the same document may produce no events at all.
		default:
			t.Errorf("after reload, %s: %q, want disk-cache or memory-cache", path, l)
		}
	}
	if cached == 0 {
		t.Errorf("no disk-cache or memory-cache entry after a reload:\n%s", again.Text)
	}
	if !strings.Contains(again.Text, "responses for p1 ("+fixture.page("/cached/")+")") {
		t.Errorf("header:\n%s", again.Text)
	}
}

func TestOfflineCoversTheServiceWorkerAndReachesNoServer(t *testing.T) {
	t.Parallel()
	f := privateFixtures(t)
	s := startServer(t)
	installPWAAt(t, s, f.page("/pwa/"))

	mark := f.requestCount()
	off := s.ok("browser_set_offline", map[string]any{"offline": true})
	if field(off.Text, "Offline") != "true" || !strings.HasPrefix(field(off.Text, "Covers"), "p1, sw1 ") {
		t.Errorf("set_offline answer:\n%s", off.Text)
	}
	if !strings.Contains(field(off.Text, "Not covered"), "update checks") {
		t.Errorf("the answer does not say plainly that update checks escape:\n%s", off.Text)
	}

	reload := s.ok("browser_reload", nil)
	if field(reload.Text, "Title") != "fixture PWA" {
		t.Errorf("offline reload:\n%s", reload.Text)
	}
	waitForData(t, s, "hello from the API")
	failed := s.fails("browser_eval", map[string]any{"expression": "await fetch('api/live.json').then(r => r.status)"}, "EVAL_EXCEPTION")
	if !strings.Contains(failed.Text, "Failed to fetch") {
		t.Errorf("uncached fetch while offline:\n%s", failed.Text)
	}
	inWorker := s.fails("browser_eval", map[string]any{"expression": "await fetch('api/live.json').then(r => r.status)", "target": "sw1"}, "EVAL_EXCEPTION")
	if !strings.Contains(inWorker.Text, "Failed to fetch") {
		t.Errorf("the service worker's own fetch while offline:\n%s", inWorker.Text)
	}
	// A new registration's script fetch is the browser's own: blocked too.
	register := s.ok("browser_eval", map[string]any{"expression": "await navigator.serviceWorker.register('sw.js?other', {scope: './other/'}).then(() => 'registered', () => 'refused')"})
	if field(register.Text, "Result") != `"refused"` {
		t.Errorf("registering a service worker offline:\n%s", register.Text)
	}
	s.fails("browser_service_workers", map[string]any{"action": "update"}, "INVALID_INPUT")
	src := s.ok("browser_network_sources", nil)
	if l := sourceLineOf(f, src.Text, "/pwa/api/live.json", "sw1"); !strings.Contains(l, "net::ERR_INTERNET_DISCONNECTED") {
		t.Errorf("the worker's request for live.json: %q\n%s", l, src.Text)
	}
	if seen, _ := f.requestsSince(mark); len(seen) > 0 {
		t.Errorf("the server received %d requests while offline: %v", len(seen), seen)
	}

	s.ok("browser_set_offline", map[string]any{"offline": false})
	online := s.ok("browser_eval", map[string]any{"expression": "await fetch('api/live.json').then(r => r.json()).then(d => d.message)"})
	if field(online.Text, "Result") != `"live data, never cached"` {
		t.Errorf("after offline off:\n%s", online.Text)
	}
	if st := s.status(); st.Structured["offline"] != false {
		t.Errorf("status offline = %v", st.Structured["offline"])
	}
}

func TestOfflineHoldsInPagesOpenedLater(t *testing.T) {
	t.Parallel()
	f := privateFixtures(t)
	s := startServer(t)
	installPWAAt(t, s, f.page("/pwa/"))
	s.ok("browser_set_offline", map[string]any{"offline": true})
	mark := f.requestCount()

	opened := s.ok("browser_pages", map[string]any{"action": "new", "url": f.page("/pwa/")})
	if field(opened.Text, "Title") != "fixture PWA" {
		t.Errorf("a new page of the PWA while offline:\n%s", opened.Text)
	}
	waitForData(t, s, "hello from the API")
	s.fails("browser_eval", map[string]any{"expression": "await fetch('api/live.json?from=p2')"}, "EVAL_EXCEPTION")
	s.fails("browser_pages", map[string]any{"action": "new", "url": f.page("/second.html")}, "NAVIGATION_FAILED")
	if seen, _ := f.requestsSince(mark); len(seen) > 0 {
		t.Errorf("the server received requests while offline: %v", seen)
	}
	if st := s.status(); st.Structured["offline"] != true {
		t.Errorf("status offline = %v", st.Structured["offline"])
	}
}

func TestServiceWorkerActionsTakeEffect(t *testing.T) {
	t.Parallel() // the only test of /pwa-update/, whose worker version it bumps
	s := startServer(t)
	installPWAAt(t, s, fixture.page("/pwa-update/"))

	caches := s.ok("browser_service_workers", map[string]any{"action": "caches"})
	if !strings.Contains(caches.Text, `Cache "shell-v1": 5 entries`) || !strings.Contains(caches.Text, "  "+fixture.page("/pwa-update/api/data.json")) {
		t.Errorf("caches:\n%s", caches.Text)
	}
	if got := s.eval("(await caches.keys()).join()"); got != `"shell-v1"` {
		t.Errorf("the page sees caches %s", got)
	}

	// A new script version installs and waits: the old one controls the page.
	fixture.swVersion.Add(1)
	defer fixture.swVersion.Add(-1)
	updated := s.ok("browser_service_workers", map[string]any{"action": "update"})
	if !regexp.MustCompile(`version \d+: installed, `).MatchString(updated.Text) {
		t.Errorf("after update, no version is waiting:\n%s", updated.Text)
	}
	if got := s.eval("(await navigator.serviceWorker.getRegistration()).waiting?.state"); got != `"installed"` {
		t.Errorf("the page sees registration.waiting = %s, want installed", got)
	}

	skipped := s.ok("browser_service_workers", map[string]any{"action": "skip_waiting"})
	if !regexp.MustCompile(`version \d+: redundant, `).MatchString(skipped.Text) || regexp.MustCompile(`installed, `).MatchString(skipped.Text) {
		t.Errorf("after skip_waiting:\n%s", skipped.Text)
	}
	if got := s.eval("await navigator.serviceWorker.getRegistration().then(r => [!!r.waiting, r.active.state].join())"); got != `"false,activated"` {
		t.Errorf("the page sees waiting/active = %s after skip_waiting", got)
	}
	s.fails("browser_service_workers", map[string]any{"action": "skip_waiting"}, "INVALID_INPUT")

	stopped := s.ok("browser_service_workers", map[string]any{"action": "stop"})
	if regexp.MustCompile(`activated, running`).MatchString(stopped.Text) || !strings.Contains(stopped.Text, "activated, stopped") {
		t.Errorf("after stop:\n%s", stopped.Text)
	}

	gone := s.ok("browser_service_workers", map[string]any{"action": "unregister"})
	if !strings.Contains(gone.Text, "(unregistered)") {
		t.Errorf("after unregister:\n%s", gone.Text)
	}
	if got := s.eval("(await navigator.serviceWorker.getRegistrations()).length"); got != "0" {
		t.Errorf("the page still sees %s registrations", got)
	}
	s.fails("browser_service_workers", map[string]any{"action": "update"}, "TARGET_NOT_FOUND")
}

func TestWorkersAreListedWithTheirPage(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.ok("browser_navigate", map[string]any{"url": fixture.page("/")})
	s.eval("window.w = new Worker(URL.createObjectURL(new Blob(['onmessage = (e) => postMessage(e.data * 2)']))); 1")
	var pages string
	eventually(t, 5*time.Second, "w1 worker listed", func() bool {
		pages = s.ok("browser_pages", nil).Text
		return strings.Contains(pages, " w1 worker ")
	})
	if !regexp.MustCompile(`  w1 worker blob:\S+ of p1`).MatchString(pages) {
		t.Errorf("the dedicated worker is not listed with its page:\n%s", pages)
	}
	if got := field(s.ok("browser_eval", map[string]any{"expression": "typeof importScripts", "target": "w1"}).Text, "Result"); got != `"function"` {
		t.Errorf("eval in w1: %s", got)
	}
	structured := s.ok("browser_pages", nil).Structured["workers"].([]any)
	if !slices.ContainsFunc(structured, func(w any) bool { return w.(map[string]any)["id"] == "w1" }) {
		t.Errorf("structured workers: %v", structured)
	}
}

func TestCrossSiteIframeIsWatchedAndGoesOffline(t *testing.T) {
	t.Parallel()
	f := privateFixtures(t)
	s := startServer(t)
	// localhost and 127.0.0.1 are different sites: the frame runs out of process.
	frameURL := strings.Replace(f.page("/second.html"), "127.0.0.1", "localhost", 1)
	page := "data:text/html," + url.PathEscape(fmt.Sprintf(`<title>host</title><iframe src=%q></iframe>`, frameURL))
	s.ok("browser_navigate", map[string]any{"url": page})
	var pages string
	eventually(t, 5*time.Second, "f1 iframe listed", func() bool {
		pages = s.ok("browser_pages", nil).Text
		return strings.Contains(pages, " f1 iframe ")
	})
	if !strings.Contains(pages, "  f1 iframe "+frameURL+" of p1") {
		t.Fatalf("the out-of-process iframe is not listed with its page:\n%s", pages)
	}
	off := s.ok("browser_set_offline", map[string]any{"offline": true})
	if !strings.HasPrefix(field(off.Text, "Covers"), "f1, p1 ") {
		t.Errorf("offline does not cover the frame:\n%s", off.Text)
	}
	mark := f.requestCount()
	r := s.fails("browser_eval", map[string]any{"expression": "await fetch('/second.html?from=frame')", "target": "f1"}, "EVAL_EXCEPTION")
	if !strings.Contains(r.Text, "Failed to fetch") {
		t.Errorf("fetch in the frame while offline:\n%s", r.Text)
	}
	if seen, _ := f.requestsSince(mark); len(seen) > 0 {
		t.Errorf("the server received requests while offline: %v", seen)
	}
}

func TestNetworkSourcesFilters(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	installPWA(t, s)
	pageOnly := s.ok("browser_network_sources", map[string]any{"include_worker_requests": false})
	if strings.Contains(pageOnly.Text, "initiator: sw1") {
		t.Errorf("include_worker_requests false still lists worker requests:\n%s", pageOnly.Text)
	}
	limited := s.ok("browser_network_sources", map[string]any{"limit": 2})
	if !strings.Contains(limited.Text, "Showing the newest 2") || len(limited.Structured["requests"].([]any)) != 2 {
		t.Errorf("limit 2:\n%s", limited.Text)
	}
	if total := limited.Structured["total"].(float64); total < 8 {
		t.Errorf("total = %v, want all responses counted despite the limit", total)
	}
}

package e2e_test

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// consoleLines returns the message lines of a console answer (after the header).
func consoleLines(text string) []string {
	var out []string
	header := true
	for _, l := range strings.Split(text, "\n") {
		if header {
			header = !strings.HasPrefix(l, "Shown: ")
			continue
		}
		if !strings.HasPrefix(l, "    at ") {
			out = append(out, l)
		}
	}
	return out
}

func hasLine(lines []string, parts ...string) bool {
	for _, l := range lines {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(l, p)
		}
		if ok {
			return true
		}
	}
	return false
}

func TestConsoleEpochsAcrossReload(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.ok("browser_navigate", map[string]any{"url": fixture.page("/console.html")})

	first := s.ok("browser_console_logs", nil)
	lines := consoleLines(first.Text)
	for _, want := range [][]string{
		{" log page loaded first (" + fixture.page("/console.html") + ":"},
		{" warn page a warning {answer: 42}"},
		{" debug page a debug line"},
		{" error page Uncaught ReferenceError: missingFunction is not defined"},
	} {
		if !hasLine(lines, want...) {
			t.Errorf("first query lacks %q:\n%s", want, first.Text)
		}
	}
	if !strings.Contains(first.Text, "\n    at explode ("+fixture.page("/console.html")+":") {
		t.Errorf("the uncaught exception has no stack:\n%s", first.Text)
	}
	if !strings.Contains(first.Text, "[First console query of this page in this conversation]") {
		t.Errorf("first query delta:\n%s", first.Text)
	}

	s.eval("console.log('before reload'); 1")
	s.ok("browser_reload", nil)
	s.eval("console.log('after reload'); 1")
	again := s.ok("browser_console_logs", nil)
	lines = consoleLines(again.Text)
	if hasLine(lines, "before reload") || !hasLine(lines, "log page after reload") {
		t.Errorf("after a reload the query must show only the new epoch:\n%s", again.Text)
	}
	if !strings.Contains(again.Text, "\n[PAGE RELOADED since your last query]\n") || field(again.Text, "Epoch") == "" ||
		!strings.Contains(field(again.Text, "Epoch"), "began with a reload") {
		t.Errorf("reload delta and header:\n%s", again.Text)
	}

	all := s.ok("browser_console_logs", map[string]any{"include_previous_epochs": true})
	lines = consoleLines(all.Text)
	if !hasLine(lines, "before reload", "[epoch 1]") || !hasLine(lines, "after reload") || hasLine(lines, "after reload", "[epoch") {
		t.Errorf("include_previous_epochs must show both epochs, the old one tagged:\n%s", all.Text)
	}

	quiet := s.ok("browser_console_logs", nil)
	if !strings.Contains(quiet.Text, "\n[No navigation or HMR changes since your last query]\n") {
		t.Errorf("a query with nothing new:\n%s", quiet.Text)
	}

	s.ok("browser_navigate", map[string]any{"url": fixture.page("/console.html?second")})
	nav := s.ok("browser_console_logs", nil)
	if !strings.Contains(nav.Text, "[PAGE NAVIGATED since your last query]") || !hasLine(consoleLines(nav.Text), "loaded ?second") {
		t.Errorf("after a navigation:\n%s", nav.Text)
	}
}

func TestConsoleKeepsMessagesAcrossSPANavigations(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.ok("browser_navigate", map[string]any{"url": fixture.page("/console.html")})
	s.ok("browser_console_logs", nil)
	s.eval("console.log('before pushState'); history.pushState({}, '', '/route-a'); history.pushState({}, '', '/route-b'); 1")
	r := s.ok("browser_console_logs", nil)
	if !hasLine(consoleLines(r.Text), "before pushState") || !hasLine(consoleLines(r.Text), "loaded first") {
		t.Errorf("SPA navigations hid messages:\n%s", r.Text)
	}
	if got := field(r.Text, "SPA navigations"); got != "2 this epoch, last to "+fixture.page("/route-b") {
		t.Errorf("SPA navigations = %q\n%s", got, r.Text)
	}
	if !strings.Contains(r.Text, "[No navigation or HMR changes since your last query]") {
		t.Errorf("a pushState is not a reload:\n%s", r.Text)
	}
}

func TestConsoleFilters(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.ok("browser_navigate", map[string]any{"url": fixture.page("/console.html")})
	mid := time.Now().UnixMilli()
	time.Sleep(20 * time.Millisecond)
	s.eval("console.error('late error'); console.info('late info'); for (let i = 0; i < 3; i++) console.log('x'); 1")

	byLevel := consoleLines(s.ok("browser_console_logs", map[string]any{"level": []any{"error"}}).Text)
	if !hasLine(byLevel, "error page late error") || hasLine(byLevel, " log page ") || hasLine(byLevel, " warn page ") {
		t.Errorf("level error: %q", byLevel)
	}
	byLevels := consoleLines(s.ok("browser_console_logs", map[string]any{"level": "warn,info"}).Text)
	if !hasLine(byLevels, "warn page a warning") || !hasLine(byLevels, "info page late info") || hasLine(byLevels, "error") {
		t.Errorf("level warn,info: %q", byLevels)
	}
	byPattern := consoleLines(s.ok("browser_console_logs", map[string]any{"pattern": "^late (error|info)$"}).Text)
	if len(byPattern) != 2 {
		t.Errorf("pattern: %q", byPattern)
	}
	bySince := consoleLines(s.ok("browser_console_logs", map[string]any{"since": mid}).Text)
	if hasLine(bySince, "loaded first") || !hasLine(bySince, "late error") {
		t.Errorf("since: %q", bySince)
	}
	byLimit := s.ok("browser_console_logs", map[string]any{"limit": 2})
	if lines := consoleLines(byLimit.Text); len(lines) != 2 || !hasLine(lines, "log page x", "(×3)") {
		t.Errorf("limit 2 (with the three x folded): %q", lines)
	}
	if got := len(byLimit.Structured["messages"].([]any)); got != 2 {
		t.Errorf("structured messages with limit 2: %d", got)
	}
	if page := consoleLines(s.ok("browser_console_logs", map[string]any{"source": "worker"}).Text); len(page) != 0 {
		t.Errorf("source worker on a page without workers: %q", page)
	}
	s.fails("browser_console_logs", map[string]any{"pattern": "(unclosed"}, "INVALID_INPUT")
	s.fails("browser_console_logs", map[string]any{"level": []any{"loud"}}, "INVALID_INPUT")
}

func TestConsoleShowsServiceWorkerMessages(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.ok("browser_navigate", map[string]any{"url": fixture.page("/pwa/")})
	s.ok("browser_eval", map[string]any{"expression": "await window.swReady; 1"})
	install := consoleLines(s.ok("browser_console_logs", nil).Text)
	if !hasLine(install, " log sw1 sw installing version 1") {
		t.Errorf("the install handler's log is missing: %q", install)
	}
	s.ok("browser_reload", nil)
	waitForData(t, s, "hello from the API")
	fetches := s.ok("browser_console_logs", map[string]any{"source": "sw1"})
	lines := consoleLines(fetches.Text)
	if !hasLine(lines, " log sw1 sw fetch /pwa/app.js") || hasLine(lines, " page ") {
		t.Errorf("the fetch handler's logs with source sw1:\n%s", fetches.Text)
	}
	if pageOnly := consoleLines(s.ok("browser_console_logs", map[string]any{"source": "page"}).Text); hasLine(pageOnly, " sw1 ") {
		t.Errorf("source page shows worker lines: %q", pageOnly)
	}
}

func TestConsoleBurstIsCountedAndBounded(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.ok("browser_navigate", map[string]any{"url": fixture.page("/")})
	s.eval("for (let i = 0; i < 10000; i++) console.log('burst', i); 1")
	var r result
	eventually(t, 10*time.Second, "all 10000 burst messages matched", func() bool {
		r = s.ok("browser_console_logs", map[string]any{"pattern": "^burst "})
		return r.Structured["matched"] == float64(10000)
	})
	lines := consoleLines(r.Text)
	if len(lines) != 100 || !strings.HasSuffix(lines[len(lines)-1], "log page burst 9999") {
		t.Errorf("default limit shows %d lines, last %q; want the newest 100", len(lines), lines[len(lines)-1])
	}
	big := s.ok("browser_console_logs", map[string]any{"limit": 1000})
	if len(big.Text) > 40<<10 {
		t.Errorf("a 1000-line answer is %d bytes, want it bounded", len(big.Text))
	}
	if n, _ := strconv.Atoi(strings.Fields(big.Text)[1]); n < 10000 {
		t.Errorf("summary counts %d messages, want at least 10000:\n%.200s", n, big.Text)
	}
}

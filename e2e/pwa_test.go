package e2e_test

import (
	"testing"
)

func TestPWAExplore(t *testing.T) {
	s := startServer(t)
	s.ok("browser_navigate", map[string]any{"url": fixture.page("/pwa/")})
	t.Log(s.ok("browser_eval", map[string]any{"expression": "await window.swReady; navigator.serviceWorker.controller?.scriptURL"}).Text)
	t.Log(s.ok("browser_reload", nil).Text)
	t.Log(s.ok("browser_service_workers", nil).Text)
	t.Log(s.ok("browser_network_sources", nil).Text)
	t.Log(s.ok("browser_pages", nil).Text)
	t.Log(s.ok("browser_service_workers", map[string]any{"action": "caches"}).Text)
	t.Log(s.ok("browser_eval", map[string]any{"expression": "(await caches.keys()).join()", "target": "sw1"}).Text)
	mark := fixture.requestCount()
	t.Log(s.ok("browser_set_offline", map[string]any{"offline": true}).Text)
	t.Log(s.ok("browser_reload", nil).Text)
	t.Log(s.ok("browser_eval", map[string]any{"expression": "document.getElementById('data').textContent"}).Text)
	t.Log(s.call("browser_eval", map[string]any{"expression": "await fetch('api/live.json').then(r => r.status)"}).Text)
	t.Log(s.ok("browser_network_sources", nil).Text)
	seen, _ := fixture.requestsSince(mark)
	t.Logf("server saw while offline: %v", seen)
	t.Log(s.ok("browser_set_offline", map[string]any{"offline": false}).Text)
	t.Log(s.call("browser_eval", map[string]any{"expression": "await fetch('api/live.json').then(r => r.status)"}).Text)
}

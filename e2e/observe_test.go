package e2e_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// runNetworkFixture loads network.html and runs its go(): GET and POST
// fetches, an XHR, a 404, a failed request, a 50 KB body and a WebSocket.
func runNetworkFixture(t *testing.T, s *server) {
	t.Helper()
	r := s.ok("browser_eval", map[string]any{"expression": fmt.Sprintf("JSON.stringify(await go(%q))", refusedURL(t))})
	want := `"{\"get\":200,\"post\":200,\"xhr\":200,\"missing\":404,\"failed\":\"failed\",\"big\":50000,\"ws\":\"echo: ping over the socket\"}"`
	if field(r.Text, "Result") != want {
		t.Fatalf("the fixture's requests did not all run:\n%s", r.Text)
	}
}

func TestNetworkWatcherXML(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.ok("browser_navigate", map[string]any{"url": fixture.page("/network.html")})

	notWatching := s.call("browser_get_network_requests", nil)
	if !notWatching.IsError || notWatching.Text != "<error>Network watcher not active on this page. Call browser_watch_network first.</error>" {
		t.Errorf("before watching: %+v", notWatching)
	}

	watch := s.ok("browser_watch_network", nil)
	if !strings.Contains(watch.Text, "Watching network requests on page p1 for: xhr, fetch") {
		t.Errorf("watch answer:\n%s", watch.Text)
	}
	runNetworkFixture(t, s)
	xmlText := s.call("browser_get_network_requests", nil).Text
	if !strings.HasPrefix(xmlText, `<network_requests count="6" page_id="p1">`) {
		t.Fatalf("watcher XML header:\n%s", xmlText)
	}
	for _, want := range []string{
		`method="GET" url="` + fixture.page("/api/echo?x=1") + `" resource_type="fetch" status="200"`,
		`<header name="Authorization">***</header>`,
		`<header name="X-Trace">t1</header>`,
		`<header name="Set-Cookie">***</header>`,
		`method="POST" url="` + fixture.page("/api/echo") + `" resource_type="fetch" status="200"`,
		`<request_body truncated="false">{&#34;name&#34;:&#34;test&#34;}</request_body>`,
		`<response_body truncated="false">{&#34;method&#34;:&#34;POST&#34;`,
		`url="` + fixture.page("/pwa/api/data.json") + `" resource_type="xhr" status="200"`,
		`url="` + fixture.page("/missing") + `" resource_type="fetch" status="404"`,
		`state="failed" failure="net::ERR_CONNECTION_REFUSED"`,
		`url="` + fixture.page("/api/big") + `" resource_type="fetch" status="200"`,
		`<response_body truncated="true">0123456789`,
	} {
		if !strings.Contains(xmlText, want) {
			t.Errorf("watcher XML lacks %s\n%s", want, truncateForLog(xmlText))
		}
	}
	if strings.Contains(xmlText, "secret-token") || strings.Contains(xmlText, "abc123") {
		t.Errorf("a secret header value leaked into the XML")
	}
	for _, unwatched := range []string{`resource_type="document"`, `resource_type="script"`, `resource_type="websocket"`} {
		if strings.Contains(xmlText, unwatched) {
			t.Errorf("an unwatched type is listed: %s", unwatched)
		}
	}
	if again := s.call("browser_get_network_requests", nil).Text; again != `<network_requests count="0" page_id="p1" />` {
		t.Errorf("a second read is not empty:\n%s", again)
	}

	// Reconfigured for websockets; filters narrow the read.
	s.ok("browser_watch_network", map[string]any{"resource_types": []any{"websocket", "fetch"}})
	runNetworkFixture(t, s)
	ws := s.call("browser_get_network_requests", map[string]any{"url_pattern": "/ws$"}).Text
	if !regexp.MustCompile(`resource_type="websocket" status="101" .*frames_sent="1" frames_received="1"`).MatchString(ws) {
		t.Errorf("websocket entry:\n%s", ws)
	}
	s.ok("browser_watch_network", nil)
	runNetworkFixture(t, s)
	posts := s.call("browser_get_network_requests", map[string]any{"method": "post", "status_min": 200, "status_max": 299}).Text
	if !strings.HasPrefix(posts, `<network_requests count="1"`) {
		t.Errorf("method/status filter:\n%s", posts)
	}

	// Watching survives navigation.
	s.ok("browser_navigate", map[string]any{"url": fixture.page("/network.html?again")})
	runNetworkFixture(t, s)
	if after := s.call("browser_get_network_requests", map[string]any{"limit": 2}).Text; !strings.HasPrefix(after, `<network_requests count="2"`) {
		t.Errorf("after a navigation the watcher stopped:\n%s", after)
	}
}

func TestReadEventsPagesEveryEventOnce(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.ok("browser_navigate", map[string]any{"url": fixture.page("/network.html")})
	runNetworkFixture(t, s)
	s.eval("for (let i = 0; i < 50; i++) console.log('event', i); 1")

	all := s.ok("browser_read_events", map[string]any{"limit": 1000})
	total := len(all.Structured["events"].([]any))
	var seqs []int
	offset := 0.0
	for i := 0; i < 100; i++ {
		r := s.ok("browser_read_events", map[string]any{"offset": offset, "limit": 7})
		events := r.Structured["events"].([]any)
		for _, e := range events {
			seqs = append(seqs, int(e.(map[string]any)["seq"].(float64)))
		}
		next := r.Structured["nextOffset"].(float64)
		if len(events) == 0 || next == offset {
			break
		}
		offset = next
	}
	if len(seqs) < total {
		t.Fatalf("paging by 7 read %d events, one read of 1000 saw %d", len(seqs), total)
	}
	for i, seq := range seqs {
		if seq != i {
			t.Fatalf("paged events are not each event once in order: position %d has seq %d", i, seq)
		}
	}

	kinds := s.ok("browser_read_events", map[string]any{"kinds": []any{"websocket"}, "limit": 1000})
	for _, e := range kinds.Structured["events"].([]any) {
		if e.(map[string]any)["kind"] != "websocket" {
			t.Errorf("kinds filter let %v through", e)
		}
	}
	if !strings.Contains(kinds.Text, `frameSent ws://`) || !strings.Contains(kinds.Text, `"ping over the socket"`) {
		t.Errorf("websocket events:\n%s", kinds.Text)
	}
	posts := s.ok("browser_read_events", map[string]any{"method": "POST", "url_includes": "/api/echo", "limit": 1000})
	for _, e := range posts.Structured["events"].([]any) {
		m := e.(map[string]any)
		if m["method"] != "POST" || !strings.Contains(m["url"].(string), "/api/echo") {
			t.Errorf("method/url filter let %v through", m)
		}
	}
	if len(posts.Structured["events"].([]any)) == 0 {
		t.Errorf("no POST request events:\n%s", posts.Text)
	}

	// A response body, by the request id an event gives.
	var requestID string
	for _, e := range all.Structured["events"].([]any) {
		m := e.(map[string]any)
		if m["kind"] == "response" && strings.HasSuffix(m["url"].(string), "/pwa/api/data.json") {
			requestID = m["requestId"].(string)
		}
	}
	body := s.ok("browser_get_response_body", map[string]any{"request_id": requestID})
	if body.Structured["body"] != "{\"message\": \"hello from the API\"}\n" || body.Structured["mimeType"] != "application/json" {
		t.Errorf("body of %s: %v", requestID, body.Structured)
	}
	s.fails("browser_get_response_body", map[string]any{"request_id": "no-such-request"}, "BODY_NOT_AVAILABLE")

	cleared := s.ok("browser_clear_events", nil)
	var n int
	if _, err := fmt.Sscanf(cleared.Text, "SUCCESS: Cleared %d events of p1", &n); err != nil || n < total {
		t.Errorf("clear: %s (had at least %d)", cleared.Text, total)
	}
	if after := s.ok("browser_read_events", nil); len(after.Structured["events"].([]any)) != 0 {
		t.Errorf("events after clear: %s", after.Text)
	}
}

func TestEventBufferDropsTheOldestAndFilters(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--buffer-size", "100")
	s.ok("browser_navigate", map[string]any{"url": fixture.page("/")})
	s.eval("for (let i = 0; i < 500; i++) console.log('spam', i); 1")
	var r result
	eventually(t, 5*time.Second, "500 events logged", func() bool {
		r = s.ok("browser_read_events", map[string]any{"kinds": []any{"console"}})
		events := r.Structured["events"].([]any)
		return len(events) > 0 && events[len(events)-1].(map[string]any)["text"] == "spam 499"
	})
	r = s.ok("browser_read_events", nil)
	events := r.Structured["events"].([]any)
	if len(events) != 100 || r.Structured["dropped"].(float64) < 400 {
		t.Errorf("with --buffer-size 100: %d events, dropped %v", len(events), r.Structured["dropped"])
	}
	if !strings.Contains(r.Text, "Dropped: ") {
		t.Errorf("the answer does not say events were dropped:\n%.300s", r.Text)
	}

	f := s.ok("browser_event_filters", map[string]any{"kinds": []any{"network"}, "url_blocklist": []any{"/api/big"}, "url_allowlist": []any{"/api/"}})
	if field(f.Text, "Kinds") != "network" || !strings.HasPrefix(field(f.Text, "URL blocklist"), "/api/big") {
		t.Errorf("filters answer:\n%s", f.Text)
	}
	s.ok("browser_clear_events", nil)
	s.ok("browser_navigate", map[string]any{"url": fixture.page("/network.html")})
	runNetworkFixture(t, s)
	for _, e := range s.ok("browser_read_events", map[string]any{"limit": 1000}).Structured["events"].([]any) {
		m := e.(map[string]any)
		url, _ := m["url"].(string)
		kind := m["kind"].(string)
		if kind == "console" || strings.Contains(url, "/api/big") || (url != "" && !strings.Contains(url, "/api/")) {
			t.Errorf("stored despite the filters: %v", m)
		}
	}
	if got := s.ok("browser_event_filters", nil); field(got.Text, "Kinds") != "network" {
		t.Errorf("get filters:\n%s", got.Text)
	}
	s.fails("browser_event_filters", map[string]any{"kinds": []any{"everything"}}, "INVALID_INPUT")
}

func TestEventsResourceNotifiesSubscribersAndHARParses(t *testing.T) {
	t.Parallel()
	// resources/subscribe is the legacy protocol's way; 2026-07-28 has subscriptions/listen.
	s := startServerWith(t, []client.ClientOption{client.WithProtocolVersion("2025-11-25")})
	updated := collectUpdates(s)
	s.ok("browser_navigate", map[string]any{"url": fixture.page("/network.html")})

	templates, err := s.client.ListResourceTemplates(t.Context(), mcp.ListResourceTemplatesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, tpl := range templates.ResourceTemplates {
		uris = append(uris, tpl.URITemplate.Raw())
	}
	if strings.Join(uris, " ") != "cdp://events/{page_id} cdp://har/{page_id}" && strings.Join(uris, " ") != "cdp://har/{page_id} cdp://events/{page_id}" {
		t.Errorf("resource templates: %v", uris)
	}

	sub := mcp.SubscribeRequest{}
	sub.Params.URI = "cdp://events/p1"
	if err := s.client.Subscribe(t.Context(), sub); err != nil {
		t.Fatal(err)
	}
	s.eval("console.log('wake the subscriber'); 1")
	eventually(t, 5*time.Second, "notifications/resources/updated for cdp://events/p1", func() bool {
		uris := updated()
		return len(uris) > 0 && uris[0] == "cdp://events/p1"
	})

	read := mcp.ReadResourceRequest{}
	read.Params.URI = "cdp://events/p1"
	res, err := s.client.ReadResource(t.Context(), read)
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		NextOffset int64             `json:"nextOffset"`
		Events     []json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal([]byte(res.Contents[0].(mcp.TextResourceContents).Text), &page); err != nil || len(page.Events) == 0 {
		t.Errorf("events resource: %v, %d events", err, len(page.Events))
	}

	runNetworkFixture(t, s)
	read.Params.URI = "cdp://har/p1"
	res, err = s.client.ReadResource(t.Context(), read)
	if err != nil {
		t.Fatal(err)
	}
	var har struct {
		Log struct {
			Version string `json:"version"`
			Creator struct{ Name string }
			Pages   []struct{ ID string }
			Entries []struct {
				Request struct {
					Method  string
					URL     string
					Headers []struct{ Name, Value string }
				}
				Response struct {
					Status  int
					Content struct{ Text, MimeType string }
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(res.Contents[0].(mcp.TextResourceContents).Text), &har); err != nil {
		t.Fatalf("HAR does not parse: %v", err)
	}
	if har.Log.Version != "1.2" || har.Log.Creator.Name != "chromekeeper" || len(har.Log.Pages) != 1 {
		t.Errorf("HAR log: version %q creator %q pages %d", har.Log.Version, har.Log.Creator.Name, len(har.Log.Pages))
	}
	found := false
	for _, e := range har.Log.Entries {
		if e.Request.Method == "POST" && e.Request.URL == fixture.page("/api/echo") {
			found = e.Response.Status == 200 && strings.Contains(e.Response.Content.Text, `"method":"POST"`)
		}
		for _, h := range e.Request.Headers {
			if strings.EqualFold(h.Name, "Authorization") && h.Value != "***" {
				t.Errorf("HAR leaks Authorization: %q", h.Value)
			}
		}
	}
	if !found {
		t.Errorf("HAR has no POST /api/echo entry with its body (%d entries)", len(har.Log.Entries))
	}

	read.Params.URI = "cdp://events/p9"
	if _, err := s.client.ReadResource(t.Context(), read); err == nil {
		t.Error("reading the events of an unknown page succeeded")
	}
}

func TestEventsResourceNotifiesAModernListener(t *testing.T) {
	t.Parallel()
	s := startServer(t) // 2026-07-28: no handshake, subscriptions/listen
	updated := collectUpdates(s)
	s.ok("browser_navigate", map[string]any{"url": fixture.page("/")})
	stop, err := s.client.ListenAsync(t.Context(), mcp.SubscriptionFilter{ResourceSubscriptions: []string{"cdp://events/p1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	eventually(t, 5*time.Second, "a notification after the page logs", func() bool {
		s.eval("console.log('for the listener'); 1")
		uris := updated()
		return len(uris) > 0 && uris[0] == "cdp://events/p1"
	})
}

// collectUpdates records the URIs of notifications/resources/updated the
// client receives; the returned function reads them.
func collectUpdates(s *server) func() []string {
	var mu sync.Mutex
	var uris []string
	s.client.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/resources/updated" {
			mu.Lock()
			uris = append(uris, fmt.Sprint(n.Params.AdditionalFields["uri"]))
			mu.Unlock()
		}
	})
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), uris...)
	}
}

func truncateForLog(s string) string {
	if len(s) > 3000 {
		return s[:3000] + "…"
	}
	return s
}

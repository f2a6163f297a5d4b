package session

import (
	"testing"
	"time"

	"github.com/chromekeeper/chromekeeper/browser"
)

func TestEventRingOffsetsDropsAndTTL(t *testing.T) {
	r := newEventRing(3, time.Hour, nil)
	for i := range 5 {
		r.add(Event{Kind: KindConsole, Text: string(rune('a' + i))})
	}
	page := r.read(EventQuery{Offset: 0, Limit: 10})
	if page.Dropped != 2 || len(page.Events) != 3 || page.Events[0].Seq != 2 || page.NextOffset != 5 {
		t.Errorf("read from 0 of a 3-event ring after 5: dropped %d, %d events from seq %d, next %d",
			page.Dropped, len(page.Events), page.Events[0].Seq, page.NextOffset)
	}
	if again := r.read(EventQuery{Offset: page.NextOffset, Limit: 10}); len(again.Events) != 0 || again.NextOffset != 5 {
		t.Errorf("read at the end: %+v", again)
	}
	r.last = time.Now().Add(-2 * time.Hour) // the last event is older than the TTL
	if expired := r.read(EventQuery{Offset: 0, Limit: 10}); len(expired.Events) != 0 || expired.NextOffset != 5 {
		t.Errorf("after the TTL: %d events, next %d; want none, and offsets kept", len(expired.Events), expired.NextOffset)
	}
	r.add(Event{Kind: KindConsole})
	if page := r.read(EventQuery{Offset: 5, Limit: 10}); len(page.Events) != 1 || page.Events[0].Seq != 5 {
		t.Errorf("after expiry, seq goes on: %+v", page.Events)
	}
}

func TestEventFiltersBlockBeforeAllow(t *testing.T) {
	f := EventFilters{Kinds: []string{"network", "console"}, URLAllowlist: []string{"/api/"}, URLBlocklist: []string{"/api/secret"}}
	for _, tc := range []struct {
		e    Event
		keep bool
	}{
		{Event{Kind: KindRequest, URL: "http://x/api/items"}, true},
		{Event{Kind: KindResponse, URL: "http://x/api/secret/1"}, false},
		{Event{Kind: KindLoadingFinished, URL: "http://x/static/app.js"}, false},
		{Event{Kind: KindConsole, Text: "no url"}, true},
		{Event{Kind: KindWebSocket, URL: "ws://x/api/live"}, false},
		{Event{Kind: KindLog, Text: "network error"}, false},
	} {
		if got := f.keeps(&tc.e); got != tc.keep {
			t.Errorf("keeps(%s %s) = %v, want %v", tc.e.Kind, tc.e.URL, got, tc.keep)
		}
	}
}

func TestRedact(t *testing.T) {
	got := Redact(map[string]string{"authorization": "Bearer x", "Cookie": "a=b", "X-Api-Key": "k", "Accept": "*/*", "Proxy-Authorization": "p", "set-cookie": "s"})
	for name, want := range map[string]string{"authorization": "***", "Cookie": "***", "X-Api-Key": "***", "Accept": "*/*", "Proxy-Authorization": "***", "set-cookie": "***"} {
		if got[name] != want {
			t.Errorf("Redact[%s] = %q, want %q", name, got[name], want)
		}
	}
}

func TestCDPEventDecodesOnce(t *testing.T) {
	e := newCDPEvent(browser.Event{Method: "Network.loadingFailed", Params: []byte(`{"requestId":"7","errorText":"net::ERR_X"}`)})
	first, ok := decodeAs[loadingFailed](e)
	again, _ := decodeAs[loadingFailed](e)
	if !ok || first != again || first.ErrorText != "net::ERR_X" {
		t.Errorf("decodeAs: %+v ok=%v, same value again: %v", first, ok, first == again)
	}
	if ref, ok := decodeAs[requestRef](e); !ok || ref.RequestID != "7" {
		t.Errorf("another type for the same event: %+v, %v", ref, ok)
	}
	if m := e.consoleFrom("page"); m != nil {
		t.Errorf("a network event parsed as console: %+v", m)
	}
}

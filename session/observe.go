package session

import (
	"context"
	"fmt"
	"time"
)

// ReadEvents reads a page's event buffer (see EventQuery).
func (c *Call) ReadEvents(p *Page, q EventQuery) EventPage { return p.events.read(q) }

// TailEvents returns the newest n events of a page.
func (c *Call) TailEvents(p *Page, n int) EventPage { return p.events.tail(n) }

// ClearEvents empties a page's event buffer and returns how many events it held.
func (c *Call) ClearEvents(p *Page) int { return p.events.clear() }

// EventFilters changes a page's event filters with update (nil: no change)
// and returns them.
func (c *Call) EventFilters(p *Page, update func(*EventFilters)) EventFilters {
	return p.events.setFilters(update)
}

// Watch starts, or reconfigures and clears, the page's network watcher.
func (c *Call) Watch(p *Page, types []string) { p.watch.watch(types) }

// TakeWatched returns and clears what the page's network watcher captured;
// ok is false when it is not watching.
func (c *Call) TakeWatched(ctx context.Context, p *Page) ([]WatchedRequest, bool) {
	return p.watch.take(ctx)
}

// Body is a response body.
type Body struct {
	RequestID string `json:"requestId"`
	MIMEType  string `json:"mimeType"`
	Encoded   bool   `json:"encoded"` // base64
	Body      string `json:"body"`
}

// ResponseBody reads the body of a request of the page or of one of its
// workers (a service worker's own requests included). Chrome keeps bodies
// only so long: BODY_NOT_AVAILABLE says why one is gone.
func (c *Call) ResponseBody(ctx context.Context, p *Page, requestID string, base64 bool) (*Body, error) {
	net, sessionID := &p.net, p.sessionID
	req, ok := net.find(requestID)
	if !ok && c.live != nil {
		for _, w := range c.live.attachedWorkers() {
			if r, found := w.net.find(requestID); found && (w.Owner == p.TargetID || w.Owner == "") {
				req, ok, sessionID = r, true, w.sessionID
				break
			}
		}
	}
	if !ok {
		return nil, &Error{Code: CodeBodyNotAvailable, Message: fmt.Sprintf("no request %q on %s", requestID, p.ID),
			Details: []string{"Hint: request ids come from browser_read_events or browser_network_sources"}}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	body, encoded, err := responseBody(ctx, p.conn, sessionID, requestID, !base64)
	if err != nil {
		return nil, &Error{Code: CodeBodyNotAvailable, Message: fmt.Sprintf("Chrome no longer has the body of %s: %s", req.URL, protocolMessage(err)),
			Details: []string{"Hint: bodies are gone after the next navigation, for redirects, 204 and 304, and over Chrome's buffer limits"}}
	}
	if body == "" && req.Initiator != "page" {
		return nil, &Error{Code: CodeBodyNotAvailable, Message: fmt.Sprintf("the body of %s went to its client or to Cache Storage; Chrome keeps none for the worker", req.URL)}
	}
	return &Body{RequestID: requestID, MIMEType: req.MIMEType, Encoded: encoded, Body: body}, nil
}

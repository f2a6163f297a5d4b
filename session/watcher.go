package session

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-rod/rod/lib/proto"

	"github.com/chromekeeper/chromekeeper/browser"
)

const (
	// WatchBodyBytes caps the request and response bodies the watcher keeps.
	WatchBodyBytes = 10 << 10
	// maxWatched bounds the requests accumulated between two reads.
	maxWatched = 2000
	// settleWatched is how long a read waits for requests still in flight.
	settleWatched = 300 * time.Millisecond
)

// WatchTypes are the resource types the network watcher knows (seed 000).
var WatchTypes = []string{"xhr", "fetch", "document", "stylesheet", "image", "media", "font", "script", "websocket", "manifest", "other"}

// DefaultWatchTypes are watched when none are named.
var DefaultWatchTypes = []string{"xhr", "fetch"}

// WatchedRequest is one request the network watcher captured.
type WatchedRequest struct {
	Seq               int               `json:"seq"`
	Method            string            `json:"method"`
	URL               string            `json:"url"`
	ResourceType      string            `json:"resourceType"`
	Status            int               `json:"status,omitempty"`
	StatusText        string            `json:"statusText,omitempty"`
	DurationMS        int64             `json:"durationMs,omitempty"`
	Timestamp         int64             `json:"timestamp"`
	RequestHeaders    map[string]string `json:"requestHeaders,omitempty"`
	ResponseHeaders   map[string]string `json:"responseHeaders,omitempty"`
	RequestBody       string            `json:"requestBody,omitempty"`
	RequestTruncated  bool              `json:"requestBodyTruncated,omitempty"`
	ResponseBody      string            `json:"responseBody,omitempty"`
	ResponseTruncated bool              `json:"responseBodyTruncated,omitempty"`
	Failure           string            `json:"failure,omitempty"`
	State             string            `json:"state"` // pending, completed, failed
	FramesSent        int               `json:"framesSent,omitempty"`
	FramesReceived    int               `json:"framesReceived,omitempty"`

	requestID string
	loaderID  string
	started   time.Time
	mimeType  string
}

// watcher accumulates a page's requests of chosen resource types between
// reads (seed 000): start with watch, take with take. Fed on the dispatcher
// goroutine; safe for concurrent use.
type watcher struct {
	mu      sync.Mutex
	active  bool
	types   []string
	entries []*WatchedRequest
	byID    map[string]*WatchedRequest
	seq     int
	retired map[string]bool // loader ids of documents the page has left
	// reading counts response bodies being read; readDone is closed when
	// it falls back to zero.
	reading  int
	readDone chan struct{}
	// extra holds wire headers from *ExtraInfo events that came before their
	// request or response; Cookie and Set-Cookie appear only there.
	extra  map[string]extraHeaders
	redact bool
}

type extraHeaders struct{ request, response map[string]string }

// watch starts, or reconfigures and clears, the watcher.
func (w *watcher) watch(types []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.active, w.types = true, types
	w.entries, w.byID = nil, map[string]*WatchedRequest{}
}

// take returns the accumulated requests and clears them; ok is false when
// the watcher is not active. It waits briefly for response bodies still being read.
func (w *watcher) take(ctx context.Context) ([]WatchedRequest, bool) {
	// A request the page saw finish may not have reported loadingFinished
	// here yet: give requests in flight a moment to complete.
	for deadline := time.Now().Add(settleWatched); time.Now().Before(deadline) && w.inFlight() && ctx.Err() == nil; {
		time.Sleep(10 * time.Millisecond)
	}
	w.mu.Lock()
	done := w.readDone
	reading := w.reading > 0
	w.mu.Unlock()
	if reading {
		select {
		case <-done:
		case <-time.After(2 * time.Second):
		case <-ctx.Done():
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.active {
		return nil, false
	}
	out := make([]WatchedRequest, len(w.entries))
	for i, e := range w.entries {
		out[i] = *e
	}
	w.entries, w.byID = nil, map[string]*WatchedRequest{}
	return out, true
}

// inFlight reports whether an HTTP request (not a WebSocket, which stays open) is still pending.
func (w *watcher) inFlight() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.ContainsFunc(w.entries, func(e *WatchedRequest) bool { return e.State == "pending" && e.ResourceType != "websocket" })
}

// leaveDocument retires a document: its requests still in flight are dropped
// and its late events ignored.
func (w *watcher) leaveDocument(loaderID string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.retired == nil || len(w.retired) > maxLoaders*4 {
		w.retired = map[string]bool{}
	}
	w.retired[loaderID] = true
	w.entries = slices.DeleteFunc(w.entries, func(e *WatchedRequest) bool {
		if e.loaderID == loaderID && e.State == "pending" {
			delete(w.byID, e.requestID)
			return true
		}
		return false
	})
}

// watchType maps a CDP resource type to the watcher's names.
func watchType(cdpType string) string {
	t := strings.ToLower(cdpType)
	if slices.Contains(WatchTypes, t) {
		return t
	}
	return "other"
}

// onEvent records a page session's network event. fetchBody reads a
// response body from the page's session.
func (w *watcher) onEvent(e *cdpEvent, fetchBody func(ctx context.Context, requestID string) (string, bool, error)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.active {
		return
	}
	switch e.Method {
	case "Network.requestWillBeSent":
		ev, ok := decodeAs[requestWillBeSent](e)
		if !ok || w.retired[ev.LoaderID] {
			return
		}
		typ := watchType(ev.Type)
		if !slices.Contains(w.types, typ) {
			return
		}
		if old, ok := w.byID[ev.RequestID]; ok { // a redirect: keep the final hop
			old.URL, old.Method = ev.Request.URL, ev.Request.Method
			return
		}
		r := &WatchedRequest{Method: ev.Request.Method, URL: ev.Request.URL, ResourceType: typ, State: "pending",
			Timestamp: time.Now().UnixMilli(), requestID: ev.RequestID, loaderID: ev.LoaderID, started: time.Now(),
			RequestHeaders: w.headers(merge(headerMap(ev.Request.Headers), w.extra[ev.RequestID].request))}
		if ev.Request.PostData != "" && textual(headerValue(r.RequestHeaders, "Content-Type")) {
			r.RequestBody, r.RequestTruncated = capBody(ev.Request.PostData)
		}
		w.addLocked(r)
	case "Network.webSocketCreated":
		if ev, ok := decodeAs[webSocketEvent](e); ok && slices.Contains(w.types, "websocket") {
			w.addLocked(&WatchedRequest{Method: "GET", URL: ev.URL, ResourceType: "websocket", State: "pending",
				Timestamp: time.Now().UnixMilli(), requestID: ev.RequestID, started: time.Now()})
		}
	case "Network.webSocketHandshakeResponseReceived":
		if ev, ok := decodeAs[webSocketEvent](e); ok {
			if r, ok := w.byID[ev.RequestID]; ok {
				r.Status, r.StatusText, r.ResponseHeaders = ev.Response.Status, ev.Response.StatusText, w.headers(headerMap(ev.Response.Headers))
			}
		}
	case "Network.webSocketFrameSent", "Network.webSocketFrameReceived":
		if ev, ok := decodeAs[webSocketEvent](e); ok {
			if r, ok := w.byID[ev.RequestID]; ok {
				if e.Method == "Network.webSocketFrameSent" {
					r.FramesSent++
				} else {
					r.FramesReceived++
				}
			}
		}
	case "Network.webSocketClosed":
		if ev, ok := decodeAs[webSocketEvent](e); ok {
			if r, ok := w.byID[ev.RequestID]; ok {
				r.State, r.DurationMS = "completed", time.Since(r.started).Milliseconds()
			}
		}
	case "Network.responseReceived":
		if ev, ok := decodeAs[responseReceived](e); ok {
			if r, ok := w.byID[ev.RequestID]; ok {
				r.Status, r.StatusText, r.mimeType = ev.Response.Status, ev.Response.StatusText, ev.Response.MIMEType
				r.ResponseHeaders = w.headers(merge(headerMap(ev.Response.Headers), w.extra[ev.RequestID].response))
			}
		}
	case "Network.requestWillBeSentExtraInfo", "Network.responseReceivedExtraInfo":
		var ev struct {
			RequestID string                     `json:"requestId"`
			Headers   map[string]json.RawMessage `json:"headers"`
		}
		if json.Unmarshal(e.Params, &ev) != nil {
			return
		}
		h := headerMap(ev.Headers)
		r, known := w.byID[ev.RequestID]
		request := e.Method == "Network.requestWillBeSentExtraInfo"
		switch {
		case known && request:
			r.RequestHeaders = w.headers(merge(h, r.RequestHeaders))
		case known && r.ResponseHeaders != nil:
			r.ResponseHeaders = w.headers(merge(h, r.ResponseHeaders))
		default:
			if w.extra == nil || len(w.extra) > maxWatched {
				w.extra = map[string]extraHeaders{}
			}
			x := w.extra[ev.RequestID]
			if request {
				x.request = h
			} else {
				x.response = h
			}
			w.extra[ev.RequestID] = x
		}
	case "Network.loadingFinished":
		ev, ok := decodeAs[loadingFinished](e)
		if !ok {
			return
		}
		r, ok := w.byID[ev.RequestID]
		if !ok {
			return
		}
		r.State, r.DurationMS = "completed", time.Since(r.started).Milliseconds()
		if !textual(r.mimeType) || r.Status == 204 || r.Status == 304 || r.Status/100 == 3 {
			return
		}
		// Read the body now: Chrome forgets it once the next document commits.
		if w.reading == 0 {
			w.readDone = make(chan struct{})
		}
		w.reading++
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), browser.ProbeTimeout)
			defer cancel()
			body, _, err := fetchBody(ctx, ev.RequestID)
			w.mu.Lock()
			defer w.mu.Unlock()
			if err == nil {
				r.ResponseBody, r.ResponseTruncated = capBody(body)
			}
			if w.reading--; w.reading == 0 {
				close(w.readDone)
			}
		}()
	case "Network.loadingFailed":
		if ev, ok := decodeAs[loadingFailed](e); ok {
			if r, ok := w.byID[ev.RequestID]; ok {
				r.State, r.Failure, r.DurationMS = "failed", ev.ErrorText, time.Since(r.started).Milliseconds()
			}
		}
	}
}

// merge adds the headers of extra that base lacks (names compared without case).
func merge(base, extra map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(extra))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range extra {
		if headerValue(out, k) == "" {
			out[k] = v
		}
	}
	return out
}

func (w *watcher) addLocked(r *WatchedRequest) {
	w.seq++
	r.Seq = w.seq
	w.entries = append(w.entries, r)
	w.byID[r.requestID] = r
	if len(w.entries) > maxWatched {
		delete(w.byID, w.entries[0].requestID)
		w.entries = w.entries[1:]
	}
}

func (w *watcher) headers(h map[string]string) map[string]string {
	if w.redact {
		return Redact(h)
	}
	return h
}

// textual reports whether a MIME type has a body worth showing as text.
func textual(mime string) bool {
	mime = strings.ToLower(mime)
	if mime == "" {
		return false
	}
	return strings.HasPrefix(mime, "text/") || strings.Contains(mime, "json") || strings.Contains(mime, "javascript") ||
		strings.Contains(mime, "xml") || strings.Contains(mime, "x-www-form-urlencoded") || strings.Contains(mime, "graphql")
}

func capBody(s string) (string, bool) {
	if len(s) <= WatchBodyBytes {
		return s, false
	}
	return strings.ToValidUTF8(s[:WatchBodyBytes], ""), true
}

// responseBody reads a response body from a session: the text, and whether
// Chrome sent it base64-encoded. decode turns base64 into text.
func responseBody(ctx context.Context, conn *browser.Conn, sessionID, requestID string, decode bool) (string, bool, error) {
	res, err := proto.NetworkGetResponseBody{RequestID: proto.NetworkRequestID(requestID)}.Call(conn.Session(ctx, sessionID))
	if err != nil {
		return "", false, err
	}
	if res.Base64Encoded && decode {
		b, err := base64.StdEncoding.DecodeString(res.Body)
		if err != nil {
			return "", false, err
		}
		return string(b), false, nil
	}
	return res.Body, res.Base64Encoded, nil
}

package session

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"
)

// Buffer defaults (--buffer-size, --buffer-ttl).
const (
	DefaultBufferSize = 10000
	DefaultBufferTTL  = time.Hour
	// DefaultMaxBodyBytes bounds post data and WebSocket payload previews in events.
	DefaultMaxBodyBytes = 64000
)

// Event kinds, after seed 004.
const (
	KindConsole         = "console"
	KindLog             = "log"
	KindException       = "exception"
	KindRequest         = "request"
	KindResponse        = "response"
	KindLoadingFinished = "loadingFinished"
	KindLoadingFailed   = "loadingFailed"
	KindWebSocket       = "websocket"
	KindNavigation      = "navigation"
)

// EventKinds lists the kinds read_events filters by.
var EventKinds = []string{KindConsole, KindLog, KindException, KindRequest, KindResponse,
	KindLoadingFinished, KindLoadingFailed, KindWebSocket, KindNavigation}

// FilterKinds lists the kinds event filters store: network covers request,
// response, loadingFinished and loadingFailed.
var FilterKinds = []string{"console", "log", "exception", "network", "websocket", "navigation"}

// Event is one normalized CDP event of a page or of a worker it owns. Only
// the fields of its kind are set.
type Event struct {
	Seq       int64  `json:"seq"`
	TS        int64  `json:"ts"` // epoch ms, when chromekeeper received it
	TargetID  string `json:"targetId"`
	SessionID string `json:"sessionId"`
	Source    string `json:"source"` // page, sw1, w1, f1
	Kind      string `json:"kind"`

	Type   string    `json:"type,omitempty"` // console level, navigation type, websocket event
	Text   string    `json:"text,omitempty"`
	Args   []string  `json:"args,omitempty"`
	Stack  *StackRef `json:"stack,omitempty"`
	Frames []string  `json:"frames,omitempty"`

	RequestID       string            `json:"requestId,omitempty"`
	URL             string            `json:"url,omitempty"`
	Method          string            `json:"method,omitempty"`
	ResourceType    string            `json:"resourceType,omitempty"`
	Headers         map[string]string `json:"headers,omitempty"`
	PostDataPreview string            `json:"postDataPreview,omitempty"`
	Initiator       string            `json:"initiator,omitempty"`

	Status            int     `json:"status,omitempty"`
	StatusText        string  `json:"statusText,omitempty"`
	MIMEType          string  `json:"mimeType,omitempty"`
	FromDiskCache     bool    `json:"fromDiskCache,omitempty"`
	FromServiceWorker bool    `json:"fromServiceWorker,omitempty"`
	RemoteAddress     string  `json:"remoteAddress,omitempty"`
	EncodedDataLength float64 `json:"encodedDataLength,omitempty"`
	ErrorText         string  `json:"errorText,omitempty"`
	Canceled          bool    `json:"canceled,omitempty"`

	Direction      string `json:"direction,omitempty"` // sent, recv
	Opcode         int    `json:"opcode,omitempty"`
	PayloadPreview string `json:"payloadPreview,omitempty"`
}

// StackRef is where a console message or exception came from.
type StackRef struct {
	URL    string `json:"url"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
}

// EventFilters decide, before storing, which events a page's buffer keeps.
// The blocklist is applied before the allowlist; both match URL substrings
// and apply to events that carry a URL.
type EventFilters struct {
	Kinds        []string `json:"kinds"` // of FilterKinds; empty keeps all
	URLAllowlist []string `json:"url_allowlist"`
	URLBlocklist []string `json:"url_blocklist"`
	MaxBodyBytes int      `json:"max_body_bytes"`
}

func (f EventFilters) keeps(e *Event) bool {
	if len(f.Kinds) > 0 && !slices.Contains(f.Kinds, filterKind(e.Kind)) {
		return false
	}
	if e.URL == "" {
		return true
	}
	for _, s := range f.URLBlocklist {
		if strings.Contains(e.URL, s) {
			return false
		}
	}
	if len(f.URLAllowlist) == 0 {
		return true
	}
	for _, s := range f.URLAllowlist {
		if strings.Contains(e.URL, s) {
			return true
		}
	}
	return false
}

func filterKind(kind string) string {
	switch kind {
	case KindRequest, KindResponse, KindLoadingFinished, KindLoadingFailed:
		return "network"
	}
	return kind
}

// eventRing is a page's bounded buffer of events, with offsets that never
// repeat: seq counts from 0 for the page's life. Events expire ttl after the
// last one arrived. Safe for concurrent use.
type eventRing struct {
	mu       sync.Mutex
	capacity int
	ttl      time.Duration
	events   []Event // oldest first once start is applied
	start    int
	next     int64 // seq of the next event
	last     time.Time
	filters  EventFilters
	onAdd    func()
}

func newEventRing(capacity int, ttl time.Duration, onAdd func()) *eventRing {
	if capacity <= 0 {
		capacity = DefaultBufferSize
	}
	if ttl <= 0 {
		ttl = DefaultBufferTTL
	}
	return &eventRing{capacity: capacity, ttl: ttl, onAdd: onAdd,
		filters: EventFilters{MaxBodyBytes: DefaultMaxBodyBytes}}
}

// add stores an event that passes the filters.
func (r *eventRing) add(e Event) {
	r.mu.Lock()
	if !r.filters.keeps(&e) {
		r.mu.Unlock()
		return
	}
	now := time.Now()
	r.expireLocked(now)
	r.last = now
	e.Seq, e.TS = r.next, now.UnixMilli()
	r.next++
	e.PostDataPreview = Clip(e.PostDataPreview, r.filters.MaxBodyBytes)
	e.PayloadPreview = Clip(e.PayloadPreview, r.filters.MaxBodyBytes)
	if len(r.events) < r.capacity {
		r.events = append(r.events, e)
	} else {
		r.events[r.start] = e
		r.start = (r.start + 1) % r.capacity
	}
	onAdd := r.onAdd
	r.mu.Unlock()
	if onAdd != nil {
		onAdd()
	}
}

// expireLocked empties a buffer whose last event is older than the TTL.
func (r *eventRing) expireLocked(now time.Time) {
	if len(r.events) > 0 && now.Sub(r.last) > r.ttl {
		r.events, r.start = nil, 0
	}
}

// EventPage is one read of a buffer.
type EventPage struct {
	NextOffset int64   `json:"nextOffset"`
	Dropped    int64   `json:"dropped,omitempty"` // events between offset and the oldest kept
	Events     []Event `json:"events"`
}

// EventQuery selects events of a read.
type EventQuery struct {
	Offset      int64
	Limit       int
	Kinds       []string
	URLIncludes string
	Method      string
}

// read returns up to q.Limit matching events from q.Offset on. NextOffset
// moves past every event looked at, matching or not, so paging by it visits
// each event once.
func (r *eventRing) read(q EventQuery) EventPage {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.expireLocked(time.Now())
	oldest := r.next - int64(len(r.events))
	page := EventPage{NextOffset: q.Offset, Events: []Event{}}
	if q.Offset < oldest {
		page.Dropped = oldest - q.Offset
		page.NextOffset = oldest
	}
	for i := page.NextOffset - oldest; i < int64(len(r.events)); i++ {
		e := r.events[(r.start+int(i))%len(r.events)]
		page.NextOffset = e.Seq + 1
		if q.matches(e) {
			page.Events = append(page.Events, e)
			if len(page.Events) == q.Limit {
				break
			}
		}
	}
	if page.NextOffset > r.next {
		page.NextOffset = r.next
	}
	return page
}

// tail returns the newest n events.
func (r *eventRing) tail(n int) EventPage {
	r.mu.Lock()
	start := r.next - int64(min(n, len(r.events)))
	r.mu.Unlock()
	return r.read(EventQuery{Offset: start, Limit: n})
}

func (q EventQuery) matches(e Event) bool {
	if len(q.Kinds) > 0 && !slices.Contains(q.Kinds, e.Kind) {
		return false
	}
	if q.URLIncludes != "" && !strings.Contains(e.URL, q.URLIncludes) {
		return false
	}
	return q.Method == "" || strings.EqualFold(e.Method, q.Method)
}

// clear drops every event; offsets go on from where they were.
func (r *eventRing) clear() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.events)
	r.events, r.start = nil, 0
	return n
}

// setFilters replaces the filters with f where f sets a field; it returns the result.
func (r *eventRing) setFilters(update func(*EventFilters)) EventFilters {
	r.mu.Lock()
	defer r.mu.Unlock()
	if update != nil {
		update(&r.filters)
	}
	f := r.filters
	for _, l := range []*[]string{&f.Kinds, &f.URLAllowlist, &f.URLBlocklist} {
		if *l == nil {
			*l = []string{}
		}
	}
	return f
}

// Clip keeps the first n bytes of s, less a rune the cut would split, and
// marks the cut with "…"; n <= 0 keeps s whole.
func Clip(s string, n int) string {
	if n <= 0 || len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// redactedHeaders are shown as *** everywhere unless redaction is off.
var redactedHeaders = []string{"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key"}

// Redact returns headers with the values of sensitive ones replaced by ***.
func Redact(headers map[string]string) map[string]string {
	out := make(map[string]string, len(headers))
	for k, v := range headers {
		if slices.Contains(redactedHeaders, strings.ToLower(k)) {
			v = "***"
		}
		out[k] = v
	}
	return out
}

// headerValue returns a header's value, whatever the case of its name.
func headerValue(h map[string]string, name string) string {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// headerMap decodes CDP headers, whose values may be strings or (rarely) other JSON.
func headerMap(raw map[string]json.RawMessage) map[string]string {
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		var s string
		if json.Unmarshal(v, &s) != nil {
			s = string(v)
		}
		out[k] = s
	}
	return out
}

// notifyInterval is the least time between two "events arrived" signals of a page.
const notifyInterval = 250 * time.Millisecond

// debounce runs at most one pending call at a time: calls made while one
// is pending are absorbed by it.
type debounce struct {
	mu      sync.Mutex
	pending bool
}

func (d *debounce) after(wait time.Duration, f func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pending {
		return
	}
	d.pending = true
	time.AfterFunc(wait, func() {
		d.mu.Lock()
		d.pending = false
		d.mu.Unlock()
		f()
	})
}

package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-rod/rod/lib/proto"
	"go.uber.org/zap"

	"github.com/chromekeeper/chromekeeper/browser"
)

// autoAttach makes Chrome attach every new target paused, on its own
// flattened session, so it can be configured before it runs.
var autoAttach = proto.TargetSetAutoAttach{AutoAttach: true, WaitForDebuggerOnStart: true, Flatten: true}

// liveBrowser is one running Chrome with the targets attached on it: pages,
// and the service workers, workers and out-of-process iframes they use.
// Browser-level auto-attach brings pages, service and shared workers;
// page-level auto-attach brings each page's dedicated workers and iframes.
// Every new target is attached paused (waitForDebuggerOnStart), configured
// with the session's settings, then resumed, so nothing it does slips past.
type liveBrowser struct {
	*browser.Browser
	log      *zap.Logger
	settings *settings
	sw       *swRegistry
	observe  observeConfig

	mu       sync.Mutex
	pages    []*Page   // attached pages in attach order
	workers  []*Worker // attached non-page targets in attach order
	counters map[string]int
	changed  chan struct{}
	hung     string // why a call gave up on this browser, if it did
}

func startLive(ctx context.Context, cfg Config, reuse *browser.Profile, st *settings, observe observeConfig) (*liveBrowser, error) {
	b, err := cfg.Starter.Start(ctx, reuse)
	if err != nil {
		return nil, err
	}
	lb := &liveBrowser{Browser: b, log: cfg.Log, settings: st, sw: newSWRegistry(), observe: observe,
		counters: map[string]int{}, changed: make(chan struct{})}
	lb.observe.attached = b.Attached()
	b.Conn.Handle("", lb.onBrowserEvent)
	attach := autoAttach
	// The user's own browser: never pause their tabs, never intercept their
	// requests; chromekeeper only observes.
	attach.WaitForDebuggerOnStart = !b.Attached()
	if err := attach.Call(b.Conn.Session(ctx, "")); err != nil {
		lb.abandon(reuse)
		return nil, fmt.Errorf("attach to targets: %w", err)
	}
	if !b.Attached() {
		if err := lb.interceptBrowserRequests(ctx); err != nil {
			lb.abandon(reuse)
			return nil, err
		}
	}
	return lb, nil
}

// abandon ends a browser that failed to start: its profile goes with it,
// unless it was one handed in for reuse (the caller decides about that one).
func (lb *liveBrowser) abandon(reuse *browser.Profile) {
	if reuse == nil {
		_ = lb.Close()
		return
	}
	lb.Kill()
}

func (lb *liveBrowser) onBrowserEvent(e browser.Event) {
	if e.Method == "Fetch.requestPaused" {
		var ev struct {
			RequestID string                              `json:"requestId"`
			Request   struct{ Headers map[string]string } `json:"request"`
		}
		if json.Unmarshal(e.Params, &ev) == nil {
			go lb.decidePaused(ev.RequestID, ev.Request.Headers["Service-Worker"] == "script" && lb.settings.isOffline())
		}
		return
	}
	lb.onTargetEvent(e, "")
}

// interceptBrowserRequests pauses, browser-wide, the requests of resource
// type Other: the ones the browser makes itself, which no page's or worker's
// offline emulation covers — the script fetch of a new service-worker
// registration, the favicon. It must be on from the start: Chrome routes
// through interception only the loaders created after it was enabled. The
// update check of an existing registration is not routed through it at all
// (Chromium 156); see UpdateCheckLeak.
func (lb *liveBrowser) interceptBrowserRequests(ctx context.Context) error {
	patterns := []map[string]string{{"urlPattern": "*", "resourceType": "Other", "requestStage": "Request"}}
	if _, err := lb.Conn.Call(ctx, "", "Fetch.enable", map[string]any{"patterns": patterns}); err != nil {
		return fmt.Errorf("intercept browser requests: %w", err)
	}
	return nil
}

// decidePaused fails a paused request as disconnected while offline, and
// lets it continue otherwise.
func (lb *liveBrowser) decidePaused(requestID string, offline bool) {
	ctx, cancel := context.WithTimeout(context.Background(), browser.ProbeTimeout)
	defer cancel()
	method, params := "Fetch.continueRequest", map[string]any{"requestId": requestID}
	if offline {
		method, params = "Fetch.failRequest", map[string]any{"requestId": requestID, "errorReason": "InternetDisconnected"}
	}
	if _, err := lb.Conn.Call(ctx, "", method, params); err != nil {
		lb.log.Debug("paused request", zap.String("method", method), zap.Error(err))
	}
}

// onTargetEvent handles attach and detach events, whether they come from the
// browser (owner "") or from a page or frame session (owner: its target id).
func (lb *liveBrowser) onTargetEvent(e browser.Event, owner string) {
	switch e.Method {
	case "Target.attachedToTarget":
		var ev proto.TargetAttachedToTarget
		if json.Unmarshal(e.Params, &ev) != nil || ev.TargetInfo == nil {
			return
		}
		lb.attach(ev, owner)
	case "Target.detachedFromTarget":
		var ev proto.TargetDetachedFromTarget
		if json.Unmarshal(e.Params, &ev) == nil {
			lb.detach(string(ev.SessionID))
		}
	}
}

func (lb *liveBrowser) attach(ev proto.TargetAttachedToTarget, owner string) {
	sessionID, info := string(ev.SessionID), ev.TargetInfo
	typ := string(info.Type)
	if typ == string(proto.TargetTargetInfoTypePage) {
		p := newPage(lb.Conn, lb.log, lb.observe, info, sessionID)
		lb.Conn.Handle(sessionID, func(e browser.Event) { lb.onPageEvent(p, e) })
		lb.update(func() { lb.pages = append(lb.pages, p) })
		go p.configure(lb.settings, ev.WaitingForDebugger)
		return
	}
	prefix, watched := idPrefix[typ]
	if !watched || lb.worker(string(info.TargetID)) != nil {
		// Not a kind chromekeeper watches, or a second session to a target
		// already attached (a service worker is attached both browser-wide
		// and by the pages it controls): let it run and drop the session.
		go lb.release(sessionID, ev.WaitingForDebugger)
		return
	}
	w := &Worker{Type: typ, TargetID: string(info.TargetID), URL: info.URL, Owner: owner,
		sessionID: sessionID, conn: lb.Conn, log: lb.log, ready: make(chan struct{})}
	lb.update(func() {
		lb.counters[prefix]++
		w.ID = prefix + strconv.Itoa(lb.counters[prefix])
		lb.workers = append(lb.workers, w)
	})
	lb.Conn.Handle(sessionID, func(e browser.Event) {
		if strings.HasPrefix(e.Method, "Target.") {
			lb.onTargetEvent(e, w.Owner)
			return
		}
		ce := newCDPEvent(e)
		w.onEvent(ce)
		lb.routeEvent(w, ce)
	})
	go lb.configureWorker(w, ev.WaitingForDebugger)
}

// release resumes a target on a session chromekeeper does not keep, then
// detaches that session.
func (lb *liveBrowser) release(sessionID string, waiting bool) {
	if waiting {
		resume(lb.Conn, sessionID, lb.log)
	}
	ctx, cancel := context.WithTimeout(context.Background(), browser.ProbeTimeout)
	defer cancel()
	_ = proto.TargetDetachFromTarget{SessionID: proto.TargetSessionID(sessionID)}.Call(lb.Conn.Session(ctx, ""))
}

// routeEvent gives a worker's event to the pages it belongs to: its owner,
// or for a service or shared worker every page it serves.
func (lb *liveBrowser) routeEvent(w *Worker, e *cdpEvent) {
	o := origin{source: w.ID, targetID: w.TargetID, sessionID: w.sessionID, net: &w.net, redact: lb.observe.redact}
	for _, p := range lb.attachedPages() {
		if w.Owner == p.TargetID || w.Owner == "" && lb.serves(w, p.URL()) {
			p.observe(e, o, false)
		}
	}
}

// serves reports whether a service or shared worker belongs to a page: by
// the service worker's scope once the registry knows it, else by origin.
func (lb *liveBrowser) serves(w *Worker, pageURL string) bool {
	w.mu.Lock()
	scope := w.scope
	w.mu.Unlock()
	if scope == "" && w.Type == TypeServiceWorker {
		scope = lb.sw.scopeOf(w.TargetID)
		w.mu.Lock()
		w.scope = scope
		w.mu.Unlock()
	}
	if scope != "" {
		return strings.HasPrefix(pageURL, scope)
	}
	return sameOrigin(w.URL, pageURL)
}

// onPageEvent routes a page session's events: its child targets to the
// target table, service-worker reports to the registry, the rest to the page.
func (lb *liveBrowser) onPageEvent(p *Page, e browser.Event) {
	switch {
	case strings.HasPrefix(e.Method, "Target."):
		lb.onTargetEvent(e, p.TargetID)
	case strings.HasPrefix(e.Method, "ServiceWorker."):
		lb.sw.onEvent(e)
	default:
		p.onEvent(e)
	}
}

// configureWorker enables what chromekeeper listens to on a worker or
// frame, applies the settings and lets it run (see configureTarget).
func (lb *liveBrowser) configureWorker(w *Worker, waiting bool) {
	defer close(w.ready)
	err := configureTarget(lb.Conn, w.sessionID, lb.log, lb.settings, waiting, func(c proto.Client) []func() error {
		steps := []func() error{
			func() error { return proto.NetworkEnable{}.Call(c) },
			func() error { return proto.RuntimeEnable{}.Call(c) },
			func() error { _ = proto.LogEnable{}.Call(c); return nil }, // not every worker has a Log domain
		}
		if w.Type == TypeIframe {
			steps = append(steps, func() error { return autoAttach.Call(c) })
		}
		return steps
	})
	if err != nil {
		lb.log.Warn("configure target", zap.String("target", w.ID), zap.Error(err))
	}
}

// configureTarget readies a target attached paused: it runs the steps
// (enabling domains) at once, applies the session's settings, and lets the
// target run. It resumes the target even after an error: a page left paused
// would stall every call on it, a worker every fetch routed to it.
func configureTarget(conn *browser.Conn, sessionID string, log *zap.Logger, st *settings, waiting bool,
	steps func(proto.Client) []func() error) error {
	ctx, cancel := context.WithTimeout(context.Background(), browser.ProbeTimeout)
	defer cancel()
	c := conn.Session(ctx, sessionID)
	err := runConcurrently(steps(c))
	if err == nil {
		err = st.configure(ctx, c, sessionID)
	}
	if waiting {
		resume(conn, sessionID, log)
	}
	return err
}

// runConcurrently runs independent CDP steps at once and returns the first error.
func runConcurrently(steps []func() error) error {
	errs := make(chan error, len(steps))
	for _, step := range steps {
		go func() { errs <- step() }()
	}
	var first error
	for range steps {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (lb *liveBrowser) detach(sessionID string) {
	lb.Conn.Handle(sessionID, nil)
	lb.settings.forget(sessionID)
	lb.update(func() {
		for i, p := range lb.pages {
			if p.sessionID == sessionID {
				p.markClosed()
				lb.pages = append(lb.pages[:i], lb.pages[i+1:]...)
				return
			}
		}
		for i, w := range lb.workers {
			if w.sessionID == sessionID {
				w.markClosed()
				lb.workers = append(lb.workers[:i], lb.workers[i+1:]...)
				return
			}
		}
	})
}

// failedUnder reports whether err, returned by a call, means the browser itself
// is gone or hung rather than one page being slow; such a browser is killed
// here (it may still look alive for a moment after its connection broke) so
// that the retry relaunches it.
func (lb *liveBrowser) failedUnder(ctx context.Context, err error) bool {
	if errors.Is(err, browser.ErrConnectionLost) || lb.Gone() {
		lb.Kill()
		return true
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	probeErr := lb.Probe(context.WithoutCancel(ctx))
	if probeErr == nil {
		return false
	}
	lb.mu.Lock()
	lb.hung = "stopped answering (" + probeErr.Error() + ")"
	lb.mu.Unlock()
	lb.Kill()
	return true
}

// failure says what happened to a browser that is gone.
func (lb *liveBrowser) failure() string {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	if lb.hung != "" {
		return lb.hung
	}
	return "crashed (its process exited or its connection closed)"
}

func (lb *liveBrowser) update(f func()) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	f()
	close(lb.changed)
	lb.changed = make(chan struct{})
}

// attachedPages returns the pages attached now, in attach order.
func (lb *liveBrowser) attachedPages() []*Page {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	return append([]*Page(nil), lb.pages...)
}

// attachedWorkers returns the workers and frames attached now, in attach order.
func (lb *liveBrowser) attachedWorkers() []*Worker {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	return append([]*Worker(nil), lb.workers...)
}

// worker finds an attached worker or frame by short or target id.
func (lb *liveBrowser) worker(id string) *Worker {
	for _, w := range lb.attachedWorkers() {
		if w.ID == id || w.TargetID == id {
			return w
		}
	}
	return nil
}

// waitPage waits until a page matching match is attached and configured.
func (lb *liveBrowser) waitPage(ctx context.Context, match func(*Page) bool) (*Page, error) {
	for {
		lb.mu.Lock()
		var found *Page
		for _, p := range lb.pages {
			if match(p) {
				found = p
				break
			}
		}
		changed := lb.changed
		lb.mu.Unlock()
		if found != nil {
			return found, found.waitReady(ctx)
		}
		select {
		case <-changed:
		case <-lb.Done():
			return nil, browser.ErrConnectionLost
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// newPage opens a blank tab and waits until it is attached and configured.
func (lb *liveBrowser) newPage(ctx context.Context) (*Page, error) {
	target, err := proto.TargetCreateTarget{URL: "about:blank"}.Call(lb.Conn.Session(ctx, ""))
	if err != nil {
		return nil, fmt.Errorf("open page: %w", err)
	}
	return lb.waitPage(ctx, func(p *Page) bool { return p.TargetID == string(target.TargetID) })
}

// initialPage returns the tab Chrome opened at start-up, or a new one if it
// has none (a headed Chrome may restore or skip it).
func (lb *liveBrowser) initialPage(ctx context.Context) (*Page, error) {
	wait, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	p, err := lb.waitPage(wait, func(*Page) bool { return true })
	if err == nil {
		return p, nil
	}
	if ctx.Err() != nil || lb.Gone() {
		return nil, err
	}
	return lb.newPage(ctx)
}

// closePage closes a tab and waits until it is detached.
func (lb *liveBrowser) closePage(ctx context.Context, p *Page) error {
	if _, err := (proto.TargetCloseTarget{TargetID: proto.TargetTargetID(p.TargetID)}).Call(lb.Conn.Session(ctx, "")); err != nil {
		return fmt.Errorf("close page: %w", err)
	}
	return p.waitFor(ctx, func() bool { return p.closed })
}

// targetSessions lists every attached page and worker for setOffline.
func (lb *liveBrowser) targetSessions(ctx context.Context, pageID func(*Page) string) []targetSession {
	var out []targetSession
	for _, p := range lb.attachedPages() {
		out = append(out, targetSession{id: pageID(p), sessionID: p.sessionID, client: p.cdp(ctx)})
	}
	for _, w := range lb.attachedWorkers() {
		out = append(out, targetSession{id: w.ID, sessionID: w.sessionID, client: w.cdp(ctx)})
	}
	return out
}

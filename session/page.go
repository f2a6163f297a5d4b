package session

import (
	"context"
	"encoding/json"
	"regexp"
	"sync"
	"time"

	"github.com/go-rod/rod/lib/proto"
	"go.uber.org/zap"

	"github.com/chromekeeper/chromekeeper/browser"
)

const (
	// maxLoaders bounds how many recent documents a page remembers.
	maxLoaders = 8
	// maxDialogs bounds the dialogs kept for the next answer.
	maxDialogs = 20
)

// viewport is every page's CSS viewport. Headless Chrome's window size leaves
// a smaller and version-dependent viewport, so it is set on each page.
var viewport = proto.EmulationSetDeviceMetricsOverride{Width: 1280, Height: 800, DeviceScaleFactor: 1}

// Page is one tab of the session's browser. The model knows it by ID ("p1");
// CDP by TargetID and the flattened session id. Its state is fed by events on
// the browser's dispatcher goroutine and read by tool calls; all of it is
// guarded by mu.
type Page struct {
	ID        string // empty until the page is registered in the session's table
	TargetID  string
	sessionID string
	conn      *browser.Conn
	log       *zap.Logger

	ready       chan struct{} // closed once domains are enabled and the page runs
	ownViewport bool          // a user's tab: leave its viewport alone

	net         netLog
	console     consoleBuffer
	events      *eventRing
	watch       watcher
	origin      origin // the page itself as the source of its events
	hmrPatterns []*regexp.Regexp

	mu      sync.Mutex
	url     string
	title   string
	loader  string         // loader id of the main frame's current document
	loaders []*loaderState // recent documents, newest last
	crashed bool
	closed  bool
	dialogs []Dialog
	changed chan struct{} // closed and replaced on every state change

	// Freshness of the console: a cross-document navigation or reload of
	// the main frame starts a new epoch; a hot update bumps the HMR
	// generation within it; SPA navigations are only counted.
	epoch       int
	epochLoader string
	epochStart  time.Time
	epochCause  string            // navigation, reload, back/forward
	pendingNav  map[string]string // loader id → navigation type, until it commits
	hmrGen      int
	hmrLast     time.Time
	hmrMatch    time.Time // last line that matched an HMR pattern
	wsFrameAt   time.Time // last WebSocket frame the page received (a dev server's update push)
	wsFrameSeq  int64     // the console's last seq when it arrived
	spaCount    int
	spaLast     string
	lastQuery   *consoleQueryMark
}

// loaderState is what the page's events said about one document.
type loaderState struct {
	id        string
	lifecycle map[string]bool // lifecycle event names seen: init, DOMContentLoaded, load, networkIdle…
	status    int             // HTTP status of the document response, 0 until known
}

// Dialog is a JavaScript dialog that chromekeeper answered on the page's behalf:
// an open dialog would block navigation and evaluation.
type Dialog struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// observeConfig is what every page of a browser needs to observe events.
type observeConfig struct {
	hmr        []*regexp.Regexp
	bufferSize int
	bufferTTL  time.Duration
	redact     bool
	// attached is set for a browser the user runs: its tabs keep their own viewport.
	attached bool
	// notify is called, debounced, when a page's event buffer grows.
	notify func(*Page)
}

func newPage(conn *browser.Conn, log *zap.Logger, cfg observeConfig, info *proto.TargetTargetInfo, sessionID string) *Page {
	p := &Page{
		ownViewport: cfg.attached,
		TargetID:    string(info.TargetID),
		sessionID:   sessionID,
		conn:        conn,
		log:         log,
		hmrPatterns: cfg.hmr,
		url:         info.URL,
		title:       info.Title,
		ready:       make(chan struct{}),
		changed:     make(chan struct{}),
		epochStart:  time.Now(),
		pendingNav:  map[string]string{},
	}
	p.origin = origin{source: "page", targetID: p.TargetID, sessionID: sessionID, net: &p.net, redact: cfg.redact}
	p.watch.redact = cfg.redact
	var notifyOnce debounce
	p.events = newEventRing(cfg.bufferSize, cfg.bufferTTL, func() {
		if cfg.notify != nil {
			notifyOnce.after(notifyInterval, func() { cfg.notify(p) })
		}
	})
	return p
}

// cdp returns a proto.Client for this page's session.
func (p *Page) cdp(ctx context.Context) proto.Client { return p.conn.Session(ctx, p.sessionID) }

// configure enables the domains chromekeeper listens to on the page,
// applies the session's settings and lets it run (see configureTarget).
func (p *Page) configure(st *settings, waiting bool) {
	defer close(p.ready)
	err := configureTarget(p.conn, p.sessionID, p.log, st, waiting, func(c proto.Client) []func() error {
		steps := []func() error{
			func() error { return proto.PageEnable{}.Call(c) },
			func() error { return proto.RuntimeEnable{}.Call(c) },
			func() error { return proto.LogEnable{}.Call(c) },
			func() error { return proto.PageSetLifecycleEventsEnabled{Enabled: true}.Call(c) },
			func() error { return proto.NetworkEnable{}.Call(c) },
			func() error { return proto.ServiceWorkerEnable{}.Call(c) },
			func() error { return autoAttach.Call(c) }, // its dedicated workers and iframes
		}
		if !p.ownViewport {
			steps = append(steps, func() error { return viewport.Call(c) })
		}
		return steps
	})
	if err != nil {
		// The page stays usable: a failed step costs one kind of report (a
		// status, a lifecycle point), which the affected call then names.
		p.log.Warn("configure page", zap.String("target", p.TargetID), zap.Error(err))
	}
}

// waitReady waits until configure has finished.
func (p *Page) waitReady(ctx context.Context) error {
	select {
	case <-p.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// onEvent updates the page's state from one CDP event. It runs on the
// browser's dispatcher goroutine and never waits for the browser.
func (p *Page) onEvent(raw browser.Event) {
	e := newCDPEvent(raw)
	p.net.onEvent(e, "page")
	p.observe(e, p.origin, true)
	p.watch.onEvent(e, func(ctx context.Context, requestID string) (string, bool, error) {
		return responseBody(ctx, p.conn, p.sessionID, requestID, true)
	})
	switch e.Method {
	case "Page.lifecycleEvent":
		var ev proto.PageLifecycleEvent
		if p.decode(e, &ev) && string(ev.FrameID) == p.TargetID {
			p.update(func() {
				if ev.Name == "init" {
					p.loader = string(ev.LoaderID)
				}
				p.loaderLocked(string(ev.LoaderID)).lifecycle[string(ev.Name)] = true
			})
		}
	case "Page.frameStartedNavigating":
		var ev struct {
			FrameID        string `json:"frameId"`
			LoaderID       string `json:"loaderId"`
			NavigationType string `json:"navigationType"`
		}
		if p.decode(e, &ev) && ev.FrameID == p.TargetID {
			p.update(func() {
				if len(p.pendingNav) > maxLoaders {
					clear(p.pendingNav)
				}
				p.pendingNav[ev.LoaderID] = ev.NavigationType
			})
		}
	case "Page.frameNavigated":
		var ev proto.PageFrameNavigated
		if p.decode(e, &ev) && ev.Frame != nil && ev.Frame.ParentID == "" {
			var left, cause, url string
			var newDocument bool
			p.update(func() {
				p.url = ev.Frame.URL + ev.Frame.URLFragment
				p.loader = string(ev.Frame.LoaderID)
				p.loaderLocked(p.loader)
				p.crashed = false // a new document runs in a live renderer
				left, newDocument = p.epochLoader, p.loader != p.epochLoader
				if newDocument {
					p.startEpochLocked()
				}
				cause, url = p.epochCause, p.url
			})
			if newDocument {
				p.watch.leaveDocument(left)
				p.events.add(navigationEvent(p.origin, url, cause))
			}
		}
	case "Page.navigatedWithinDocument":
		var ev proto.PageNavigatedWithinDocument
		if p.decode(e, &ev) && string(ev.FrameID) == p.TargetID {
			p.update(func() {
				p.url = ev.URL
				p.spaCount++
				p.spaLast = ev.URL
			})
			p.events.add(navigationEvent(p.origin, ev.URL, "sameDocument"))
		}
	case "Network.webSocketFrameReceived":
		seq := p.console.lastSeq()
		p.mu.Lock()
		p.wsFrameAt, p.wsFrameSeq = time.Now(), seq
		p.mu.Unlock()

	case "Network.responseReceived":
		if ev, ok := decodeAs[responseReceived](e); ok && ev.Type == string(proto.NetworkResourceTypeDocument) && ev.RequestID == ev.LoaderID {
			p.update(func() { p.loaderLocked(ev.LoaderID).status = ev.Response.Status })
		}
	case "Inspector.targetCrashed":
		p.update(func() { p.crashed = true })
	case "Page.javascriptDialogOpening":
		var ev proto.PageJavascriptDialogOpening
		if p.decode(e, &ev) {
			p.update(func() {
				p.dialogs = append(p.dialogs, Dialog{Type: string(ev.Type), Message: ev.Message})
				if len(p.dialogs) > maxDialogs {
					p.dialogs = p.dialogs[len(p.dialogs)-maxDialogs:]
				}
			})
			go p.answerDialog(ev)
		}
	}
}

// observe is the one pipeline every event of the page, or of a worker or
// frame it owns, goes through: the console stream (with epochs and HMR
// generations) and the event buffer. fromPage marks the page's own events.
func (p *Page) observe(e *cdpEvent, o origin, fromPage bool) {
	console := e.consoleFrom(o.source)
	if console != nil {
		p.addConsole(*console, fromPage)
	}
	if ev, ok := normalize(e, o, console); ok {
		p.events.add(ev)
	}
}

// startEpochLocked begins a new console epoch for the document that just
// committed; p.mu is held.
func (p *Page) startEpochLocked() {
	p.epoch++
	p.epochLoader = p.loader
	p.epochStart = time.Now()
	switch p.pendingNav[p.loader] {
	case "reload", "reloadBypassingCache":
		p.epochCause = "reload"
	case "historyDifferentDocument", "backForward":
		p.epochCause = "back/forward"
	default:
		p.epochCause = "navigation"
	}
	delete(p.pendingNav, p.loader)
	p.hmrGen, p.hmrLast, p.spaCount, p.spaLast = 0, time.Time{}, 0, ""
}

// addConsole stores a message of the page or of one of its workers, tagged
// with the page's epoch and HMR generation. A page line that matches an HMR
// pattern bumps the generation, unless it belongs to the same burst.
//
// Dev servers print their "updated" line after the new modules ran (Vite
// logs "[vite] hot updated" after the module re-executed), so the update
// began earlier: at the WebSocket frame that pushed it, when one arrived
// shortly before. Messages since that frame move to the new generation.
func (p *Page) addConsole(m ConsoleMessage, fromPage bool) {
	p.mu.Lock()
	if fromPage && p.isHMR(m.Text) {
		now := time.Now()
		if now.Sub(p.hmrMatch) > hmrBurst {
			p.hmrGen++
			p.hmrLast = now
			if now.Sub(p.wsFrameAt) < hmrPushWindow {
				p.console.retag(p.wsFrameSeq, p.epoch, p.hmrGen)
			}
		}
		p.hmrMatch = now
	}
	m.Epoch, m.HMR = p.epoch, p.hmrGen
	p.mu.Unlock()
	p.console.add(m)
}

func (p *Page) isHMR(text string) bool {
	for _, re := range p.hmrPatterns {
		if re.MatchString(text) {
			return true
		}
	}
	return false
}

// answerDialog accepts every dialog (alert, confirm, prompt with its default
// text, beforeunload), so that navigation and evaluation go on; the dialog is
// reported to the model by the call that caused it.
func (p *Page) answerDialog(ev proto.PageJavascriptDialogOpening) {
	ctx, cancel := context.WithTimeout(context.Background(), browser.ProbeTimeout)
	defer cancel()
	err := proto.PageHandleJavaScriptDialog{Accept: true, PromptText: ev.DefaultPrompt}.Call(p.cdp(ctx))
	if err != nil {
		p.log.Debug("answer dialog", zap.Error(err))
	}
}

func (p *Page) decode(e *cdpEvent, v any) bool {
	if err := json.Unmarshal(e.Params, v); err != nil {
		p.log.Debug("decode event", zap.String("method", e.Method), zap.Error(err))
		return false
	}
	return true
}

// update applies f under the lock and wakes every waiter.
func (p *Page) update(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f()
	close(p.changed)
	p.changed = make(chan struct{})
}

// loaderLocked returns the state of a document, creating it; p.mu is held.
func (p *Page) loaderLocked(id string) *loaderState {
	for _, l := range p.loaders {
		if l.id == id {
			return l
		}
	}
	l := &loaderState{id: id, lifecycle: map[string]bool{}}
	p.loaders = append(p.loaders, l)
	if len(p.loaders) > maxLoaders {
		p.loaders = p.loaders[1:]
	}
	return l
}

// waitFor waits until cond, evaluated under the lock, holds.
func (p *Page) waitFor(ctx context.Context, cond func() bool) error {
	for {
		p.mu.Lock()
		ok, changed := cond(), p.changed
		p.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// URL is the main frame's current URL as the last event reported it.
func (p *Page) URL() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.url
}

// Title is the title the page had when it was attached or last navigated by a tool.
func (p *Page) Title() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.title
}

func (p *Page) setTitle(title string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.title = title
}

// takeDialogs returns and forgets the dialogs answered since the last call.
func (p *Page) takeDialogs() []Dialog {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := p.dialogs
	p.dialogs = nil
	return d
}

func (p *Page) isCrashed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.crashed
}

func (p *Page) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

func (p *Page) markClosed() {
	p.update(func() { p.closed = true })
}

package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-rod/rod/lib/proto"
	"go.uber.org/zap"

	"github.com/chromekeeper/chromekeeper/browser"
)

// liveBrowser is one running Chrome with the targets attached on it. Every new
// target is attached paused (waitForDebuggerOnStart), configured, then resumed,
// so nothing it does slips past before chromekeeper listens.
type liveBrowser struct {
	*browser.Browser
	log *zap.Logger

	mu      sync.Mutex
	pages   []*Page // attached pages in attach order
	changed chan struct{}
	hung    string // why a call gave up on this browser, if it did
}

func startLive(ctx context.Context, starter browser.Starter, reuse *browser.Profile, log *zap.Logger) (*liveBrowser, error) {
	b, err := starter.Start(ctx, reuse)
	if err != nil {
		return nil, err
	}
	lb := &liveBrowser{Browser: b, log: log, changed: make(chan struct{})}
	b.Conn.Handle("", lb.onEvent)
	err = proto.TargetSetAutoAttach{AutoAttach: true, WaitForDebuggerOnStart: true, Flatten: true}.
		Call(b.Conn.Session(ctx, ""))
	if err != nil {
		b.Kill()
		return nil, fmt.Errorf("attach to targets: %w", err)
	}
	return lb, nil
}

func (lb *liveBrowser) onEvent(e browser.Event) {
	switch e.Method {
	case "Target.attachedToTarget":
		var ev proto.TargetAttachedToTarget
		if json.Unmarshal(e.Params, &ev) != nil || ev.TargetInfo == nil {
			return
		}
		sessionID := string(ev.SessionID)
		if ev.TargetInfo.Type != proto.TargetTargetInfoTypePage {
			if ev.WaitingForDebugger {
				go lb.resume(sessionID)
			}
			return
		}
		p := newPage(lb.Conn, lb.log, ev.TargetInfo, sessionID)
		lb.Conn.Handle(sessionID, p.onEvent)
		lb.update(func() { lb.pages = append(lb.pages, p) })
		go p.configure(ev.WaitingForDebugger)
	case "Target.detachedFromTarget":
		var ev proto.TargetDetachedFromTarget
		if json.Unmarshal(e.Params, &ev) != nil {
			return
		}
		lb.Conn.Handle(string(ev.SessionID), nil)
		lb.update(func() {
			for i, p := range lb.pages {
				if p.sessionID == string(ev.SessionID) {
					p.markClosed()
					lb.pages = append(lb.pages[:i], lb.pages[i+1:]...)
					return
				}
			}
		})
	}
}

// failedUnder reports whether err, returned by a call, means the browser itself
// is gone or hung rather than one page being slow; a hung browser is killed
// here so that the retry relaunches it.
func (lb *liveBrowser) failedUnder(ctx context.Context, err error) bool {
	if errors.Is(err, browser.ErrConnectionLost) || lb.Gone() {
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

// resume lets a non-page target that waits for the debugger run.
func (lb *liveBrowser) resume(sessionID string) {
	ctx, cancel := context.WithTimeout(context.Background(), browser.ProbeTimeout)
	defer cancel()
	if err := (proto.RuntimeRunIfWaitingForDebugger{}).Call(lb.Conn.Session(ctx, sessionID)); err != nil {
		lb.log.Debug("resume target", zap.Error(err))
	}
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

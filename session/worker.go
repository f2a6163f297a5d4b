package session

import (
	"context"
	"sync"

	"github.com/go-rod/rod/lib/proto"
	"go.uber.org/zap"

	"github.com/chromekeeper/chromekeeper/browser"
)

// Target types of the workers and frames a session watches besides its pages.
const (
	TypeServiceWorker = "service_worker"
	TypeSharedWorker  = "shared_worker"
	TypeWorker        = "worker"
	TypeIframe        = "iframe"
)

// idPrefix gives each kind of target its short-id prefix: sw1, w1, f1.
var idPrefix = map[string]string{
	TypeServiceWorker: "sw",
	TypeSharedWorker:  "w",
	TypeWorker:        "w",
	TypeIframe:        "f",
}

// Worker is a target of the session that is not a page: a service worker, a
// dedicated or shared worker, or an out-of-process iframe. Its requests are
// recorded, and it gets the session's settings (offline) before it runs.
type Worker struct {
	ID       string // sw1, w1, f1
	Type     string
	TargetID string
	URL      string
	// Owner is the target id of the page that spawned it (dedicated workers,
	// iframes); empty for service and shared workers, which belong to an origin.
	Owner string

	sessionID string
	conn      *browser.Conn
	log       *zap.Logger
	ready     chan struct{}

	mu     sync.Mutex
	closed bool
	scope  string // a service worker's registration scope, once known

	net netLog
}

func (w *Worker) cdp(ctx context.Context) proto.Client { return w.conn.Session(ctx, w.sessionID) }

func (w *Worker) onEvent(e *cdpEvent) {
	w.net.onEvent(e, w.ID)
	if e.Method == "Inspector.targetReloadedAfterCrash" {
		// A restarted worker waits for the debugger again; never leave it paused.
		go resume(w.conn, w.sessionID, w.log)
	}
}

func (w *Worker) isClosed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.closed
}

func (w *Worker) markClosed() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
}

// Requests returns the requests the worker made, oldest first.
func (w *Worker) Requests() []Request {
	return w.net.list(func(*Request) bool { return true })
}

// resume lets a target that waits for the debugger run.
func resume(conn *browser.Conn, sessionID string, log *zap.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), browser.ProbeTimeout)
	defer cancel()
	if err := (proto.RuntimeRunIfWaitingForDebugger{}).Call(conn.Session(ctx, sessionID)); err != nil {
		log.Debug("resume target", zap.Error(err))
	}
}

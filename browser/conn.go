package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"

	"github.com/go-rod/rod/lib/cdp"
	"github.com/go-rod/rod/lib/proto"
	"go.uber.org/zap"
)

// ErrConnectionLost reports that the CDP connection ended: the browser exited,
// crashed or was closed.
var ErrConnectionLost = errors.New("connection to chrome lost")

// Event is one CDP event. SessionID is empty for the browser's own session.
type Event struct {
	SessionID string
	Method    string
	Params    json.RawMessage
}

// EventHandler receives events on the connection's single dispatcher goroutine.
// It must return quickly and must not wait for a CDP answer (that answer would
// queue behind the event being handled); start a goroutine for such work.
type EventHandler func(Event)

// Conn is one CDP connection to a browser. Calls are safe for concurrent use.
// One goroutine, owned by the Conn and stopped when the connection ends, reads
// the event stream once and hands each event to the handler registered for its
// session, so that N waiters never mean N copies of the stream.
type Conn struct {
	client *cdp.Client
	close  func()
	log    *zap.Logger

	mu       sync.RWMutex
	handlers map[string]EventHandler

	done chan struct{}
}

func newConn(transport cdp.WebSocketable, closeTransport func(), log *zap.Logger) *Conn {
	c := &Conn{
		client:   cdp.New().Start(transport),
		close:    closeTransport,
		log:      log,
		handlers: map[string]EventHandler{},
		done:     make(chan struct{}),
	}
	go c.dispatch()
	return c
}

// Done is closed when the connection has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Call sends one CDP command and waits for its answer or for ctx to end. It
// implements rod's proto.Client, so typed requests can be sent with
// proto.X{}.Call(conn.Session(ctx, id)).
func (c *Conn) Call(ctx context.Context, sessionID, method string, params any) ([]byte, error) {
	select {
	case <-c.done:
		return nil, fmt.Errorf("%s: %w", method, ErrConnectionLost)
	default:
	}
	res, err := c.client.Call(ctx, sessionID, method, params)
	if err == nil {
		return res, nil
	}
	if isConnectionError(err) {
		return nil, fmt.Errorf("%s: %w", method, ErrConnectionLost)
	}
	return nil, fmt.Errorf("%s: %w", method, err)
}

// Session binds a context and a CDP session id for typed proto calls. An empty
// id addresses the browser itself.
func (c *Conn) Session(ctx context.Context, sessionID string) proto.Client {
	return boundSession{conn: c, ctx: ctx, id: sessionID}
}

// Handle registers h for the events of sessionID (empty: browser-level events),
// replacing any earlier handler; a nil h removes it.
func (c *Conn) Handle(sessionID string, h EventHandler) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h == nil {
		delete(c.handlers, sessionID)
		return
	}
	c.handlers[sessionID] = h
}

// Close ends the connection; it does not close the browser.
func (c *Conn) Close() {
	c.close()
	<-c.done
}

func (c *Conn) dispatch() {
	defer close(c.done)
	for e := range c.client.Event() {
		c.mu.RLock()
		h := c.handlers[e.SessionID]
		c.mu.RUnlock()
		if h != nil {
			c.deliver(h, Event{SessionID: e.SessionID, Method: e.Method, Params: e.Params})
		}
	}
}

// deliver runs one handler and keeps a panicking handler from taking the
// dispatcher, and with it every page of the browser, down.
func (c *Conn) deliver(h EventHandler, e Event) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("event handler panicked", zap.String("method", e.Method), zap.Any("panic", r))
		}
	}()
	h(e)
}

func isConnectionError(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrClosed) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)
}

type boundSession struct {
	conn *Conn
	ctx  context.Context
	id   string
}

func (s boundSession) Call(ctx context.Context, sessionID, method string, params any) ([]byte, error) {
	return s.conn.Call(ctx, sessionID, method, params)
}

func (s boundSession) GetContext() context.Context { return s.ctx }

func (s boundSession) GetSessionID() proto.TargetSessionID { return proto.TargetSessionID(s.id) }

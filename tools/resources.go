package tools

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/chromekeeper/chromekeeper/session"
)

// Resource URIs of a page.
const (
	eventsPrefix = "cdp://events/"
	harPrefix    = "cdp://har/"
	// resourceEvents is how many of the newest events the events resource holds.
	resourceEvents = 200
)

// Resources returns the resource templates: a page's newest events and its HAR.
func Resources(sessions Sessions, version string) []server.ServerResourceTemplate {
	t := &toolset{sessions: sessions}
	return []server.ServerResourceTemplate{
		{
			Template: mcp.NewResourceTemplate(eventsPrefix+"{page_id}", "events",
				mcp.WithTemplateDescription("A page's newest 200 events as JSON {nextOffset, events}; subscribe for updates."),
				mcp.WithTemplateMIMEType("application/json")),
			Handler: t.resource(eventsPrefix, func(ctx context.Context, c *session.Call, p *session.Page) any {
				return c.TailEvents(p, resourceEvents)
			}),
		},
		{
			Template: mcp.NewResourceTemplate(harPrefix+"{page_id}", "har",
				mcp.WithTemplateDescription("HAR 1.2 of a page's requests (bodies up to 10 KB, headers redacted)."),
				mcp.WithTemplateMIMEType("application/json")),
			Handler: t.resource(harPrefix, func(ctx context.Context, c *session.Call, p *session.Page) any {
				return c.HAR(ctx, p, version)
			}),
		},
	}
}

// resource serves one page resource as JSON. Reading never starts Chrome.
func (t *toolset) resource(prefix string, read func(context.Context, *session.Call, *session.Page) any) server.ResourceTemplateHandlerFunc {
	return func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		pageID := strings.TrimPrefix(req.Params.URI, prefix)
		s, err := t.sessions(ctx)
		if err != nil {
			return nil, err
		}
		var doc any
		_, err = s.Do(ctx, session.CallOptions{NoLaunch: true}, func(ctx context.Context, c *session.Call) error {
			if !c.Running() {
				return session.Errorf(session.CodeTargetNotFound, "no page %q: Chrome is not running", pageID)
			}
			p, err := c.Page(ctx, pageID)
			if err != nil {
				return err
			}
			doc = read(ctx, c, p)
			return nil
		})
		if err != nil {
			return nil, err
		}
		text, err := session.EncodeJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", req.Params.URI, err)
		}
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "application/json", Text: string(text)}}, nil
	}
}

// Subscriptions tracks which MCP sessions subscribed to which resources and
// tells them when a page's events resource changed. Safe for concurrent use.
type Subscriptions struct {
	mu     sync.Mutex
	server *server.MCPServer
	bySess map[string]map[string]bool // MCP session id → subscribed URIs
}

// NewSubscriptions returns an empty registry; Attach connects it to a server.
func NewSubscriptions() *Subscriptions {
	return &Subscriptions{bySess: map[string]map[string]bool{}}
}

// Hooks records subscriptions: resources/subscribe and unsubscribe (up to
// protocol 2025-11-25), and the resource URIs of a subscriptions/listen
// stream (2026-07-28) while it is open.
func (s *Subscriptions) Hooks(h *server.Hooks) {
	h.AddBeforeAny(func(ctx context.Context, _ any, method mcp.MCPMethod, message any) {
		s.listen(ctx, method, message, true)
	})
	h.AddOnSuccess(func(ctx context.Context, _ any, method mcp.MCPMethod, message any, _ any) {
		s.listen(ctx, method, message, false)
	})
	h.AddOnError(func(ctx context.Context, _ any, method mcp.MCPMethod, message any, _ error) {
		s.listen(ctx, method, message, false)
	})
	h.AddAfterSubscribe(func(ctx context.Context, _ any, req *mcp.SubscribeRequest, _ *mcp.EmptyResult) {
		if cs := server.ClientSessionFromContext(ctx); cs != nil {
			s.set(cs.SessionID(), req.Params.URI, true)
		}
	})
	h.AddAfterUnsubscribe(func(ctx context.Context, _ any, req *mcp.UnsubscribeRequest, _ *mcp.EmptyResult) {
		if cs := server.ClientSessionFromContext(ctx); cs != nil {
			s.set(cs.SessionID(), req.Params.URI, false)
		}
	})
	h.AddOnUnregisterSession(func(_ context.Context, cs server.ClientSession) {
		s.mu.Lock()
		delete(s.bySess, cs.SessionID())
		s.mu.Unlock()
	})
}

// listen records, when message is a subscriptions/listen request, its
// resource URIs as subscribed (the stream opens) or not (it ended).
func (s *Subscriptions) listen(ctx context.Context, method mcp.MCPMethod, message any, open bool) {
	listen, ok := message.(*mcp.SubscriptionsListenRequest)
	if !ok || method != mcp.MethodSubscriptionsListen {
		return
	}
	cs := server.ClientSessionFromContext(ctx)
	if cs == nil {
		return
	}
	for _, uri := range listen.Params.Notifications.ResourceSubscriptions {
		s.set(cs.SessionID(), uri, open)
	}
}

// Attach sets the server notifications go through.
func (s *Subscriptions) Attach(srv *server.MCPServer) {
	s.mu.Lock()
	s.server = srv
	s.mu.Unlock()
}

func (s *Subscriptions) set(sessionID, uri string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	uris := s.bySess[sessionID]
	if uris == nil {
		uris = map[string]bool{}
		s.bySess[sessionID] = uris
	}
	if on {
		uris[uri] = true
	} else {
		delete(uris, uri)
	}
}

// PageEvents tells the conversation's MCP session, if it subscribed, that
// cdp://events/{pageID} changed. The conversation id is the MCP session id.
func (s *Subscriptions) PageEvents(conversation, pageID string) {
	uri := eventsPrefix + pageID
	s.mu.Lock()
	srv, subscribed := s.server, s.bySess[conversation][uri]
	s.mu.Unlock()
	if srv != nil && subscribed {
		_ = srv.SendNotificationToSpecificClient(conversation, string(mcp.MethodNotificationResourceUpdated), map[string]any{"uri": uri})
	}
}

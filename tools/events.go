package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/chromekeeper/chromekeeper/session"
)

const (
	defaultEventLimit = 200
	maxEventLimit     = 1000
	// maxBodyText bounds a response body in an answer.
	maxBodyText = 100 << 10
)

func (t *toolset) readEvents() server.ServerTool {
	tool := mcp.NewTool("browser_read_events",
		mcp.WithDescription("Read the page's event buffer (console, network, websocket, navigation; its workers too) from offset; answers nextOffset."),
		mcp.WithInteger("offset", mcp.Description("Default 0")),
		mcp.WithInteger("limit", mcp.Description("Default 200, max 1000")),
		mcp.WithArray("kinds", mcp.WithStringEnumItems(session.EventKinds)),
		mcp.WithString("url_includes"),
		mcp.WithString("method"),
		pageIDOption,
		mcp.WithRawOutputSchema(outputSchema("nextOffset:integer", "dropped:integer", "events:array")),
		annotations(true),
	)
	return server.ServerTool{Tool: tool, Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := newArgs(req.Params.Arguments, "offset", "limit", "kinds", "url_includes", "method", "page_id")
		q := session.EventQuery{
			Offset:      int64(a.integer("offset", 0, 0, 1<<53)),
			Limit:       a.integer("limit", defaultEventLimit, 1, maxEventLimit),
			Kinds:       a.oneOfEach("kinds", session.EventKinds),
			URLIncludes: a.str("url_includes", false),
			Method:      a.str("method", false),
		}
		pageID := a.str("page_id", false)
		if err := a.problem(); err != nil {
			return toResult(nil, nil, err), nil
		}
		return t.onPage(ctx, session.CallOptions{}, pageID, func(ctx context.Context, c *session.Call, p *session.Page) (*answer, error) {
			page := c.ReadEvents(p, q)
			a := &answer{summary: fmt.Sprintf("%d events of %s from offset %d", len(page.Events), p.ID, q.Offset), data: page,
				lines: []string{line("Next offset", page.NextOffset)}}
			if page.Dropped > 0 {
				a.lines = append(a.lines, line("Dropped", fmt.Sprintf("%d events between offset %d and the oldest kept one", page.Dropped, q.Offset)))
			}
			for _, e := range page.Events {
				a.lines = append(a.lines, eventLine(e))
			}
			return a, nil
		})
	}}
}

// eventLine renders one event compactly; the structured answer has every field.
func eventLine(e session.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d %s", e.Seq, e.Kind)
	if e.Source != "page" {
		b.WriteString(" " + e.Source)
	}
	switch e.Kind {
	case session.KindConsole, session.KindLog, session.KindException:
		fmt.Fprintf(&b, " %s %q", e.Type, e.Text)
		if e.Stack != nil {
			fmt.Fprintf(&b, " (%s:%d:%d)", e.Stack.URL, e.Stack.Line, e.Stack.Column)
		}
	case session.KindRequest:
		fmt.Fprintf(&b, " %s %s [%s] id=%s", e.Method, e.URL, e.ResourceType, e.RequestID)
	case session.KindResponse:
		fmt.Fprintf(&b, " %d %s %s id=%s", e.Status, e.MIMEType, e.URL, e.RequestID)
		if e.FromServiceWorker {
			b.WriteString(" (service worker)")
		} else if e.FromDiskCache {
			b.WriteString(" (disk cache)")
		}
	case session.KindLoadingFinished:
		fmt.Fprintf(&b, " id=%s %.0f bytes", e.RequestID, e.EncodedDataLength)
	case session.KindLoadingFailed:
		fmt.Fprintf(&b, " id=%s %s", e.RequestID, e.ErrorText)
		if e.Canceled {
			b.WriteString(" (canceled)")
		}
	case session.KindWebSocket:
		fmt.Fprintf(&b, " %s %s", e.Type, e.URL)
		if e.PayloadPreview != "" {
			fmt.Fprintf(&b, " %q", session.Clip(e.PayloadPreview, 200))
		}
	case session.KindNavigation:
		fmt.Fprintf(&b, " %s %s", e.Type, e.URL)
	}
	return b.String()
}

func (t *toolset) clearEvents() server.ServerTool {
	tool := mcp.NewTool("browser_clear_events",
		mcp.WithDescription("Clear the page's event buffer; offsets go on."),
		pageIDOption,
		mcp.WithRawOutputSchema(outputSchema("cleared:integer", "page:string")),
		annotations(false),
	)
	return server.ServerTool{Tool: tool, Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := newArgs(req.Params.Arguments, "page_id")
		pageID := a.str("page_id", false)
		if err := a.problem(); err != nil {
			return toResult(nil, nil, err), nil
		}
		return t.onPage(ctx, session.CallOptions{}, pageID, func(ctx context.Context, c *session.Call, p *session.Page) (*answer, error) {
			n := c.ClearEvents(p)
			return &answer{summary: fmt.Sprintf("Cleared %d events of %s", n, p.ID), data: map[string]any{"cleared": n, "page": p.ID}}, nil
		})
	}}
}

func (t *toolset) responseBody() server.ServerTool {
	tool := mcp.NewTool("browser_get_response_body",
		mcp.WithDescription("Body of a response by request id (page or its workers)."),
		mcp.WithString("request_id", mcp.Required()),
		mcp.WithBoolean("base64"),
		pageIDOption,
		mcp.WithRawOutputSchema(outputSchema("requestId:string", "mimeType:string", "encoded:boolean", "body:string", "size:integer", "truncated:boolean")),
		annotations(true),
	)
	return server.ServerTool{Tool: tool, Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := newArgs(req.Params.Arguments, "request_id", "base64", "page_id")
		requestID := a.str("request_id", true)
		base64 := a.boolean("base64", false)
		pageID := a.str("page_id", false)
		if err := a.problem(); err != nil {
			return toResult(nil, nil, err), nil
		}
		return t.onPage(ctx, session.CallOptions{}, pageID, func(ctx context.Context, c *session.Call, p *session.Page) (*answer, error) {
			body, err := c.ResponseBody(ctx, p, requestID, base64)
			if err != nil {
				return nil, err
			}
			size, truncated := len(body.Body), false
			if size > maxBodyText {
				body.Body, truncated = strings.ToValidUTF8(body.Body[:maxBodyText], ""), true
			}
			text := body.Body
			if truncated {
				text += fmt.Sprintf("… [truncated: the body is %d bytes]", size)
			}
			return &answer{summary: "Body of " + requestID, lines: []string{
				line("MIME type", body.MIMEType), line("Encoded", body.Encoded), line("Size", fmt.Sprintf("%d bytes", size)), "Body:", text,
			}, data: map[string]any{"requestId": body.RequestID, "mimeType": body.MIMEType, "encoded": body.Encoded,
				"body": body.Body, "size": size, "truncated": truncated}}, nil
		})
	}}
}

func (t *toolset) eventFilters() server.ServerTool {
	tool := mcp.NewTool("browser_event_filters",
		mcp.WithDescription("Get the page's event filters, or set any given field; applied before events are stored."),
		mcp.WithArray("kinds", mcp.WithStringEnumItems(session.FilterKinds)),
		mcp.WithArray("url_allowlist", mcp.WithStringItems(), mcp.Description("URL substrings")),
		mcp.WithArray("url_blocklist", mcp.WithStringItems(), mcp.Description("Checked first")),
		mcp.WithInteger("max_body_bytes"),
		pageIDOption,
		mcp.WithRawOutputSchema(outputSchema("kinds:array", "url_allowlist:array", "url_blocklist:array", "max_body_bytes:integer")),
		annotations(false),
	)
	return server.ServerTool{Tool: tool, Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := newArgs(req.Params.Arguments, "kinds", "url_allowlist", "url_blocklist", "max_body_bytes", "page_id")
		kinds, allow, block := a.oneOfEach("kinds", session.FilterKinds), a.strs("url_allowlist"), a.strs("url_blocklist")
		maxBody := a.integer("max_body_bytes", 0, 0, 10<<20)
		set, changes := map[string]bool{}, false
		for _, name := range []string{"kinds", "url_allowlist", "url_blocklist", "max_body_bytes"} {
			set[name] = a.present(name)
			changes = changes || set[name]
		}
		pageID := a.str("page_id", false)
		if err := a.problem(); err != nil {
			return toResult(nil, nil, err), nil
		}
		return t.onPage(ctx, session.CallOptions{}, pageID, func(ctx context.Context, c *session.Call, p *session.Page) (*answer, error) {
			f := c.EventFilters(p, func(f *session.EventFilters) {
				if set["kinds"] {
					f.Kinds = kinds
				}
				if set["url_allowlist"] {
					f.URLAllowlist = allow
				}
				if set["url_blocklist"] {
					f.URLBlocklist = block
				}
				if set["max_body_bytes"] {
					f.MaxBodyBytes = maxBody
				}
			})
			summary := "Event filters of " + p.ID
			if changes {
				summary = "Updated event filters of " + p.ID
			}
			all := "all"
			if len(f.Kinds) > 0 {
				all = strings.Join(f.Kinds, ", ")
			}
			return &answer{summary: summary, data: f, lines: []string{
				line("Kinds", all),
				line("URL allowlist", listOrNone(f.URLAllowlist)),
				line("URL blocklist", listOrNone(f.URLBlocklist)+" (checked before the allowlist)"),
				line("Max body bytes", f.MaxBodyBytes),
			}}, nil
		})
	}}
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}

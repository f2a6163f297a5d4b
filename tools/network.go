package tools

import (
	"context"
	"encoding/xml"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/chromekeeper/chromekeeper/session"
)

func (t *toolset) watchNetwork() server.ServerTool {
	tool := mcp.NewTool("browser_watch_network",
		mcp.WithDescription("Start watching the page's requests (or reconfigure and clear); read them with browser_get_network_requests."),
		mcp.WithArray("resource_types", mcp.WithStringEnumItems(session.WatchTypes), mcp.Description("Default xhr, fetch")),
		pageIDOption,
		mcp.WithRawOutputSchema(outputSchema("page:string", "resourceTypes:array")),
		annotations(false),
	)
	return server.ServerTool{Tool: tool, Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := newArgs(req.Params.Arguments, "resource_types", "page_id")
		types := a.oneOfEach("resource_types", session.WatchTypes)
		if len(types) == 0 {
			types = session.DefaultWatchTypes
		}
		pageID := a.str("page_id", false)
		if err := a.problem(); err != nil {
			return toResult(nil, nil, err), nil
		}
		return t.onPage(ctx, session.CallOptions{}, pageID, func(ctx context.Context, c *session.Call, p *session.Page) (*answer, error) {
			c.Watch(p, types)
			return &answer{summary: fmt.Sprintf("Watching network requests on page %s for: %s", p.ID, strings.Join(types, ", ")),
				data: map[string]any{"page": p.ID, "resourceTypes": types}}, nil
		})
	}}
}

func (t *toolset) getNetworkRequests() server.ServerTool {
	tool := mcp.NewTool("browser_get_network_requests",
		mcp.WithDescription("The watched requests since the last read, as XML with headers and bodies (10 KB), then cleared."),
		mcp.WithString("url_pattern", mcp.Description("Regex")),
		mcp.WithString("method"),
		mcp.WithInteger("status_min"),
		mcp.WithInteger("status_max"),
		mcp.WithInteger("limit", mcp.Description("Newest N")),
		pageIDOption,
		mcp.WithRawOutputSchema(outputSchema("count:integer", "page:string", "requests:array")),
		annotations(false),
	)
	return server.ServerTool{Tool: tool, Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := newArgs(req.Params.Arguments, "url_pattern", "method", "status_min", "status_max", "limit", "page_id")
		var pattern *regexp.Regexp
		if raw := a.str("url_pattern", false); raw != "" {
			re, err := regexp.Compile(raw)
			if err != nil {
				a.fail("url_pattern is not a valid regular expression: %v", err)
			}
			pattern = re
		}
		method := a.str("method", false)
		statusMin, statusMax := a.integer("status_min", 0, 0, 999), a.integer("status_max", 999, 0, 999)
		limit := a.integer("limit", 0, 1, maxWatchedShown)
		pageID := a.str("page_id", false)
		if err := a.problem(); err != nil {
			return toResult(nil, nil, err), nil
		}
		s, err := t.sessions(ctx)
		if err != nil {
			return toResult(nil, nil, err), nil
		}
		var result *mcp.CallToolResult
		notices, err := s.Do(ctx, session.CallOptions{}, func(ctx context.Context, c *session.Call) error {
			p, err := c.Page(ctx, pageID)
			if err != nil {
				return err
			}
			reqs, watching := c.TakeWatched(ctx, p)
			if !watching {
				result = notWatching()
				return nil
			}
			var kept []session.WatchedRequest
			for _, r := range reqs {
				if (pattern == nil || pattern.MatchString(r.URL)) && (method == "" || strings.EqualFold(r.Method, method)) &&
					(r.Status == 0 && statusMin == 0 || r.Status >= statusMin && r.Status <= statusMax) {
					kept = append(kept, r)
				}
			}
			if limit > 0 && len(kept) > limit {
				kept = kept[len(kept)-limit:]
			}
			if kept == nil {
				kept = []session.WatchedRequest{}
			}
			result = &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(renderRequests(p.ID, kept))},
				StructuredContent: map[string]any{"count": len(kept), "page": p.ID, "requests": kept}}
			return nil
		})
		if err != nil || result == nil {
			return toResult(notices, nil, err), nil
		}
		prependNotices(result, notices)
		return result, nil
	}}
}

// maxWatchedShown bounds the requests one read shows.
const maxWatchedShown = 2000

// notWatching is seed 000's answer for a page that is not being watched.
func notWatching() *mcp.CallToolResult {
	e := session.Errorf(session.CodeNotObserving, "Network watcher not active on this page. Call browser_watch_network first.")
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent("<error>" + xmlText(e.Message) + "</error>")},
		StructuredContent: map[string]any{"error": errorData{Code: e.Code, Message: e.Message}},
		IsError:           true,
	}
}

// prependNotices puts NOTICE lines before an answer that is not one of ours (XML).
func prependNotices(r *mcp.CallToolResult, notices []string) {
	if len(notices) == 0 || len(r.Content) == 0 {
		return
	}
	if text, ok := r.Content[0].(mcp.TextContent); ok {
		text.Text = strings.Join(notices, "\n") + "\n" + text.Text
		r.Content[0] = text
	}
	if m, ok := r.StructuredContent.(map[string]any); ok {
		m["notices"] = notices
	}
}

// renderRequests writes seed 000's XML.
func renderRequests(pageID string, reqs []session.WatchedRequest) string {
	var b strings.Builder
	if len(reqs) == 0 {
		fmt.Fprintf(&b, `<network_requests count="0" page_id=%s />`, xmlAttr(pageID))
		return b.String()
	}
	fmt.Fprintf(&b, `<network_requests count="%d" page_id=%s>`+"\n", len(reqs), xmlAttr(pageID))
	for _, r := range reqs {
		fmt.Fprintf(&b, `  <request seq="%d" method=%s url=%s resource_type=%s`, r.Seq, xmlAttr(r.Method), xmlAttr(r.URL), xmlAttr(r.ResourceType))
		if r.Status > 0 {
			fmt.Fprintf(&b, ` status="%d"`, r.Status)
		}
		if r.DurationMS > 0 || r.State != "pending" {
			fmt.Fprintf(&b, ` duration_ms="%d"`, r.DurationMS)
		}
		fmt.Fprintf(&b, ` timestamp="%d" state=%s`, r.Timestamp, xmlAttr(r.State))
		if r.Failure != "" {
			fmt.Fprintf(&b, ` failure=%s`, xmlAttr(r.Failure))
		}
		if r.ResourceType == "websocket" {
			fmt.Fprintf(&b, ` frames_sent="%d" frames_received="%d"`, r.FramesSent, r.FramesReceived)
		}
		inner := headersXML("request_headers", r.RequestHeaders) + headersXML("response_headers", r.ResponseHeaders)
		if r.RequestBody != "" {
			inner += fmt.Sprintf("    <request_body truncated=\"%v\">%s</request_body>\n", r.RequestTruncated, xmlText(r.RequestBody))
		}
		if r.ResponseBody != "" {
			inner += fmt.Sprintf("    <response_body truncated=\"%v\">%s</response_body>\n", r.ResponseTruncated, xmlText(r.ResponseBody))
		}
		if inner == "" {
			b.WriteString(" />\n")
			continue
		}
		b.WriteString(">\n" + inner + "  </request>\n")
	}
	b.WriteString("</network_requests>")
	return b.String()
}

func headersXML(tag string, h map[string]string) string {
	if len(h) == 0 {
		return ""
	}
	names := make([]string, 0, len(h))
	for name := range h {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "    <%s>\n", tag)
	for _, name := range names {
		fmt.Fprintf(&b, "      <header name=%s>%s</header>\n", xmlAttr(name), xmlText(h[name]))
	}
	fmt.Fprintf(&b, "    </%s>\n", tag)
	return b.String()
}

func xmlText(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

func xmlAttr(s string) string { return `"` + xmlText(s) + `"` }

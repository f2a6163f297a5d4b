package tools

import (
	"context"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/chromekeeper/chromekeeper/session"
)

func (t *toolset) pages() server.ServerTool {
	tool := mcp.NewTool("browser_pages",
		mcp.WithDescription("List pages and workers, or select, open, close a page. Tools use the current page by default."),
		mcp.WithString("action", mcp.Enum("list", "select", "new", "close")),
		mcp.WithString("page_id"),
		mcp.WithString("url", mcp.Description("For new")),
		mcp.WithRawOutputSchema(outputSchema("pages:array", "workers:array", "current:string", "page:string", "url:string", "status:integer", "title:string")),
		annotations(false),
	)
	return server.ServerTool{Tool: tool, Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := newArgs(req.Params.Arguments, "action", "page_id", "url")
		action := a.enum("action", "list", []string{"list", "select", "new", "close"})
		pageID := a.str("page_id", action == "select")
		rawURL := a.str("url", false)
		if a.present("url") && action != "new" {
			a.fail("url is only for action new")
		}
		if err := a.problem(); err != nil {
			return toResult(nil, nil, err), nil
		}
		target := ""
		if rawURL != "" {
			var err error
			if target, err = t.policy.navigationURL(rawURL); err != nil {
				return toResult(nil, nil, err), nil
			}
		}
		opts := session.CallOptions{NoLaunch: action == "list"}
		return t.run(ctx, opts, func(ctx context.Context, c *session.Call) (*answer, error) {
			switch action {
			case "select":
				p, err := c.Select(ctx, pageID)
				if err != nil {
					return nil, err
				}
				return &answer{summary: "Selected " + p.ID, lines: []string{line("URL", p.URL())},
					data: map[string]any{"page": p.ID, "url": p.URL(), "current": p.ID}}, nil
			case "new":
				return openPage(ctx, c, target)
			case "close":
				closed, current, err := c.ClosePage(ctx, pageID)
				if err != nil {
					return nil, err
				}
				shown := current
				if shown == "" {
					shown = "none (the next call opens a new page)"
				}
				return &answer{summary: "Closed " + closed.ID, lines: []string{line("Current", shown)},
					data: map[string]any{"page": closed.ID, "current": current}}, nil
			default:
				return listPages(ctx, c)
			}
		})
	}}
}

func openPage(ctx context.Context, c *session.Call, target string) (*answer, error) {
	p, err := c.NewPage(ctx)
	if err != nil {
		return nil, err
	}
	if target == "" {
		return &answer{summary: "Opened " + p.ID, lines: []string{line("URL", "about:blank"), line("Page", p.ID)},
			data: navigationResult{URL: "about:blank", Page: p.ID}}, nil
	}
	nav, err := withTimeout(ctx, defaultTimeoutMS*time.Millisecond, func(ctx context.Context) (*session.Navigation, error) {
		return p.Navigate(ctx, target, session.WaitLoad)
	})
	if err != nil {
		e := session.AsError(err)
		e.Details = append(e.Details, fmt.Sprintf("Page: %s was opened and is current; loading %s failed", p.ID, target))
		return nil, e
	}
	return navigationAnswer("Opened "+p.ID, p.ID, nav), nil
}

func listPages(ctx context.Context, c *session.Call) (*answer, error) {
	pages, err := c.Pages(ctx)
	if err != nil {
		return nil, err
	}
	a := &answer{summary: fmt.Sprintf("%d pages", len(pages))}
	current := ""
	for _, p := range pages {
		mark := " "
		if p.Current {
			mark, current = "*", p.ID
		}
		a.lines = append(a.lines, fmt.Sprintf("%s %s %s %q", mark, p.ID, p.URL, p.Title))
	}
	workers := c.Workers(ctx)
	for _, w := range workers {
		owner := ""
		if w.Owner != "" {
			owner = " of " + w.Owner
		}
		a.lines = append(a.lines, fmt.Sprintf("  %s %s %s%s", w.ID, w.Type, w.URL, owner))
	}
	if len(pages) == 0 {
		a.lines = append(a.lines, "Chrome is not running; the first call that needs a page starts it.")
	}
	if pages == nil {
		pages = []session.PageInfo{}
	}
	if workers == nil {
		workers = []session.WorkerInfo{}
	}
	a.data = map[string]any{"pages": pages, "workers": workers, "current": current}
	return a, nil
}

func (t *toolset) session() server.ServerTool {
	tool := mcp.NewTool("browser_session",
		mcp.WithDescription("Browser status (pid, uptime, idle time left, relaunches, offline), or close it to start fresh."),
		mcp.WithString("action", mcp.Enum("status", "close")),
		mcp.WithRawOutputSchema(outputSchema("running:boolean", "pid:integer", "version:string", "uptimeMs:integer",
			"idleTimeLeftMs:integer", "relaunches:integer", "profileDir:string", "pages:integer", "currentPage:string", "offline:boolean")),
		annotations(false),
	)
	return server.ServerTool{Tool: tool, Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := newArgs(req.Params.Arguments, "action")
		action := a.enum("action", "status", []string{"status", "close"})
		if err := a.problem(); err != nil {
			return toResult(nil, nil, err), nil
		}
		s, err := t.sessions(ctx)
		if err != nil {
			return toResult(nil, nil, err), nil
		}
		var st session.Status
		notices, err := s.Do(ctx, session.CallOptions{NoLaunch: true}, func(ctx context.Context, c *session.Call) error {
			st = c.Status()
			return nil
		})
		if err != nil || action == "status" {
			return toResult(notices, statusAnswer(st), err), nil
		}
		s.Release("was closed by browser_session close")
		ans := &answer{summary: "Browser closed", data: sessionResult{Running: false, PID: st.PID, ProfileDir: st.ProfileDir}}
		if st.Running {
			ans.lines = []string{line("PID", fmt.Sprintf("%d (killed)", st.PID)), line("Profile removed", st.ProfileDir)}
		} else {
			ans.summary = "Browser was not running"
		}
		return toResult(notices, ans, nil), nil
	}}
}

type sessionResult struct {
	Running      bool   `json:"running"`
	PID          int    `json:"pid,omitempty"`
	Version      string `json:"version,omitempty"`
	UptimeMS     int64  `json:"uptimeMs,omitempty"`
	IdleTimeLeft int64  `json:"idleTimeLeftMs,omitempty"`
	Relaunches   int    `json:"relaunches"`
	ProfileDir   string `json:"profileDir,omitempty"`
	Pages        int    `json:"pages"`
	CurrentPage  string `json:"currentPage,omitempty"`
	Offline      bool   `json:"offline"`
}

func statusAnswer(st session.Status) *answer {
	res := sessionResult{Running: st.Running, Relaunches: st.Relaunches, Offline: st.Offline}
	if !st.Running {
		return &answer{summary: "Browser not running", data: res, lines: []string{
			"Chrome starts with the first call that needs a page.",
			line("Idle timeout", st.IdleTimeout),
			line("Launches", st.Launches),
			line("Offline", st.Offline),
		}}
	}
	res.PID, res.Version, res.ProfileDir = st.PID, st.Version, st.ProfileDir
	res.UptimeMS, res.IdleTimeLeft = st.Uptime.Milliseconds(), st.IdleTimeout.Milliseconds()
	res.Pages, res.CurrentPage = st.Pages, st.CurrentPage
	return &answer{summary: "Browser running", data: res, lines: []string{
		line("PID", st.PID),
		line("Version", st.Version),
		line("Uptime", st.Uptime.Round(time.Second)),
		// The idle clock stops during a call and restarts in full when it ends.
		line("Idle time left", fmt.Sprintf("%s (restarts after every call)", st.IdleTimeout)),
		line("Launches", st.Launches),
		line("Relaunches", st.Relaunches),
		line("Profile", st.ProfileDir),
		line("Pages", fmt.Sprintf("%d (current: %s)", st.Pages, st.CurrentPage)),
		line("Offline", st.Offline),
	}}
}

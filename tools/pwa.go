package tools

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/chromekeeper/chromekeeper/session"
)

// maxCacheURLs bounds the entry URLs listed per cache.
const maxCacheURLs = 50

func (t *toolset) setOffline() server.ServerTool {
	tool := mcp.NewTool("browser_set_offline",
		mcp.WithDescription("Offline on/off for every page, service worker and worker, now and later."),
		mcp.WithBoolean("offline", mcp.Required()),
		mcp.WithRawOutputSchema(outputSchema("offline:boolean", "covers:array", "failed:array", "notCovered:string")),
		annotations(false),
	)
	return server.ServerTool{Tool: tool, Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := newArgs(req.Params.Arguments, "offline")
		if !a.present("offline") {
			a.fail("offline is required (true or false)")
		}
		offline := a.boolean("offline", false)
		if err := a.problem(); err != nil {
			return toResult(nil, nil, err), nil
		}
		return t.run(ctx, session.CallOptions{}, func(ctx context.Context, c *session.Call) (*answer, error) {
			change := c.SetOffline(ctx, offline)
			sort.Strings(change.Covered)
			state := "online"
			if offline {
				state = "offline"
			}
			a := &answer{
				summary: "Browser is " + state,
				lines: []string{
					line("Offline", offline),
					line("Covers", strings.Join(change.Covered, ", ")+" and every page, worker and frame opened later, and new service-worker registrations"),
					line("Not covered", session.UpdateCheckLeak),
				},
				data: setOfflineResult{Offline: offline, Covers: change.Covered, Failed: change.Failed, NotCovered: session.UpdateCheckLeak},
			}
			for _, f := range change.Failed {
				a.lines = append(a.lines, line("Could not switch", f))
			}
			return a, nil
		})
	}}
}

type setOfflineResult struct {
	Offline    bool     `json:"offline"`
	Covers     []string `json:"covers"`
	Failed     []string `json:"failed,omitempty"`
	NotCovered string   `json:"notCovered"`
}

func (t *toolset) serviceWorkers() server.ServerTool {
	actions := []string{"list", "update", "unregister", "skip_waiting", "stop", "caches"}
	tool := mcp.NewTool("browser_service_workers",
		mcp.WithDescription("Service worker registrations (versions, status, controlled pages), actions on one, or Cache Storage."),
		mcp.WithString("action", mcp.Enum(actions...)),
		mcp.WithString("scope", mcp.Description("Default: the one covering the page")),
		pageIDOption,
		mcp.WithRawOutputSchema(outputSchema("registrations:array", "controlled:boolean", "caches:array")),
		annotations(false),
	)
	return server.ServerTool{Tool: tool, Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := newArgs(req.Params.Arguments, "action", "scope", "page_id")
		action := a.enum("action", "list", actions)
		scope := a.str("scope", false)
		pageID := a.str("page_id", false)
		if err := a.problem(); err != nil {
			return toResult(nil, nil, err), nil
		}
		return t.onPage(ctx, session.CallOptions{}, pageID, func(ctx context.Context, c *session.Call, p *session.Page) (*answer, error) {
			switch action {
			case "list":
				regs := c.ServiceWorkers(ctx)
				return registrationsAnswer(fmt.Sprintf("%d service worker registrations", len(session.LiveRegistrations(regs))), p, regs), nil
			case "caches":
				caches, err := c.Caches(ctx, p, maxCacheURLs)
				if err != nil {
					return nil, err
				}
				return cachesAnswer(caches), nil
			default:
				reg, err := c.ServiceWorkerAction(ctx, p, action, scope)
				if err != nil {
					return nil, err
				}
				return registrationsAnswer(strings.ReplaceAll(action, "_", " ")+" done: "+reg.Scope, p, []session.Registration{reg}), nil
			}
		})
	}}
}

// registrationsAnswer lists registrations, one line each and a line per
// version, and says whether the page is controlled.
func registrationsAnswer(summary string, p *session.Page, regs []session.Registration) *answer {
	a := &answer{summary: summary}
	controlled := false
	for _, r := range regs {
		deleted := ""
		if r.Deleted {
			deleted = " (unregistered)"
		}
		a.lines = append(a.lines, fmt.Sprintf("Registration %s: scope %s%s", r.ID, r.Scope, deleted))
		for _, v := range r.Versions {
			controlled = controlled || slices.Contains(v.Controls, p.ID)
			a.lines = append(a.lines, fmt.Sprintf("  version %s: %s, %s, script %s, controls %s", v.ID, v.Status, v.RunningStatus, v.ScriptURL, listOrNone(v.Controls)))
		}
	}
	a.lines = append(a.lines, fmt.Sprintf("Page %s controlled: %v", p.ID, controlled))
	if regs == nil {
		regs = []session.Registration{}
	}
	a.data = map[string]any{"registrations": regs, "controlled": controlled}
	return a
}

func cachesAnswer(caches []session.Cache) *answer {
	a := &answer{summary: fmt.Sprintf("%d caches", len(caches))}
	for _, cache := range caches {
		a.lines = append(a.lines, fmt.Sprintf("Cache %q: %d entries", cache.Name, cache.Entries))
		for _, u := range cache.URLs {
			a.lines = append(a.lines, "  "+u)
		}
		if more := cache.Entries - len(cache.URLs); more > 0 {
			a.lines = append(a.lines, fmt.Sprintf("  … %d more", more))
		}
	}
	if caches == nil {
		caches = []session.Cache{}
	}
	a.data = map[string]any{"caches": caches}
	return a
}

func (t *toolset) networkSources() server.ServerTool {
	tool := mcp.NewTool("browser_network_sources",
		mcp.WithDescription("Where each response of the page load came from: network, service-worker (+ its source), disk-cache, memory-cache, prefetch-cache; plus the workers' own requests."),
		mcp.WithInteger("limit", mcp.Description("Default 100")),
		mcp.WithBoolean("include_worker_requests", mcp.Description("Default true")),
		pageIDOption,
		mcp.WithRawOutputSchema(outputSchema("page:string", "counts:object", "total:integer", "requests:array")),
		annotations(true),
	)
	return server.ServerTool{Tool: tool, Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := newArgs(req.Params.Arguments, "limit", "include_worker_requests", "page_id")
		limit := a.integer("limit", 100, 1, 1000)
		includeWorkers := a.boolean("include_worker_requests", true)
		pageID := a.str("page_id", false)
		if err := a.problem(); err != nil {
			return toResult(nil, nil, err), nil
		}
		return t.onPage(ctx, session.CallOptions{}, pageID, func(ctx context.Context, c *session.Call, p *session.Page) (*answer, error) {
			return sourcesAnswer(p, c.NetworkSources(p, includeWorkers), limit), nil
		})
	}}
}

// sourcesAnswer: a summary line counting each source, then one line per
// request, newest limit of them.
func sourcesAnswer(p *session.Page, reqs []session.Request, limit int) *answer {
	counts := map[string]int{}
	for _, r := range reqs {
		counts[r.Source]++
	}
	var buckets []string
	for source, n := range counts {
		buckets = append(buckets, fmt.Sprintf("%s %d", source, n))
	}
	sort.Strings(buckets)
	total := len(reqs)
	if len(reqs) > limit {
		reqs = reqs[len(reqs)-limit:]
	}
	a := &answer{summary: fmt.Sprintf("%d responses for %s (%s)", total, p.ID, p.URL())}
	a.lines = append(a.lines, line("Sources", strings.Join(buckets, ", ")))
	if total > len(reqs) {
		a.lines = append(a.lines, fmt.Sprintf("Showing the newest %d", len(reqs)))
	}
	for _, r := range reqs {
		source := r.Source
		if r.WorkerSource != "" {
			source += "/" + r.WorkerSource
		}
		if r.CacheName != "" {
			source += fmt.Sprintf(" (cache %q)", r.CacheName)
		}
		if r.Revalidated {
			source += " (revalidated)"
		}
		status := fmt.Sprint(r.Status)
		if r.Error != "" {
			status = r.Error
		}
		l := fmt.Sprintf("%s %s %s %s [%s]", source, status, r.Method, r.URL, r.Type)
		if r.Initiator != "page" {
			l += " initiator: " + r.Initiator
		}
		a.lines = append(a.lines, l)
	}
	if reqs == nil {
		reqs = []session.Request{}
	}
	a.data = map[string]any{"page": p.ID, "counts": counts, "total": total, "requests": reqs}
	return a
}

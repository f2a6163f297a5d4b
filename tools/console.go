package tools

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/chromekeeper/chromekeeper/session"
)

const (
	defaultConsoleLimit = 100
	// maxConsoleText bounds a console answer; the oldest lines go first.
	maxConsoleText = 32 << 10
)

func (t *toolset) consoleLogs() server.ServerTool {
	tool := mcp.NewTool("browser_console_logs",
		mcp.WithDescription("Console of the page and its workers since the last navigation, with a freshness header: reloads, HMR updates and SPA navigations since your last query."),
		mcp.WithArray("level", mcp.WithStringEnumItems(session.ValidLevels)),
		mcp.WithString("pattern", mcp.Description("Regex on the text")),
		mcp.WithInteger("since", mcp.Description("Epoch ms")),
		mcp.WithInteger("limit", mcp.Description("Newest N, default 100")),
		mcp.WithBoolean("include_previous_epochs"),
		mcp.WithString("source", mcp.Description("page, worker, all (default) or an id: sw1")),
		pageIDOption,
		mcp.WithRawOutputSchema(outputSchema("page:string", "epoch:integer", "hmrUpdates:integer", "spaNavigations:integer",
			"delta:string", "matched:integer", "messages:array")),
		annotations(true),
	)
	return server.ServerTool{Tool: tool, Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := newArgs(req.Params.Arguments, "level", "pattern", "since", "limit", "include_previous_epochs", "source", "page_id")
		var q session.ConsoleQuery
		levels, err := session.ParseLevels(a.strs("level"))
		if err != nil {
			a.fail("level: %v", err)
		}
		q.Levels = levels
		if pattern := a.str("pattern", false); pattern != "" {
			re, err := regexp.Compile(pattern)
			if err != nil {
				a.fail("pattern is not a valid regular expression: %v", err)
			}
			q.Pattern = re
		}
		if since := a.integer("since", 0, 0, 1<<53); since > 0 {
			q.Since = time.UnixMilli(int64(since))
		}
		q.Limit = a.integer("limit", defaultConsoleLimit, 1, 1000)
		q.IncludePreviousEpochs = a.boolean("include_previous_epochs", false)
		q.Source = a.str("source", false)
		pageID := a.str("page_id", false)
		if err := a.problem(); err != nil {
			return toResult(nil, nil, err), nil
		}
		return t.onPage(ctx, session.CallOptions{}, pageID, func(ctx context.Context, c *session.Call, p *session.Page) (*answer, error) {
			return consoleAnswer(c.ConsoleLogs(p, q)), nil
		})
	}}
}

type consoleResult struct {
	Page           string                   `json:"page"`
	URL            string                   `json:"url"`
	Epoch          int                      `json:"epoch"`
	EpochCause     string                   `json:"epochCause,omitempty"`
	EpochAgeMS     int64                    `json:"epochAgeMs"`
	HMRUpdates     int                      `json:"hmrUpdates"`
	LastHMRAgeMS   int64                    `json:"lastHmrAgeMs,omitempty"`
	SPANavigations int                      `json:"spaNavigations"`
	Delta          string                   `json:"delta"`
	NewSinceQuery  int64                    `json:"newSinceLastQuery"`
	Matched        int                      `json:"matched"`
	Older          int                      `json:"olderEpochs,omitempty"`
	Dropped        int64                    `json:"dropped,omitempty"`
	Messages       []session.ConsoleMessage `json:"messages"`
}

// consoleAnswer: the freshness header, then one line per (folded) message,
// each tagged when it is from an earlier epoch or HMR generation.
func consoleAnswer(r session.ConsoleReport) *answer {
	a := &answer{summary: fmt.Sprintf("%d console messages of %s, epoch %d", r.Matched, r.Page, r.Epoch)}
	cause := r.EpochCause
	if cause == "" {
		cause = "start"
	}
	a.lines = append(a.lines,
		line("Page", r.Page+" "+r.URL),
		line("Epoch", fmt.Sprintf("%d, began with a %s %s ago", r.Epoch, cause, ago(r.EpochAge))),
	)
	if r.HMRUpdates > 0 {
		a.lines = append(a.lines, line("HMR updates", fmt.Sprintf("%d this epoch, last %s ago", r.HMRUpdates, ago(r.LastHMRAge))))
	} else {
		a.lines = append(a.lines, line("HMR updates", "none this epoch"))
	}
	if r.SPANavigations > 0 {
		a.lines = append(a.lines, line("SPA navigations", fmt.Sprintf("%d this epoch, last to %s", r.SPANavigations, r.LastSPA)))
	}
	a.lines = append(a.lines, r.Delta)
	if r.Delta != session.DeltaFirstQuery {
		a.lines = append(a.lines, line("New since your last query", fmt.Sprintf("%d messages", r.NewSinceQuery)))
	}
	shown := fmt.Sprintf("%d lines for %d messages (identical neighbours folded)", len(r.Messages), r.Matched)
	if r.Older > 0 {
		shown += fmt.Sprintf("; %d more in earlier epochs (include_previous_epochs)", r.Older)
	}
	a.lines = append(a.lines, line("Shown", shown))
	if r.Dropped > 0 {
		a.lines = append(a.lines, line("Dropped", fmt.Sprintf("the %d oldest messages of this page (buffer full)", r.Dropped)))
	}
	body := make([]string, 0, len(r.Messages))
	for _, m := range r.Messages {
		body = append(body, messageLines(m, r))
	}
	size, cut := 0, 0
	for i := len(body) - 1; i >= 0; i-- {
		size += len(body[i]) + 1
		if size > maxConsoleText {
			cut = i + 1
			break
		}
	}
	if cut > 0 {
		a.lines = append(a.lines, fmt.Sprintf("(%d older lines cut to keep this answer under %d KB; narrow with limit, level or pattern)", cut, maxConsoleText>>10))
	}
	a.lines = append(a.lines, body[cut:]...)
	msgs := r.Messages
	if msgs == nil {
		msgs = []session.ConsoleMessage{}
	}
	a.data = consoleResult{Page: r.Page, URL: r.URL, Epoch: r.Epoch, EpochCause: r.EpochCause, EpochAgeMS: r.EpochAge.Milliseconds(),
		HMRUpdates: r.HMRUpdates, LastHMRAgeMS: r.LastHMRAge.Milliseconds(), SPANavigations: r.SPANavigations, Delta: r.Delta,
		NewSinceQuery: r.NewSinceQuery, Matched: r.Matched, Older: r.Older, Dropped: r.Dropped, Messages: msgs[cut:]}
	return a
}

// messageLines renders one message: time, level, source, text, location and
// tags, then its stack frames indented.
func messageLines(m session.ConsoleMessage, r session.ConsoleReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s %s", m.Time.Format("15:04:05.000"), m.Level, m.Source, m.Text)
	if loc := m.Location(); loc != "" {
		fmt.Fprintf(&b, " (%s)", loc)
	}
	if m.Count > 1 {
		fmt.Fprintf(&b, " (×%d)", m.Count)
	}
	if m.Epoch != r.Epoch {
		fmt.Fprintf(&b, " [epoch %d]", m.Epoch)
	} else if m.HMR < r.HMRUpdates {
		b.WriteString(" [previous HMR generation]")
	}
	for _, f := range m.Stack {
		b.WriteString("\n    " + f)
	}
	return b.String()
}

// ago renders a duration for a human: 850ms, 12s, 3m4s.
func ago(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

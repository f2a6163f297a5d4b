package tools

import (
	"context"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/chromekeeper/chromekeeper/session"
)

const (
	defaultTimeoutMS = 30000
	maxTimeoutMS     = 600000
	// maxResultBytes bounds an evaluation result in the answer.
	maxResultBytes = 20 << 10
)

var pageIDOption = mcp.WithString("page_id", mcp.Description("Default: current page"))

var timeoutOption = mcp.WithInteger("timeout_ms", mcp.Description("Default 30000"))

// loadOptions are the parameters and schema shared by the tools that load a document.
func loadOptions() []mcp.ToolOption {
	return []mcp.ToolOption{
		mcp.WithString("wait_until", mcp.Enum(session.WaitUntilValues...), mcp.Description("default load")),
		timeoutOption,
		pageIDOption,
		mcp.WithRawOutputSchema(outputSchema("url:string", "status:integer", "title:string", "page:string", "dialogs:array")),
		annotations(false),
	}
}

// loadArgs reads the arguments of loadOptions.
func loadArgs(a *args) (until session.WaitUntil, timeout time.Duration, pageID string) {
	until = session.WaitUntil(a.enum("wait_until", string(session.WaitLoad), session.WaitUntilValues))
	return until, a.timeout(), a.str("page_id", false)
}

// load runs one document load on a page within timeout and answers with the navigation.
func (t *toolset) load(ctx context.Context, opts session.CallOptions, pageID string, timeout time.Duration, summary string,
	load func(ctx context.Context, c *session.Call, p *session.Page) (*session.Navigation, error)) (*mcp.CallToolResult, error) {
	return t.onPage(ctx, opts, pageID, func(ctx context.Context, c *session.Call, p *session.Page) (*answer, error) {
		nav, err := withTimeout(ctx, timeout, func(ctx context.Context) (*session.Navigation, error) { return load(ctx, c, p) })
		if err != nil {
			return nil, err
		}
		return navigationAnswer(summary, p.ID, nav), nil
	})
}

func (t *toolset) navigate() server.ServerTool {
	tool := mcp.NewTool("browser_navigate", append([]mcp.ToolOption{
		mcp.WithDescription("Load a URL in the page and wait for it. Starts Chrome on first use."),
		mcp.WithString("url", mcp.Required(), mcp.Description("http(s), about:blank or data: URL")),
	}, loadOptions()...)...)
	return server.ServerTool{Tool: tool, Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := newArgs(req.Params.Arguments, "url", "wait_until", "timeout_ms", "page_id")
		rawURL := a.str("url", true)
		until, timeout, pageID := loadArgs(a)
		if err := a.problem(); err != nil {
			return toResult(nil, nil, err), nil
		}
		target, err := t.policy.navigationURL(rawURL)
		if err != nil {
			return toResult(nil, nil, err), nil
		}
		// Navigates: after a relaunch the page is not first restored to its old URL.
		opts := session.CallOptions{Navigates: true}
		return t.load(ctx, opts, pageID, timeout, "Navigation complete",
			func(ctx context.Context, c *session.Call, p *session.Page) (*session.Navigation, error) {
				c.MakeCurrent(p)
				return p.Navigate(ctx, target, until)
			})
	}}
}

func (t *toolset) reload() server.ServerTool {
	tool := mcp.NewTool("browser_reload", append([]mcp.ToolOption{
		mcp.WithDescription("Reload the page and wait for it."),
		mcp.WithBoolean("ignore_cache"),
	}, loadOptions()...)...)
	return server.ServerTool{Tool: tool, Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := newArgs(req.Params.Arguments, "ignore_cache", "wait_until", "timeout_ms", "page_id")
		ignoreCache := a.boolean("ignore_cache", false)
		until, timeout, pageID := loadArgs(a)
		if err := a.problem(); err != nil {
			return toResult(nil, nil, err), nil
		}
		return t.load(ctx, session.CallOptions{}, pageID, timeout, "Reloaded",
			func(ctx context.Context, _ *session.Call, p *session.Page) (*session.Navigation, error) {
				return p.Reload(ctx, ignoreCache, until)
			})
	}}
}

// navigationResult is the structured answer of navigate, reload and pages new.
type navigationResult struct {
	URL     string           `json:"url"`
	Status  int              `json:"status"`
	Title   string           `json:"title"`
	Page    string           `json:"page"`
	Dialogs []session.Dialog `json:"dialogs,omitempty"`
}

func navigationAnswer(summary, pageID string, nav *session.Navigation) *answer {
	status := fmt.Sprint(nav.Status)
	if nav.Status == 0 {
		status = "none (no HTTP response)"
	}
	lines := []string{line("URL", nav.URL), line("Status", status), line("Title", nav.Title), line("Page", pageID)}
	lines = append(lines, dialogLines(nav.Dialogs)...)
	return &answer{
		summary: summary,
		lines:   lines,
		data:    navigationResult{URL: nav.URL, Status: nav.Status, Title: nav.Title, Page: pageID, Dialogs: nav.Dialogs},
	}
}

func dialogLines(dialogs []session.Dialog) []string {
	var lines []string
	for _, d := range dialogs {
		lines = append(lines, fmt.Sprintf("Dialog: %s %q (accepted)", d.Type, d.Message))
	}
	return lines
}

func (t *toolset) screenshot() server.ServerTool {
	tool := mcp.NewTool("browser_screenshot",
		mcp.WithDescription("Capture the viewport, the full page or one element."),
		mcp.WithBoolean("full_page"),
		mcp.WithString("selector", mcp.Description("CSS selector of one element")),
		mcp.WithString("format", mcp.Enum("png", "jpeg", "webp")),
		mcp.WithInteger("quality", mcp.Description("jpeg/webp, default 80")),
		mcp.WithInteger("max_width", mcp.Description("Default 1280")),
		mcp.WithString("save_to", mcp.Description("File under the output dir, instead of inline")),
		pageIDOption,
		mcp.WithRawOutputSchema(outputSchema("page:string", "format:string", "width:integer", "height:integer", "bytes:integer", "saved:string", "clipped:boolean")),
		annotations(true),
	)
	return server.ServerTool{Tool: tool, Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := newArgs(req.Params.Arguments, "full_page", "selector", "format", "quality", "max_width", "save_to", "page_id")
		opts := session.ScreenshotOptions{
			FullPage: a.boolean("full_page", false),
			Selector: a.str("selector", false),
			Quality:  a.integer("quality", 80, 0, 100),
			MaxWidth: a.integer("max_width", 1280, 16, 8000),
		}
		saveTo := a.str("save_to", false)
		opts.Format = a.enum("format", formatFromName(saveTo), []string{"png", "jpeg", "webp"})
		a.exclusive("full_page", "selector")
		pageID := a.str("page_id", false)
		if err := a.problem(); err != nil {
			return toResult(nil, nil, err), nil
		}
		var file *outputFile
		if saveTo != "" {
			f, err := t.policy.outputFile(saveTo)
			if err != nil {
				return toResult(nil, nil, err), nil
			}
			file = &f
		}
		return t.onPage(ctx, session.CallOptions{}, pageID, func(ctx context.Context, c *session.Call, p *session.Page) (*answer, error) {
			shot, err := withTimeout(ctx, defaultTimeoutMS*time.Millisecond, func(ctx context.Context) (*session.Screenshot, error) {
				return p.Screenshot(ctx, opts)
			})
			if err != nil {
				return nil, err
			}
			return screenshotAnswer(p.ID, shot, file)
		})
	}}
}

type screenshotResult struct {
	Page    string `json:"page"`
	Format  string `json:"format"`
	Width   int    `json:"width"`
	Height  int    `json:"height"`
	Bytes   int    `json:"bytes"`
	Saved   string `json:"saved,omitempty"`
	Clipped bool   `json:"clipped,omitempty"`
}

func screenshotAnswer(pageID string, shot *session.Screenshot, file *outputFile) (*answer, error) {
	res := screenshotResult{Page: pageID, Format: shot.Format, Width: shot.Width, Height: shot.Height,
		Bytes: len(shot.Data), Clipped: shot.Clipped}
	a := &answer{summary: "Screenshot captured", data: res, lines: []string{
		line("Page", pageID),
		fmt.Sprintf("Size: %dx%d %s, %d bytes", shot.Width, shot.Height, shot.Format, len(shot.Data)),
	}}
	if shot.Scale < 1 {
		a.lines = append(a.lines, fmt.Sprintf("Scale: %.3f (downscaled to max_width)", shot.Scale))
	}
	if shot.Clipped {
		a.lines = append(a.lines, fmt.Sprintf("Clipped: cut at %d px high", session.MaxScreenshotHeight))
	}
	if file != nil {
		if err := file.write(shot.Data); err != nil {
			return nil, err
		}
		res.Saved = file.Path()
		a.data = res
		a.summary = "Screenshot saved"
		a.lines = append(a.lines, line("Saved", res.Saved))
		return a, nil
	}
	a.extra = []mcp.Content{mcp.NewImageContent(base64.StdEncoding.EncodeToString(shot.Data), "image/"+shot.Format)}
	return a, nil
}

// formatFromName infers an image format from a file name's extension.
func formatFromName(name string) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".jpg", ".jpeg":
		return "jpeg"
	case ".webp":
		return "webp"
	default:
		return "png"
	}
}

func (t *toolset) eval() server.ServerTool {
	tool := mcp.NewTool("browser_eval",
		mcp.WithDescription("Evaluate JavaScript (top-level await allowed); returns the result as JSON."),
		mcp.WithString("expression", mcp.Required()),
		mcp.WithBoolean("await_promise", mcp.Description("Default true")),
		mcp.WithString("target", mcp.Description("page (default) or a worker id: sw1, w1")),
		timeoutOption,
		pageIDOption,
		mcp.WithRawOutputSchema(outputSchema("type:string", "result:any", "truncated:boolean", "size:integer", "dialogs:array")),
		annotations(false),
	)
	return server.ServerTool{Tool: tool, Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := newArgs(req.Params.Arguments, "expression", "await_promise", "target", "timeout_ms", "page_id")
		expression := a.str("expression", true)
		awaitPromise := a.boolean("await_promise", true)
		target := a.str("target", false)
		timeout := a.timeout()
		pageID := a.str("page_id", false)
		if target != "" && target != "page" && pageID != "" {
			a.fail("target and page_id cannot be combined: a worker belongs to no one page")
		}
		if err := a.problem(); err != nil {
			return toResult(nil, nil, err), nil
		}
		return t.run(ctx, session.CallOptions{}, func(ctx context.Context, c *session.Call) (*answer, error) {
			var in evaluator
			if target != "" && target != "page" {
				w, err := c.Worker(ctx, target)
				if err != nil {
					return nil, err
				}
				in = w
			} else {
				p, err := c.Page(ctx, pageID)
				if err != nil {
					return nil, err
				}
				in = p
			}
			res, err := in.Eval(ctx, expression, awaitPromise, timeout)
			if err != nil {
				return nil, err
			}
			return evalAnswer(res)
		})
	}}
}

// evaluator is where browser_eval runs: a page or a worker.
type evaluator interface {
	Eval(ctx context.Context, expression string, awaitPromise bool, timeout time.Duration) (*session.EvalResult, error)
}

type evalResult struct {
	Type      string           `json:"type"`
	Result    any              `json:"result"`
	Truncated bool             `json:"truncated,omitempty"`
	Size      int              `json:"size,omitempty"`
	Dialogs   []session.Dialog `json:"dialogs,omitempty"`
}

// evalAnswer renders a result as JSON, truncated past maxResultBytes with the
// full size stated. A described value (undefined, NaN, a node) is shown bare.
func evalAnswer(res *session.EvalResult) (*answer, error) {
	text := "undefined"
	if res.Type != "undefined" {
		encoded, err := session.EncodeJSON(res.Value)
		if err != nil {
			return nil, fmt.Errorf("encode result: %w", err)
		}
		text = string(encoded)
		if s, ok := res.Value.(string); ok && res.Type != "string" {
			text = s
		}
	}
	data := evalResult{Type: res.Type, Result: res.Value, Dialogs: res.Dialogs}
	if res.Type == "undefined" {
		data.Result = nil
	}
	if len(text) > maxResultBytes {
		data.Truncated, data.Size = true, len(text)
		text = strings.ToValidUTF8(text[:maxResultBytes], "")
		data.Result = text
		text += fmt.Sprintf("… [truncated: the result is %d bytes; narrow the expression]", data.Size)
	}
	lines := []string{line("Type", res.Type), line("Result", text)}
	return &answer{summary: "Evaluated", lines: append(lines, dialogLines(res.Dialogs)...), data: data}, nil
}

// timeout reads timeout_ms.
func (a *args) timeout() time.Duration {
	return time.Duration(a.integer("timeout_ms", defaultTimeoutMS, 1, maxTimeoutMS)) * time.Millisecond
}

// withTimeout runs f under a deadline and names the deadline in a TIMEOUT.
func withTimeout[T any](ctx context.Context, timeout time.Duration, f func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, err := f(ctx)
	if err != nil {
		if e := session.AsError(err); e.Code == session.CodeTimeout {
			e.Message += fmt.Sprintf(" (timeout_ms %d)", timeout.Milliseconds())
			return v, e
		}
	}
	return v, err
}

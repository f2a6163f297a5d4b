package tools

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/chromekeeper/chromekeeper/session"
)

// toolset holds what every tool handler needs.
type toolset struct {
	sessions Sessions
	policy   Policy
}

// All returns every tool with its handler, in the order tools/list shows them.
func All(sessions Sessions, policy Policy) []server.ServerTool {
	t := &toolset{sessions: sessions, policy: policy}
	return []server.ServerTool{
		t.navigate(),
		t.reload(),
		t.screenshot(),
		t.eval(),
		t.pages(),
		t.session(),
		t.setOffline(),
		t.serviceWorkers(),
		t.networkSources(),
		t.consoleLogs(),
		t.watchNetwork(),
		t.getNetworkRequests(),
		t.readEvents(),
		t.clearEvents(),
		t.responseBody(),
		t.eventFilters(),
	}
}

// run resolves the conversation's session and runs op as one call on it.
func (t *toolset) run(ctx context.Context, opts session.CallOptions, op func(context.Context, *session.Call) (*answer, error)) (*mcp.CallToolResult, error) {
	s, err := t.sessions(ctx)
	if err != nil {
		return toResult(nil, nil, err), nil
	}
	var a *answer
	notices, err := s.Do(ctx, opts, func(ctx context.Context, c *session.Call) error {
		var err error
		a, err = op(ctx, c)
		return err
	})
	return toResult(notices, a, err), nil
}

// onPage runs op as one call on the page named by pageID (default: the current page).
func (t *toolset) onPage(ctx context.Context, opts session.CallOptions, pageID string,
	op func(context.Context, *session.Call, *session.Page) (*answer, error)) (*mcp.CallToolResult, error) {
	return t.run(ctx, opts, func(ctx context.Context, c *session.Call) (*answer, error) {
		p, err := c.Page(ctx, pageID)
		if err != nil {
			return nil, err
		}
		return op(ctx, c, p)
	})
}

// annotations marks a tool read-only, or else leaves the hints unset: every
// byte of tools/list is paid for by the model on every turn.
func annotations(readOnly bool) mcp.ToolOption {
	if readOnly {
		return mcp.WithToolAnnotation(mcp.ToolAnnotation{ReadOnlyHint: mcp.ToBoolPtr(true)})
	}
	return mcp.WithToolAnnotation(mcp.ToolAnnotation{})
}

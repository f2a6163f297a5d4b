package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/chromekeeper/chromekeeper/session"
)

// answer is a tool's successful outcome: a summary for the "SUCCESS:" line,
// "Key: value" lines for the model, the same facts as structured data, and
// any further content (an image).
type answer struct {
	summary string
	lines   []string
	data    any
	extra   []mcp.Content
}

// line formats one "Key: value" line.
func line(key string, value any) string { return fmt.Sprintf("%s: %v", key, value) }

// errorData is the structured form of a failed call.
type errorData struct {
	Code    session.Code `json:"code"`
	Message string       `json:"message"`
	Details []string     `json:"details,omitempty"`
}

// toResult renders a tool's outcome: NOTICE lines first, then SUCCESS or ERROR.
// Every failure becomes a tool result with isError, never a protocol error.
func toResult(notices []string, a *answer, err error) *mcp.CallToolResult {
	var text strings.Builder
	for _, n := range notices {
		text.WriteString(n + "\n")
	}
	var e *session.Error
	if err != nil {
		e = session.AsError(err)
		fmt.Fprintf(&text, "ERROR: %s: %s", e.Code, e.Message)
		for _, d := range e.Details {
			text.WriteString("\n" + d)
		}
	} else {
		text.WriteString("SUCCESS: " + a.summary)
		for _, l := range a.lines {
			text.WriteString("\n" + l)
		}
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(text.String())}, IsError: err != nil}
	if err == nil {
		res.Content = append(res.Content, a.extra...)
	}
	switch {
	case err == nil && len(notices) == 0 && a.data != nil:
		// The common case: encode the structured answer once, not via a map.
		if raw, encErr := session.EncodeJSON(a.data); encErr == nil {
			res.StructuredContent, res.RawStructuredContent = json.RawMessage(raw), raw
			return res
		}
		fallthrough
	default:
		structured := map[string]any{}
		if e != nil {
			structured["error"] = errorData{Code: e.Code, Message: e.Message, Details: e.Details}
		} else if a.data != nil {
			structured = structOf(a.data)
		}
		if len(notices) > 0 {
			structured["notices"] = notices
		}
		res.StructuredContent = structured
	}
	return res
}

// structOf turns a result struct into the map that structuredContent carries.
func structOf(v any) map[string]any {
	b, err := session.EncodeJSON(v)
	m := map[string]any{}
	if err == nil {
		_ = json.Unmarshal(b, &m)
	}
	return m
}

// outputSchema builds a compact output schema from "name:type" pairs (type
// "any" leaves the field unconstrained). No field is required, so an error
// answer ({"error": …, "notices": […]}) fits it too.
func outputSchema(fields ...string) json.RawMessage {
	props := map[string]map[string]string{}
	for _, f := range fields {
		name, typ, _ := strings.Cut(f, ":")
		props[name] = map[string]string{"type": typ}
	}
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i, name := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		if typ := props[name]["type"]; typ == "any" {
			fmt.Fprintf(&b, `%q:{}`, name)
		} else {
			fmt.Fprintf(&b, `%q:{"type":%q}`, name, typ)
		}
	}
	b.WriteString("}}")
	return json.RawMessage(b.String())
}

// Sessions finds the session of the conversation a call belongs to.
type Sessions func(ctx context.Context) (*session.Session, error)

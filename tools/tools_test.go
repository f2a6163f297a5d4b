package tools

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromekeeper/chromekeeper/session"
)

var update = flag.Bool("update", false, "rewrite testdata/tools.golden.json")

// TestToolSchemas snapshots every tool definition: a change to a name,
// parameter, description or schema shows up in review as a golden diff.
func TestToolSchemas(t *testing.T) {
	all := All(func(context.Context) (*session.Session, error) { return nil, nil }, Policy{})
	var tools []json.RawMessage
	for _, st := range all {
		b, err := json.Marshal(st.Tool)
		if err != nil {
			t.Fatalf("%s: %v", st.Tool.Name, err)
		}
		tools = append(tools, b)
	}
	got, _ := json.MarshalIndent(tools, "", "  ")
	golden := filepath.Join("testdata", "tools.golden.json")
	if *update {
		if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./tools -update)", err)
	}
	if strings.TrimSpace(string(got)) != strings.TrimSpace(string(want)) {
		t.Errorf("tool definitions changed; review and run go test ./tools -update\ngot:\n%s", got)
	}
}

// TestResultsMatchOutputSchemas checks that every field a result struct
// emits is declared in its tool's output schema.
func TestResultsMatchOutputSchemas(t *testing.T) {
	all := All(func(context.Context) (*session.Session, error) { return nil, nil }, Policy{})
	declared := map[string]map[string]any{}
	for _, st := range all {
		var schema struct {
			Properties map[string]any `json:"properties"`
		}
		if err := json.Unmarshal(st.Tool.RawOutputSchema, &schema); err != nil {
			t.Fatalf("%s: output schema: %v", st.Tool.Name, err)
		}
		declared[st.Tool.Name] = schema.Properties
	}
	full := []struct {
		tool string
		v    any
	}{
		{"browser_navigate", navigationResult{Dialogs: []session.Dialog{{}}}},
		{"browser_reload", navigationResult{Dialogs: []session.Dialog{{}}}},
		{"browser_pages", navigationResult{}},
		{"browser_screenshot", screenshotResult{Saved: "x", Clipped: true}},
		{"browser_eval", evalResult{Truncated: true, Size: 1, Dialogs: []session.Dialog{{}}}},
		{"browser_session", sessionResult{PID: 1, Version: "v", UptimeMS: 1, IdleTimeLeft: 1, ProfileDir: "d", CurrentPage: "p1"}},
		{"browser_set_offline", setOfflineResult{Covers: []string{"p1"}}},
	}
	for _, tc := range full {
		for field := range structOf(tc.v) {
			if _, ok := declared[tc.tool][field]; !ok {
				t.Errorf("%s emits %q, which its output schema does not declare", tc.tool, field)
			}
		}
	}
}

func TestArgs(t *testing.T) {
	cases := []struct {
		name    string
		raw     any
		read    func(a *args) any
		want    any
		problem string
	}{
		{"string", map[string]any{"url": "x"}, func(a *args) any { return a.str("url", true) }, "x", ""},
		{"missing required", map[string]any{}, func(a *args) any { return a.str("url", true) }, "", "url is required"},
		{"empty required", map[string]any{"url": "  "}, func(a *args) any { return a.str("url", true) }, "  ", "url must not be empty"},
		{"wrong type", map[string]any{"url": 5.0}, func(a *args) any { return a.str("url", true) }, "", "url must be a string"},
		{"integer", map[string]any{"timeout_ms": 500.0}, func(a *args) any { return a.integer("timeout_ms", 1, 1, 1000) }, 500, ""},
		{"integer as string", map[string]any{"timeout_ms": "500"}, func(a *args) any { return a.integer("timeout_ms", 1, 1, 1000) }, 500, ""},
		{"fraction", map[string]any{"timeout_ms": 1.5}, func(a *args) any { return a.integer("timeout_ms", 1, 1, 1000) }, 1, "timeout_ms must be an integer from 1 to 1000"},
		{"out of range", map[string]any{"timeout_ms": 0.0}, func(a *args) any { return a.integer("timeout_ms", 1, 1, 1000) }, 1, "timeout_ms must be an integer from 1 to 1000"},
		{"integer default", nil, func(a *args) any { return a.integer("timeout_ms", 7, 1, 1000) }, 7, ""},
		{"bool", map[string]any{"full_page": true}, func(a *args) any { return a.boolean("full_page", false) }, true, ""},
		{"bool as string", map[string]any{"full_page": "true"}, func(a *args) any { return a.boolean("full_page", false) }, true, ""},
		{"bad bool", map[string]any{"full_page": "maybe"}, func(a *args) any { return a.boolean("full_page", false) }, false, "full_page must be true or false"},
		{"enum case-insensitive", map[string]any{"format": "PNG"}, func(a *args) any { return a.enum("format", "png", []string{"png", "jpeg"}) }, "png", ""},
		{"bad enum", map[string]any{"format": "gif"}, func(a *args) any { return a.enum("format", "png", []string{"png", "jpeg"}) }, "png", "format must be one of png, jpeg"},
		{"not an object", []any{1}, func(a *args) any { return a.str("url", false) }, "", "arguments must be an object"},
	}
	for _, tc := range cases {
		a := newArgs(tc.raw, "url", "timeout_ms", "full_page", "format")
		got := tc.read(a)
		if got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
		problem := ""
		if err := a.problem(); err != nil {
			problem = err.Error()
		}
		if tc.problem == "" && problem != "" || !strings.Contains(problem, tc.problem) {
			t.Errorf("%s: problem %q, want %q", tc.name, problem, tc.problem)
		}
	}
	a := newArgs(map[string]any{"url": "x", "selector": "y"}, "url", "page_id")
	if err := a.problem(); err == nil || !strings.Contains(err.Error(), "unknown argument selector; this tool takes: url, page_id") {
		t.Errorf("unknown argument: %v", err)
	}
}

func TestNavigationURL(t *testing.T) {
	cases := []struct {
		in, want string
		code     session.Code
	}{
		{"https://example.com/a?b#c", "https://example.com/a?b#c", ""},
		{"localhost:5173/app", "http://localhost:5173/app", ""},
		{"127.0.0.1:8080", "http://127.0.0.1:8080", ""},
		{"example.com", "https://example.com", ""},
		{"about:blank", "about:blank", ""},
		{"data:text/html,<p>hi</p>", "data:text/html,<p>hi</p>", ""},
		{"", "", session.CodeInvalidInput},
		{"not a url", "", session.CodeInvalidInput},
		{"http://", "", session.CodeInvalidInput},
		{"file:///etc/passwd", "", session.CodeSecurityBlocked},
		{"chrome://settings", "", session.CodeSecurityBlocked},
		{"devtools://devtools/bundled/inspector.html", "", session.CodeSecurityBlocked},
		{"javascript:alert(1)", "", session.CodeSecurityBlocked},
		{"JavaScript:alert(1)", "", session.CodeSecurityBlocked},
		{"about:settings", "", session.CodeSecurityBlocked},
		{"view-source:https://example.com", "", session.CodeSecurityBlocked},
	}
	for _, tc := range cases {
		got, err := Policy{}.navigationURL(tc.in)
		code := session.Code("")
		if err != nil {
			code = session.AsError(err).Code
		}
		if got != tc.want || code != tc.code {
			t.Errorf("navigationURL(%q) = %q, %v; want %q, %q", tc.in, got, err, tc.want, tc.code)
		}
	}
	if got, err := (Policy{AllowFileURLs: true}).navigationURL("file:///etc/hosts"); err != nil || got != "file:///etc/hosts" {
		t.Errorf("with AllowFileURLs: %q, %v", got, err)
	}
}

func TestOutputFileStaysInsideTheOutputDir(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	p := Policy{OutputDir: root}
	for _, name := range []string{"a.png", "deep/er/b.png", filepath.Join(root, "c.png")} {
		f, err := p.outputFile(name)
		if err != nil {
			t.Fatalf("outputFile(%q): %v", name, err)
		}
		if err := f.write([]byte("x")); err != nil || !strings.HasPrefix(f.Path(), root) {
			t.Errorf("write %q → %s: %v", name, f.Path(), err)
		}
	}
	for _, name := range []string{"../x.png", "/etc/x.png", "a/../../x.png", "."} {
		if _, err := p.outputFile(name); err == nil || session.AsError(err).Code != session.CodeSecurityBlocked {
			t.Errorf("outputFile(%q) error = %v, want SECURITY_BLOCKED", name, err)
		}
	}
	// Through a symbolic link: refused, and nothing is created outside.
	for _, name := range []string{"out/x.png", "out/new/dir/x.png"} {
		f, err := p.outputFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.write([]byte("x")); err == nil || session.AsError(err).Code != session.CodeSecurityBlocked {
			t.Errorf("write through a symlink (%s): %v, want SECURITY_BLOCKED", name, err)
		}
	}
	if left, _ := os.ReadDir(outside); len(left) != 0 {
		t.Errorf("writing through a symlink created %v outside the output dir", left)
	}
	if err := os.Symlink(filepath.Join(outside, "planted.png"), filepath.Join(root, "planted.png")); err != nil {
		t.Fatal(err)
	}
	f, _ := p.outputFile("planted.png")
	if err := f.write([]byte("x")); err == nil || session.AsError(err).Code != session.CodeSecurityBlocked {
		t.Errorf("writing through a planted symlink: %v, want SECURITY_BLOCKED", err)
	}
}

func TestErrorAnswer(t *testing.T) {
	res := toResult([]string{"NOTICE: relaunched."}, nil, &session.Error{Code: session.CodeNavigationFailed, Message: "net::ERR_X", Details: []string{"URL: u"}})
	text := res.Content[0]
	b, _ := json.Marshal(text)
	if !res.IsError || !strings.Contains(string(b), `NOTICE: relaunched.\nERROR: NAVIGATION_FAILED: net::ERR_X\nURL: u`) {
		t.Errorf("error answer: %s", b)
	}
	sc := res.StructuredContent.(map[string]any)
	if sc["error"].(errorData).Code != session.CodeNavigationFailed || len(sc["notices"].([]string)) != 1 {
		t.Errorf("structured error: %v", sc)
	}
}

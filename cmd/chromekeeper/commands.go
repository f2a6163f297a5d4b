package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/chromekeeper/chromekeeper/check"
	"github.com/chromekeeper/chromekeeper/session"
)

// exitError ends the process with a status and, if set, a message on stderr.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

// listFlag is a repeatable flag whose values may also be comma-separated.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			*l = append(*l, item)
		}
	}
	return nil
}

// runCheck is `chromekeeper check URL`: exit 0 when every check passed, 1
// when one failed, 2 when the run itself failed.
func runCheck(ctx context.Context, args []string, sessions *session.Manager, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("chromekeeper check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var opts check.Options
	var skip, offlineURLs listFlag
	format := fs.String("format", "table", "report format: table, json or junit")
	reportFile := fs.String("report", "", "write the report in --format to this file (stdout gets the table)")
	fs.DurationVar(&opts.Timeout, "timeout", 30*time.Second, "how long each waiting step may take")
	fs.StringVar(&opts.WaitFor, "wait-for", "", "a JavaScript expression that must become true before the checks")
	fs.Var(&skip, "skip", "checks to skip, repeatable or comma-separated: "+strings.Join(check.Names, ", "))
	fs.Var(&offlineURLs, "offline-url", "another URL that must load offline (repeatable)")
	fs.BoolVar(&opts.AllowConsoleErrors, "allow-console-errors", false, "report console errors without failing")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: chromekeeper check [flags] URL\n\nLoads URL in a fresh headless Chrome and runs the PWA checks: %s.\nExit 0 all passed, 1 a check failed, 2 the run failed.\n\n", strings.Join(check.Names, ", "))
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return exitError{2, err}
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitError{2, errors.New("check takes exactly one URL")}
	}
	for _, name := range skip {
		if !slices.Contains(check.Names, name) {
			return exitError{2, fmt.Errorf("--skip %q: checks are %s", name, strings.Join(check.Names, ", "))}
		}
	}
	write := map[string]func(io.Writer, *check.Report) error{"table": check.WriteTable, "json": check.WriteJSON, "junit": check.WriteJUnit}[*format]
	if write == nil {
		return exitError{2, fmt.Errorf("--format must be table, json or junit, got %q", *format)}
	}
	opts.URL, opts.Skip, opts.OfflineURLs = fs.Arg(0), skip, offlineURLs

	report, err := check.Run(ctx, sessions.Session("check"), opts)
	if err != nil {
		return exitError{2, err}
	}
	out := stdout
	if *reportFile != "" {
		f, err := os.Create(*reportFile)
		if err != nil {
			return exitError{2, fmt.Errorf("--report: %w", err)}
		}
		defer f.Close()
		out = f
		if err := check.WriteTable(stdout, report); err != nil {
			return exitError{2, err}
		}
	}
	if err := write(out, report); err != nil {
		return exitError{2, fmt.Errorf("write report: %w", err)}
	}
	if !report.Passed {
		return exitError{code: 1}
	}
	return nil
}

// runCall is `chromekeeper call TOOL key=value … [-- TOOL …]`: the tools run in
// one session, in order; each answer is printed. Exit 1 if a tool answered
// an error, 2 if the run failed.
func runCall(ctx context.Context, args []string, srv *server.MCPServer, stdout io.Writer) error {
	asJSON := false
	if len(args) > 0 && (args[0] == "--json" || args[0] == "-json") {
		asJSON, args = true, args[1:]
	}
	calls, err := parseCalls(args)
	if err != nil {
		return exitError{2, err}
	}
	c, err := client.NewInProcessClient(srv)
	if err != nil {
		return exitError{2, err}
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		return exitError{2, err}
	}
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "chromekeeper call", Version: version}
	if _, err := c.Initialize(ctx, init); err != nil {
		return exitError{2, fmt.Errorf("initialize: %w", err)}
	}
	failed := false
	for i, call := range calls {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = call.tool, call.args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			return exitError{2, fmt.Errorf("%s: %w", call.tool, err)}
		}
		failed = failed || res.IsError
		if asJSON {
			b, _ := json.Marshal(map[string]any{"tool": call.tool, "isError": res.IsError, "structuredContent": res.StructuredContent})
			fmt.Fprintln(stdout, string(b))
			continue
		}
		if len(calls) > 1 {
			fmt.Fprintf(stdout, "== %s\n", call.tool)
		}
		for _, content := range res.Content {
			switch content := content.(type) {
			case mcp.TextContent:
				fmt.Fprintln(stdout, content.Text)
			case mcp.ImageContent:
				fmt.Fprintf(stdout, "[image %s, %d base64 bytes; use save_to to write it]\n", content.MIMEType, len(content.Data))
			}
		}
		if i < len(calls)-1 {
			fmt.Fprintln(stdout)
		}
	}
	if failed {
		return exitError{code: 1}
	}
	return nil
}

type toolCall struct {
	tool string
	args map[string]any
}

// parseCalls reads TOOL key=value … groups separated by "--". A value that
// parses as JSON is taken as JSON (true, 5000, ["a"]); anything else is a string.
func parseCalls(args []string) ([]toolCall, error) {
	var calls []toolCall
	for _, group := range splitOn(args, "--") {
		if len(group) == 0 {
			continue
		}
		call := toolCall{tool: group[0], args: map[string]any{}}
		for _, kv := range group[1:] {
			key, value, ok := strings.Cut(kv, "=")
			if !ok || key == "" {
				return nil, fmt.Errorf("%s: argument %q is not key=value", call.tool, kv)
			}
			var parsed any
			if err := json.Unmarshal([]byte(value), &parsed); err == nil {
				call.args[key] = parsed
			} else {
				call.args[key] = value
			}
		}
		calls = append(calls, call)
	}
	if len(calls) == 0 {
		return nil, errors.New("call needs a tool: chromekeeper call TOOL [key=value …] [-- TOOL …]")
	}
	return calls, nil
}

func splitOn(args []string, sep string) [][]string {
	groups := [][]string{{}}
	for _, a := range args {
		if a == sep {
			groups = append(groups, []string{})
			continue
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], a)
	}
	return groups
}

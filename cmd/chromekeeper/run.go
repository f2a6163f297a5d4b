package main

import (
	"context"
	"fmt"
	"io"
	"log"

	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/chromekeeper/chromekeeper/browser"
	"github.com/chromekeeper/chromekeeper/session"
	"github.com/chromekeeper/chromekeeper/tools"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// stdioConversation is the one conversation of a stdio server.
const stdioConversation = "stdio"

const instructions = "Real Chrome, no session management: the first call starts it, later calls reuse it, " +
	"it closes after idling and heals itself after a crash (answers then begin with NOTICE:). " +
	"Tools act on the current page unless page_id is given."

// run serves MCP on stdin/stdout (until stdin closes) or over HTTP, until ctx
// ends, then closes every browser it started.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cfg, err := parseConfig(args, stderr)
	if err != nil {
		return err
	}
	if cfg.version {
		fmt.Fprintln(stdout, "chromekeeper", version)
		return nil
	}
	if len(cfg.command) > 0 && cfg.logLevel == "info" {
		cfg.logLevel = "warn" // a command's output is its answers
	}
	logger, err := newLogger(cfg.logLevel, stderr)
	if err != nil {
		return usageError{err}
	}
	defer func() { _ = logger.Sync() }()

	hmr, err := session.CompileHMRPatterns(cfg.hmrPatterns)
	if err != nil {
		return usageError{err}
	}
	var starter browser.Starter = &browser.Launcher{ChromePath: cfg.chromePath, Headed: cfg.headed, Log: logger}
	if cfg.cdpURL != "" {
		starter = &browser.Attacher{URL: cfg.cdpURL, AllowRemote: cfg.allowRemote, Log: logger}
	}
	subscriptions := tools.NewSubscriptions()
	maxBrowsers := 0
	if cfg.transport == "http" {
		maxBrowsers = cfg.maxSessions
	}
	sessions := session.NewManager(session.Config{
		Starter:      starter,
		IdleTimeout:  cfg.idleTimeout,
		HMRPatterns:  hmr,
		BufferSize:   cfg.bufferSize,
		BufferTTL:    cfg.bufferTTL,
		NoRedact:     cfg.noRedact,
		OnPageEvents: subscriptions.PageEvents,
		MaxBrowsers:  maxBrowsers,
		Log:          logger,
	})
	defer browser.StopGuard()
	defer sessions.EndAll()

	if len(cfg.command) > 0 && cfg.command[0] == "check" {
		return runCheck(ctx, cfg.command[1:], sessions, stdout, stderr) // no MCP server needed
	}
	m := newMetrics(sessions)
	policy := tools.Policy{AllowFileURLs: cfg.allowFileURLs, OutputDir: cfg.outputDir}
	srv := newServer(sessions, subscriptions, m, policy, cfg.transport == "http")
	switch {
	case len(cfg.command) > 0 && cfg.command[0] == "call":
		return runCall(ctx, cfg.command[1:], srv, stdout)
	case cfg.transport == "http":
		return serveHTTP(ctx, cfg, srv, sessions, m, logger)
	}
	stdio := server.NewStdioServer(srv)
	stdio.SetErrorLogger(log.New(&zapWriter{logger}, "", 0))
	logger.Info("serving MCP on stdio", zap.String("version", version), zap.Duration("idleTimeout", cfg.idleTimeout))
	if err := stdio.Listen(ctx, stdin, stdout); err != nil && ctx.Err() == nil {
		return fmt.Errorf("serve stdio: %w", err)
	}
	logger.Info("shutting down")
	return nil
}

// newServer builds the MCP server. A conversation is an MCP session: over
// stdio there is one ("stdio"); over HTTP each Mcp-Session-Id is one, and
// its end (DELETE, the transport's idle expiry) closes its browser at once.
func newServer(sessions *session.Manager, subscriptions *tools.Subscriptions, m *metrics, policy tools.Policy, http bool) *server.MCPServer {
	hooks := &server.Hooks{}
	subscriptions.Hooks(hooks)
	if http {
		hooks.AddOnUnregisterSession(func(_ context.Context, cs server.ClientSession) {
			go sessions.End(cs.SessionID())
		})
	}
	srv := server.NewMCPServer("chromekeeper", version,
		server.WithToolCapabilities(false),
		server.WithResourceCapabilities(true, false),
		server.WithHooks(hooks),
		server.WithToolHandlerMiddleware(m.middleware),
		server.WithRecovery(),
		server.WithInstructions(instructions),
	)
	subscriptions.Attach(srv)
	conversation := func(ctx context.Context) (*session.Session, error) {
		cs := server.ClientSessionFromContext(ctx)
		switch {
		case !http:
			return sessions.Session(stdioConversation), nil
		case cs == nil || cs.SessionID() == "":
			return nil, session.Errorf(session.CodeInvalidInput, "no MCP session: initialize first and send its Mcp-Session-Id")
		default:
			return sessions.Session(cs.SessionID()), nil
		}
	}
	srv.AddTools(tools.All(conversation, policy)...)
	srv.AddResourceTemplates(tools.Resources(conversation, version)...)
	return srv
}

// newLogger logs to stderr only: stdout carries the MCP stream.
func newLogger(level string, stderr io.Writer) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	enc := zap.NewDevelopmentEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.AddSync(stderr), lvl)
	return zap.New(core), nil
}

// zapWriter adapts mcp-go's *log.Logger output to zap.
type zapWriter struct{ log *zap.Logger }

func (w *zapWriter) Write(p []byte) (int, error) {
	w.log.Warn(string(p))
	return len(p), nil
}

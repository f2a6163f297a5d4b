package main

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"

	"github.com/chromekeeper/chromekeeper/browser"
	"github.com/chromekeeper/chromekeeper/session"
)

const (
	// mcpPath is where MCP streamable HTTP is served.
	mcpPath = "/mcp"
	// transportIdleTTL ends an MCP session (and its Chrome) that sent no
	// request for this long without a DELETE.
	transportIdleTTL = time.Hour
	// shutdownGrace is how long open requests get before the server closes them.
	shutdownGrace = time.Second
)

// sessionVersions are the protocol versions served over HTTP: those with
// sessions. 2026-07-28 dropped them, and a conversation without an identity
// would get a new Chrome per request; clients on it negotiate down.
var sessionVersions = mcp.LegacyProtocolVersions()

// serveHTTP serves MCP streamable HTTP, /healthz and /metrics on cfg.listen
// until ctx ends, then shuts down and closes every browser.
func serveHTTP(ctx context.Context, cfg *config, srv *server.MCPServer, sessions *session.Manager, m *metrics, logger *zap.Logger) error {
	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.listen, err)
	}
	streamable := server.NewStreamableHTTPServer(srv,
		server.WithEndpointPath(mcpPath),
		server.WithStateful(true), // session ids are random UUIDs, validated on every request
		server.WithSessionIdleTTL(transportIdleTTL),
		server.WithStreamableHTTPProtocolVersions(sessionVersions...),
		server.WithStreamableHTTPLogger(slog.New(slog.NewTextHandler(zap.NewStdLog(logger).Writer(), &slog.HandlerOptions{Level: slog.LevelWarn}))),
	)
	g := guard{token: cfg.authToken, loopback: isLoopbackListen(cfg.listen)}
	mux := http.NewServeMux()
	mux.Handle(mcpPath, g.wrap(streamable, true))
	mux.Handle("/metrics", g.wrap(m.handler(), true))
	mux.Handle("/healthz", g.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := sessions.Stats()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "ok", "version": version,
			"sessions": st.Conversations, "browsers": st.BrowsersRunning})
	}), false))
	httpServer := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- httpServer.Serve(ln) }()
	logger.Info("serving MCP over streamable HTTP", zap.String("url", "http://"+ln.Addr().String()+mcpPath),
		zap.Bool("auth", cfg.authToken != ""), zap.Int("maxSessions", cfg.maxSessions))

	select {
	case err := <-served:
		return fmt.Errorf("serve http: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	grace, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := httpServer.Shutdown(grace); err != nil {
		_ = httpServer.Close() // open event streams do not end by themselves
	}
	_ = streamable.Shutdown(context.Background())
	return nil
}

// guard refuses requests before they reach MCP: a Host that is not this
// machine while listening on loopback (DNS rebinding), an Origin of another
// site, and a missing or wrong bearer token when one is set.
type guard struct {
	token    string
	loopback bool
}

func (g guard) wrap(next http.Handler, needsToken bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.loopback && !browser.IsLoopback(hostOf(r.Host)) {
			http.Error(w, fmt.Sprintf("Forbidden: Host %q is not this machine; chromekeeper listens on loopback (DNS rebinding protection)", r.Host), http.StatusForbidden)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !g.allowedOrigin(origin, r.Host) {
			http.Error(w, fmt.Sprintf("Forbidden: Origin %q may not use this server; only pages served from this machine may", origin), http.StatusForbidden)
			return
		}
		if needsToken && g.token != "" {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(g.token)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="chromekeeper"`)
				http.Error(w, "Unauthorized: send Authorization: Bearer <token> (--auth-token / CHROMEKEEPER_AUTH_TOKEN)", http.StatusUnauthorized)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// allowedOrigin accepts pages of this machine, and of the host the server
// is reached at.
func (g guard) allowedOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	return browser.IsLoopback(u.Hostname()) || (!g.loopback && strings.EqualFold(u.Host, host))
}

func hostOf(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// isLoopbackListen reports whether a listen address binds only loopback.
func isLoopbackListen(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && host != "" && browser.IsLoopback(host)
}

// checkListen refuses to expose the server beyond this machine without a token.
func checkListen(cfg *config) error {
	if _, _, err := net.SplitHostPort(cfg.listen); err != nil {
		return fmt.Errorf("--listen %q: %w", cfg.listen, err)
	}
	if !isLoopbackListen(cfg.listen) && cfg.authToken == "" {
		return errors.New("refusing to listen on " + cfg.listen + " beyond this machine without --auth-token (or CHROMEKEEPER_AUTH_TOKEN)")
	}
	return nil
}

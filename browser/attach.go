package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-rod/rod/lib/cdp"
	"go.uber.org/zap"
)

var (
	// ErrRemoteEndpoint reports a non-loopback DevTools endpoint without --allow-remote-cdp.
	ErrRemoteEndpoint = errors.New("refusing a DevTools endpoint that is not on this machine")
	// ErrUnreachable reports a DevTools endpoint that does not answer.
	ErrUnreachable = errors.New("DevTools endpoint unreachable")
)

// Attacher connects to a Chrome the user already runs, to observe their real
// tabs. Closing a browser it attached to detaches and never closes a tab.
type Attacher struct {
	// URL is the DevTools endpoint: http://host:port (its /json/version names
	// the browser's WebSocket) or the ws:// URL itself, as browser pools give.
	URL string
	// AllowRemote permits an endpoint that is not loopback (--allow-remote-cdp).
	AllowRemote bool
	Log         *zap.Logger
}

// Start connects; reuse is ignored (the user's browser has its own profile).
// A non-loopback endpoint is refused before any connection is attempted.
func (a *Attacher) Start(ctx context.Context, _ *Profile) (*Browser, error) {
	log := a.Log
	if log == nil {
		log = zap.NewNop()
	}
	endpoint, err := url.Parse(a.URL)
	if err != nil || endpoint.Host == "" {
		return nil, fmt.Errorf("%w: %q is not an http:// or ws:// URL", ErrUnreachable, a.URL)
	}
	if !a.AllowRemote && !IsLoopback(endpoint.Hostname()) {
		return nil, fmt.Errorf("%w: %s (start chromekeeper with --allow-remote-cdp to allow it)", ErrRemoteEndpoint, endpoint.Host)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	wsURL := a.URL
	if endpoint.Scheme == "http" || endpoint.Scheme == "https" {
		if wsURL, err = browserWebSocket(ctx, endpoint); err != nil {
			return nil, fmt.Errorf("%w at %s: %w", ErrUnreachable, endpoint.Host, err)
		}
	}
	ws := &cdp.WebSocket{}
	if err := ws.Connect(ctx, wsURL, nil); err != nil {
		return nil, fmt.Errorf("%w at %s: %w", ErrUnreachable, endpoint.Host, err)
	}
	b := newBrowser(newConn(ws, func() { _ = ws.Close() }, log), nil, nil)
	version, err := b.handshake(ctx)
	if err != nil {
		b.Kill()
		return nil, fmt.Errorf("%w at %s: %w", ErrUnreachable, endpoint.Host, err)
	}
	b.Version = version
	log.Info("attached to chrome", zap.String("endpoint", endpoint.Host), zap.String("version", version))
	return b, nil
}

// browserWebSocket asks an http endpoint for its browser WebSocket URL. The
// answer's host is replaced by the one asked, which Chrome may name differently.
func browserWebSocket(ctx context.Context, endpoint *url.URL) (string, error) {
	version := *endpoint
	version.Path = "/json/version"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, version.String(), nil)
	if err != nil {
		return "", err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = res.Body.Close() }()
	var info struct {
		WebSocketDebuggerURL string `json:"webSocketDebuggerUrl"`
	}
	if err := json.NewDecoder(res.Body).Decode(&info); err != nil || info.WebSocketDebuggerURL == "" {
		return "", fmt.Errorf("no webSocketDebuggerUrl in %s (%s)", version.String(), res.Status)
	}
	ws, err := url.Parse(info.WebSocketDebuggerURL)
	if err != nil {
		return "", err
	}
	ws.Host = endpoint.Host
	if endpoint.Scheme == "https" {
		ws.Scheme = "wss"
	}
	return ws.String(), nil
}

// IsLoopback reports whether a host name is this machine: localhost, or a
// loopback address. Other names are not resolved: resolving is reaching out.
func IsLoopback(host string) bool {
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

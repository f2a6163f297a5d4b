package tools

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/chromekeeper/chromekeeper/browser"
	"github.com/chromekeeper/chromekeeper/session"
)

// Policy holds the security settings of SPEC §5 that tools enforce.
type Policy struct {
	// AllowFileURLs permits file: navigation (--allow-file-urls).
	AllowFileURLs bool
	// OutputDir is the only directory tools write files under (--output-dir).
	OutputDir string
}

// navigationURL checks a navigation target and returns it normalized. A bare
// host gets a scheme: http:// for loopback hosts (dev servers), https://
// otherwise. Allowed: http, https, about:blank, data:, and file: when enabled.
func (p Policy) navigationURL(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", session.Errorf(session.CodeInvalidInput, "url must not be empty")
	}
	if !strings.Contains(raw, ":") || looksLikeHostPort(raw) {
		raw = defaultScheme(raw) + raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return "", session.Errorf(session.CodeInvalidInput, "url %q is not a valid URL", raw)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" || strings.ContainsAny(u.Host, " \t") {
			return "", session.Errorf(session.CodeInvalidInput, "url %q has no valid host", raw)
		}
		return u.String(), nil
	case "about":
		if strings.EqualFold(u.Opaque, "blank") {
			return "about:blank", nil
		}
	case "data":
		return raw, nil
	case "file":
		if p.AllowFileURLs {
			return raw, nil
		}
		return "", &session.Error{Code: session.CodeSecurityBlocked,
			Message: "file: URLs are disabled", Details: []string{"Hint: start chromekeeper with --allow-file-urls to allow them"}}
	}
	return "", session.Errorf(session.CodeSecurityBlocked,
		"%s: URLs are not allowed; use http, https, about:blank or data:", strings.ToLower(u.Scheme))
}

// looksLikeHostPort tells "localhost:3000/x" (a host and port without a
// scheme) from "mailto:x" (a scheme).
func looksLikeHostPort(s string) bool {
	host, rest, _ := strings.Cut(s, ":")
	if host == "" || strings.ContainsAny(host, "/?#") {
		return false
	}
	port := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		port = rest[:i]
	}
	if port == "" {
		return false
	}
	for _, c := range port {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func defaultScheme(hostAndPath string) string {
	host := hostAndPath
	if i := strings.IndexAny(host, "/?#"); i >= 0 {
		host = host[:i]
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if browser.IsLoopback(host) {
		return "http://"
	}
	return "https://"
}

// outputFile is a file to write under OutputDir, as a path relative to it.
type outputFile struct {
	root string // absolute OutputDir
	rel  string
}

// Path is the file's absolute path, for the answer.
func (o outputFile) Path() string { return filepath.Join(o.root, o.rel) }

// outputFile checks that name stays under OutputDir (lexically here; write
// holds it there through symbolic links too).
func (p Policy) outputFile(name string) (outputFile, error) {
	root, err := filepath.Abs(p.OutputDir)
	if err != nil {
		return outputFile{}, fmt.Errorf("resolve output dir: %w", err)
	}
	target := name
	if !filepath.IsAbs(target) {
		target = filepath.Join(root, target)
	}
	target = filepath.Clean(target)
	if !within(root, target) || target == root {
		return outputFile{}, escapeError(name, root)
	}
	rel, _ := filepath.Rel(root, target)
	return outputFile{root: root, rel: rel}, nil
}

// write creates the file and its directories through an os.Root, which
// refuses any step, symbolic links included, that would leave OutputDir.
func (o outputFile) write(data []byte) error {
	if err := os.MkdirAll(o.root, 0o755); err != nil {
		return fmt.Errorf("create output directory: %w", err)
	}
	root, err := os.OpenRoot(o.root)
	if err != nil {
		return fmt.Errorf("open output directory: %w", err)
	}
	defer root.Close()
	blocked := func(err error) error {
		if errors.Is(err, os.ErrPermission) || errors.Is(err, syscall.ELOOP) || strings.Contains(err.Error(), "escapes") {
			return escapeError(o.rel, o.root)
		}
		return fmt.Errorf("write %s: %w", o.Path(), err)
	}
	if dir := filepath.Dir(o.rel); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return blocked(err)
		}
	}
	f, err := root.OpenFile(o.rel, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return blocked(err)
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return fmt.Errorf("write %s: %w", o.Path(), err)
	}
	return f.Close()
}

func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func escapeError(name, root string) error {
	return session.Errorf(session.CodeSecurityBlocked, "save_to %q leaves the output directory %s", name, root)
}

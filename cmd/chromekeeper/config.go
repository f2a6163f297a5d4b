package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/chromekeeper/chromekeeper/session"
)

// config is everything the command line and the environment set.
type config struct {
	chromePath    string
	headed        bool
	idleTimeout   time.Duration
	logLevel      string
	outputDir     string
	allowFileURLs bool
	hmrPatterns   []string
	bufferSize    int
	bufferTTL     time.Duration
	noRedact      bool
	cdpURL        string
	allowRemote   bool
	transport     string
	listen        string
	maxSessions   int
	authToken     string
	version       bool
	// command is a subcommand and its arguments: check URL, call TOOL…; empty serves MCP.
	command []string
}

// usageError is a bad command line: exit status 2.
type usageError struct{ error }

// envNames maps each flag to the environment variable that sets it when the
// flag is not given.
var envNames = map[string]string{
	"chrome-path":      "CHROME_PATH",
	"headed":           "CHROMEKEEPER_HEADED",
	"idle-timeout":     "CHROMEKEEPER_IDLE_TIMEOUT",
	"log-level":        "LOG_LEVEL",
	"output-dir":       "CHROMEKEEPER_OUTPUT_DIR",
	"allow-file-urls":  "CHROMEKEEPER_ALLOW_FILE_URLS",
	"hmr-pattern":      "CHROMEKEEPER_HMR_PATTERNS",
	"buffer-size":      "DEFAULT_BUFFER_SIZE",
	"buffer-ttl":       "DEFAULT_TTL_SEC",
	"no-redact":        "CHROMEKEEPER_NO_REDACT",
	"cdp-url":          "CHROMEKEEPER_CDP_URL",
	"allow-remote-cdp": "CHROMEKEEPER_ALLOW_REMOTE_CDP",
}

func parseConfig(args []string, stderr io.Writer) (*config, error) {
	cfg := &config{}
	fs := flag.NewFlagSet("chromekeeper", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.chromePath, "chrome-path", "", "Chrome or Chromium binary (default: search the usual install paths and $PATH)")
	fs.BoolVar(&cfg.headed, "headed", false, "show the browser window instead of running headless")
	fs.DurationVar(&cfg.idleTimeout, "idle-timeout", session.DefaultIdleTimeout, "close the browser after this long without a tool call")
	fs.StringVar(&cfg.logLevel, "log-level", "info", "log level on stderr: debug, info, warn or error")
	fs.StringVar(&cfg.outputDir, "output-dir", filepath.Join(os.TempDir(), "chromekeeper-output"), "the only directory tools write files under (screenshots with save_to)")
	fs.BoolVar(&cfg.allowFileURLs, "allow-file-urls", false, "allow navigating to file: URLs")
	fs.Func("hmr-pattern", "extra regular expression for a console line that means a hot update (repeatable; the environment variable takes one per line)", func(value string) error {
		for _, p := range strings.Split(value, "\n") {
			if p = strings.TrimSpace(p); p == "" {
				continue
			}
			if _, err := regexp.Compile(p); err != nil {
				return err
			}
			cfg.hmrPatterns = append(cfg.hmrPatterns, p)
		}
		return nil
	})
	fs.IntVar(&cfg.bufferSize, "buffer-size", session.DefaultBufferSize, "events each page's buffer keeps (oldest dropped)")
	cfg.bufferTTL = session.DefaultBufferTTL
	fs.Func("buffer-ttl", "drop a page's events this long after the last one arrived: a duration, or seconds (default 1h0m0s)", func(value string) error {
		d, err := secondsOrDuration(value)
		if err == nil && d <= 0 {
			err = fmt.Errorf("must be positive")
		}
		cfg.bufferTTL = d
		return err
	})
	fs.BoolVar(&cfg.noRedact, "no-redact", false, "show Authorization, Cookie, Set-Cookie, X-API-Key… values instead of ***")
	fs.StringVar(&cfg.cdpURL, "cdp-url", "", "attach to a running Chrome at this DevTools endpoint (http://127.0.0.1:9222 or a ws:// URL) instead of launching one; also CDP_HOST / CDP_PORT")
	fs.BoolVar(&cfg.allowRemote, "allow-remote-cdp", false, "allow a --cdp-url that is not on this machine (a browser pool)")
	fs.StringVar(&cfg.transport, "transport", "stdio", "stdio (one conversation) or http (MCP streamable HTTP, a Chrome per MCP session)")
	fs.StringVar(&cfg.listen, "listen", "127.0.0.1:8931", "address of the http transport; beyond loopback it needs --auth-token")
	fs.IntVar(&cfg.maxSessions, "max-sessions", 16, "conversations that may have a browser at once over http; one more gets SESSION_LIMIT")
	fs.StringVar(&cfg.authToken, "auth-token", "", "bearer token the http transport requires (Authorization: Bearer …)")
	fs.BoolVar(&cfg.version, "version", false, "print the version and exit")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: chromekeeper [flags]                 serve MCP (stdio or streamable HTTP)\n"+
			"       chromekeeper [flags] check [check flags] URL   PWA checks for CI (check --help)\n"+
			"       chromekeeper [flags] call [--json] TOOL [key=value …] [-- TOOL …]   run tools in one session\n\n"+
			"A real headless Chrome for agents, without session management.\n\nFlags (each also read from the environment variable shown):\n")
		fs.VisitAll(func(f *flag.Flag) {
			env := ""
			if name, ok := envNames[f.Name]; ok {
				env = " [$" + name + "]"
			}
			def := ""
			if f.DefValue != "" && f.DefValue != "false" {
				def = " (default " + f.DefValue + ")"
			}
			fmt.Fprintf(fs.Output(), "  --%s%s\n      %s%s\n", f.Name, env, f.Usage, def)
		})
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return nil, err
		}
		return nil, usageError{err}
	}
	if fs.NArg() > 0 {
		switch fs.Arg(0) {
		case "check", "call":
			cfg.command = fs.Args()
		default:
			return nil, usageError{fmt.Errorf("unexpected argument %q (subcommands: check, call)", fs.Arg(0))}
		}
	}
	if err := applyEnv(fs); err != nil {
		return nil, usageError{err}
	}
	if cfg.cdpURL == "" {
		host, port := os.Getenv("CDP_HOST"), os.Getenv("CDP_PORT")
		if host != "" || port != "" {
			cfg.cdpURL = "http://" + net.JoinHostPort(cmp.Or(host, "127.0.0.1"), cmp.Or(port, "9222"))
		}
	}
	switch cfg.transport {
	case "stdio":
	case "http":
		if err := checkListen(cfg); err != nil {
			return nil, usageError{err}
		}
	default:
		return nil, usageError{fmt.Errorf("--transport must be stdio or http, got %q", cfg.transport)}
	}
	if cfg.maxSessions < 0 {
		return nil, usageError{fmt.Errorf("--max-sessions must not be negative, got %d", cfg.maxSessions)}
	}
	if cfg.bufferSize <= 0 {
		return nil, usageError{fmt.Errorf("--buffer-size must be positive, got %d", cfg.bufferSize)}
	}
	if cfg.idleTimeout <= 0 {
		return nil, usageError{fmt.Errorf("--idle-timeout must be positive, got %s", cfg.idleTimeout)}
	}
	abs, err := filepath.Abs(cfg.outputDir)
	if err != nil {
		return nil, usageError{fmt.Errorf("--output-dir: %w", err)}
	}
	cfg.outputDir = abs
	return cfg, nil
}

// secondsOrDuration reads "3600" as seconds and "1h" as a duration.
func secondsOrDuration(value string) (time.Duration, error) {
	if n, err := strconv.Atoi(strings.TrimSpace(value)); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	return time.ParseDuration(value)
}

// applyEnv sets every flag not given on the command line from its environment variable.
func applyEnv(fs *flag.FlagSet) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for name, env := range envNames {
		value, ok := os.LookupEnv(env)
		if given[name] || !ok || strings.TrimSpace(value) == "" {
			continue
		}
		if err := fs.Set(name, value); err != nil {
			return fmt.Errorf("$%s: %w", env, err)
		}
	}
	return nil
}

package main

import (
	"errors"
	"flag"
	"io"
	"testing"
	"time"
)

func TestConfigFlagsBeatEnvironment(t *testing.T) {
	t.Setenv("CHROMEKEEPER_IDLE_TIMEOUT", "2m")
	t.Setenv("CHROME_PATH", "/from/env")
	t.Setenv("CHROMEKEEPER_ALLOW_FILE_URLS", "true")
	cfg, err := parseConfig([]string{"--idle-timeout", "30s"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.idleTimeout != 30*time.Second {
		t.Errorf("idle timeout = %s, want the flag's 30s", cfg.idleTimeout)
	}
	if cfg.chromePath != "/from/env" || !cfg.allowFileURLs {
		t.Errorf("environment not applied: chrome path %q, allow file URLs %v", cfg.chromePath, cfg.allowFileURLs)
	}
}

func TestConfigDefaults(t *testing.T) {
	cfg, err := parseConfig(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.idleTimeout != 5*time.Minute || cfg.headed || cfg.allowFileURLs || cfg.logLevel != "info" || cfg.outputDir == "" {
		t.Errorf("defaults: %+v", cfg)
	}
}

func TestConfigRejectsBadInput(t *testing.T) {
	for _, args := range [][]string{{"--idle-timeout", "0s"}, {"--idle-timeout", "soon"}, {"stray"}, {"--no-such-flag"}} {
		_, err := parseConfig(args, io.Discard)
		if !errors.As(err, new(usageError)) {
			t.Errorf("parseConfig(%q) = %v, want a usage error", args, err)
		}
	}
	t.Setenv("CHROMEKEEPER_HEADED", "sometimes")
	if _, err := parseConfig(nil, io.Discard); !errors.As(err, new(usageError)) {
		t.Errorf("bad $CHROMEKEEPER_HEADED accepted: %v", err)
	}
	if _, err := parseConfig([]string{"--help"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("--help = %v", err)
	}
}

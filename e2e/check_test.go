package e2e_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runBinary runs chromekeeper with args in a private TMPDIR and returns its
// stdout, stderr and exit status.
func runBinary(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "TMPDIR="+privateTempDir(t))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), exitCode(err)
}

type checkReport struct {
	URL    string `json:"url"`
	Passed bool   `json:"passed"`
	Checks []struct {
		Name     string   `json:"name"`
		Status   string   `json:"status"`
		Summary  string   `json:"summary"`
		Evidence []string `json:"evidence"`
	} `json:"checks"`
}

func runCheck(t *testing.T, args ...string) (checkReport, string, int) {
	t.Helper()
	stdout, stderr, code := runBinary(t, append([]string{"check", "--format", "json"}, args...)...)
	var report checkReport
	if code != 2 {
		if err := json.Unmarshal([]byte(stdout), &report); err != nil {
			t.Fatalf("check --format json printed no JSON (exit %d): %v\n%s\n%s", code, err, stdout, stderr)
		}
	}
	return report, stderr, code
}

func (r checkReport) status(name string) string {
	for _, c := range r.Checks {
		if c.Name == name {
			return c.Status
		}
	}
	return ""
}

func TestCheckPassesOnTheFixturePWA(t *testing.T) {
	t.Parallel()
	report, stderr, code := runCheck(t, "--offline-url", fixture.page("/pwa/api/data.json"), fixture.page("/pwa/"))
	if code != 0 || !report.Passed {
		t.Fatalf("check exited %d on the fixture PWA:\n%+v\n%s", code, report, stderr)
	}
	for _, c := range report.Checks {
		if c.Status != "pass" || len(c.Summary) == 0 {
			t.Errorf("%s: %s %q", c.Name, c.Status, c.Summary)
		}
		if c.Name != "console" && len(c.Evidence) == 0 {
			t.Errorf("%s passed without evidence", c.Name)
		}
	}
	if len(report.Checks) != 5 {
		t.Errorf("%d checks, want 5", len(report.Checks))
	}
}

func TestCheckFailsWithoutAServiceWorker(t *testing.T) {
	t.Parallel()
	report, _, code := runCheck(t, fixture.page("/"))
	if code != 1 || report.Passed {
		t.Fatalf("exit %d on a page without a service worker, want 1", code)
	}
	for name, want := range map[string]string{"manifest": "fail", "service-worker": "fail", "offline": "fail", "console": "pass", "offline-urls": "skip"} {
		if got := report.status(name); got != want {
			t.Errorf("%s = %s, want %s", name, got, want)
		}
	}
	table, _, code := runBinary(t, "check", "--timeout", "2s", "--skip", "console,offline", fixture.page("/"))
	if code != 1 || !strings.Contains(table, "service-worker") || !strings.Contains(table, "FAIL") || !strings.Contains(table, "FAILED: 0 passed, 2 failed, 3 skipped") {
		t.Errorf("table output (exit %d):\n%s", code, table)
	}
}

func TestCheckOfflineFailsWhenTheShellIsNotCached(t *testing.T) {
	t.Parallel()
	report, _, code := runCheck(t, "--skip", "manifest", fixture.page("/pwa-nocache/"))
	if code != 1 || report.status("service-worker") != "pass" || report.status("offline") != "fail" {
		t.Fatalf("exit %d, service-worker %s, offline %s; want 1, pass, fail", code, report.status("service-worker"), report.status("offline"))
	}
	for _, c := range report.Checks {
		if c.Name == "offline" && !strings.Contains(strings.Join(c.Evidence, "\n"), "GET "+fixture.page("/pwa-nocache/")+" (net::ERR_") {
			t.Errorf("the offline check does not list the failing document request:\n%s", strings.Join(c.Evidence, "\n"))
		}
	}
}

func TestCheckRunFailureExits2(t *testing.T) {
	t.Parallel()
	_, stderr, code := runCheck(t, "http://127.0.0.1:1/")
	if code != 2 || !strings.Contains(stderr, "load http://127.0.0.1:1/") || !strings.Contains(stderr, "NAVIGATION_FAILED") {
		t.Errorf("exit %d, stderr %q; want 2 and a clear message", code, stderr)
	}
	_, stderr, code = runBinary(t, "--chrome-path", "/nonexistent", "check", fixture.page("/"))
	if code != 2 || !strings.Contains(stderr, "BROWSER_NOT_FOUND") {
		t.Errorf("without Chrome: exit %d, stderr %q", code, stderr)
	}
}

func TestCheckJUnitReport(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "junit.xml")
	stdout, _, code := runBinary(t, "check", "--format", "junit", "--report", file, fixture.page("/"))
	if code != 1 || !strings.Contains(stdout, "CHECK") {
		t.Fatalf("exit %d; with --report the table goes to stdout:\n%s", code, stdout)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var suites struct {
		XMLName xml.Name `xml:"testsuites"`
		Suites  []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Skipped  int    `xml:"skipped,attr"`
			Cases    []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
				Skipped *struct{} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &suites); err != nil {
		t.Fatalf("the JUnit file does not parse: %v\n%s", err, data)
	}
	if len(suites.Suites) != 1 {
		t.Fatalf("%d testsuites", len(suites.Suites))
	}
	s := suites.Suites[0]
	failures := 0
	for _, c := range s.Cases {
		if c.Failure != nil {
			failures++
			if c.Failure.Message == "" {
				t.Errorf("testcase %s: failure without a message", c.Name)
			}
		}
	}
	if s.Tests != 5 || len(s.Cases) != 5 || s.Failures != 3 || failures != 3 || s.Skipped != 1 {
		t.Errorf("testsuite tests=%d cases=%d failures=%d (counted %d) skipped=%d; want 5, 5, 3, 3, 1", s.Tests, len(s.Cases), s.Failures, failures, s.Skipped)
	}
}

func TestCallChainsToolsInOneSession(t *testing.T) {
	t.Parallel()
	f := privateFixtures(t)
	installArgs := []string{"call",
		"browser_navigate", "url=" + f.page("/pwa/"), "--",
		"browser_eval", "expression=await window.swReady; 'ready'", "--",
		"browser_reload", "--",
		"browser_set_offline", "offline=true", "--",
		"browser_reload", "--",
		"browser_eval", "expression=document.title", "timeout_ms=5000",
	}
	stdout, stderr, code := runBinary(t, installArgs...)
	if code != 0 {
		t.Fatalf("call exited %d:\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"== browser_navigate\nSUCCESS: Navigation complete",
		"== browser_set_offline\nSUCCESS: Browser is offline",
		"== browser_reload\nSUCCESS: Reloaded",
		"== browser_eval\nSUCCESS: Evaluated\nType: string\nResult: \"fixture PWA\"",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("call output lacks %q:\n%s", want, stdout)
		}
	}
	jsonOut, _, code := runBinary(t, "call", "--json", "browser_eval", "expression=1+1")
	if code != 0 || !strings.Contains(jsonOut, `"structuredContent":{"result":2,"type":"number"}`) {
		t.Errorf("call --json (exit %d): %s", code, jsonOut)
	}
	_, _, code = runBinary(t, "call", "browser_eval", "expression=throw new Error('x')")
	if code != 1 {
		t.Errorf("a tool error exits %d, want 1", code)
	}
}

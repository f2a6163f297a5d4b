// Package check runs chromekeeper's PWA checks for CI: the answers an agent
// would get from the tools, as pass/fail results with evidence and a report
// a CI system reads (table, JSON, JUnit).
package check

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/chromekeeper/chromekeeper/session"
)

// Check names, in the order they run.
const (
	ServiceWorker = "service-worker"
	Manifest      = "manifest"
	Console       = "console"
	Offline       = "offline"
	OfflineURLs   = "offline-urls"
)

// Names lists every check, in the order they run.
var Names = []string{Manifest, ServiceWorker, Console, Offline, OfflineURLs}

// Options configure a run.
type Options struct {
	URL                string
	Timeout            time.Duration // for each step that waits (load, service worker, wait-for)
	WaitFor            string        // a JS expression that must become true before the checks
	Skip               []string
	OfflineURLs        []string
	AllowConsoleErrors bool
}

// Result is one check's outcome.
type Result struct {
	Name     string   `json:"name"`
	Status   string   `json:"status"` // pass, fail, skip
	Summary  string   `json:"summary"`
	Evidence []string `json:"evidence,omitempty"`
	Seconds  float64  `json:"seconds"`
}

// Status values of a Result.
const (
	Pass = "pass"
	Fail = "fail"
	Skip = "skip"
)

// Report is a whole run.
type Report struct {
	URL     string   `json:"url"`
	Passed  bool     `json:"passed"`
	Checks  []Result `json:"checks"`
	Seconds float64  `json:"seconds"`
}

// ErrRun reports that the run itself failed: the page did not load, Chrome
// is missing, --wait-for never held. It is exit status 2, not a failed check.
var ErrRun = errors.New("check run failed")

// Run loads opts.URL in the session's browser and runs every check not
// skipped. Checks that fail are in the report; an error means the run could
// not be made (wrapping ErrRun).
func Run(ctx context.Context, s *session.Session, opts Options) (*Report, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	started := time.Now()
	r := &runner{s: s, opts: opts}
	if err := r.load(ctx); err != nil {
		return nil, err
	}
	report := &Report{URL: opts.URL, Passed: true}
	steps := map[string]func(context.Context) Result{
		Manifest: r.manifest, ServiceWorker: r.serviceWorker, Console: r.console,
		Offline: r.offline, OfflineURLs: r.offlineURLs,
	}
	for _, name := range Names {
		var res Result
		switch {
		case slices.Contains(opts.Skip, name):
			res = Result{Status: Skip, Summary: "skipped (--skip)"}
		case name == OfflineURLs && len(opts.OfflineURLs) == 0:
			res = Result{Status: Skip, Summary: "no --offline-url given"}
		default:
			start := time.Now()
			res = steps[name](ctx)
			res.Seconds = time.Since(start).Seconds()
		}
		res.Name = name
		report.Checks = append(report.Checks, res)
		report.Passed = report.Passed && res.Status != Fail
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: %w", ErrRun, ctx.Err())
		}
	}
	report.Seconds = time.Since(started).Seconds()
	return report, nil
}

// runner carries a run's state between checks.
type runner struct {
	s    *session.Session
	opts Options
}

// onPage runs f as one call on the current page.
func (r *runner) onPage(ctx context.Context, opts session.CallOptions, f func(context.Context, *session.Call, *session.Page) error) error {
	_, err := r.s.Do(ctx, opts, func(ctx context.Context, c *session.Call) error {
		p, err := c.Page(ctx, "")
		if err != nil {
			return err
		}
		return f(ctx, c, p)
	})
	return err
}

// eval evaluates an expression on the current page and returns its JSON value.
func (r *runner) eval(ctx context.Context, expr string) (any, error) {
	var value any
	err := r.onPage(ctx, session.CallOptions{}, func(ctx context.Context, _ *session.Call, p *session.Page) error {
		res, err := p.Eval(ctx, expr, true, r.opts.Timeout)
		if err == nil {
			value = res.Value
		}
		return err
	})
	return value, err
}

// load navigates to the URL and waits for --wait-for; failing is ErrRun.
func (r *runner) load(ctx context.Context) error {
	err := r.onPage(ctx, session.CallOptions{Navigates: true}, func(ctx context.Context, _ *session.Call, p *session.Page) error {
		nav, err := withTimeout(ctx, r.opts.Timeout, func(ctx context.Context) (*session.Navigation, error) {
			return p.Navigate(ctx, r.opts.URL, session.WaitLoad)
		})
		if err == nil && nav.Status >= 400 {
			err = fmt.Errorf("the page answered HTTP %d", nav.Status)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("%w: load %s: %s", ErrRun, r.opts.URL, describe(err))
	}
	if r.opts.WaitFor == "" {
		return nil
	}
	expr := fmt.Sprintf(`await new Promise((resolve) => {
		const check = async () => { try { if (await (%s)) return resolve(true); } catch (e) {} setTimeout(check, 100); };
		check();
	})`, r.opts.WaitFor)
	if _, err := r.eval(ctx, expr); err != nil {
		return fmt.Errorf("%w: --wait-for %q did not become true within %s: %s", ErrRun, r.opts.WaitFor, r.opts.Timeout, describe(err))
	}
	return nil
}

func (r *runner) manifest(ctx context.Context) Result {
	v, err := r.eval(ctx, `await (async () => {
		const link = document.querySelector('link[rel="manifest"]');
		if (!link) return {missing: true};
		try {
			const res = await fetch(link.href, {credentials: link.crossOrigin === "use-credentials" ? "include" : "same-origin"});
			return {href: link.href, status: res.status, text: await res.text()};
		} catch (e) {
			return {href: link.href, error: String(e)};
		}
	})()`)
	if err != nil {
		return failed("could not read the manifest link", describe(err))
	}
	var m struct {
		Missing bool   `json:"missing"`
		Href    string `json:"href"`
		Status  int    `json:"status"`
		Text    string `json:"text"`
		Error   string `json:"error"`
	}
	if b, err := session.EncodeJSON(v); err == nil {
		_ = json.Unmarshal(b, &m)
	}
	switch {
	case m.Missing:
		return failed("the page has no <link rel=\"manifest\">")
	case m.Error != "":
		return failed("fetching the manifest failed", m.Href+": "+m.Error)
	case m.Status != 200:
		return failed(fmt.Sprintf("the manifest answered HTTP %d", m.Status), m.Href)
	}
	var manifest struct {
		Name      string           `json:"name"`
		ShortName string           `json:"short_name"`
		StartURL  string           `json:"start_url"`
		Display   string           `json:"display"`
		Icons     []map[string]any `json:"icons"`
	}
	if err := json.Unmarshal([]byte(m.Text), &manifest); err != nil {
		return failed("the manifest is not valid JSON", m.Href+": "+err.Error())
	}
	return passed("the manifest is fetched and parses", m.Href,
		fmt.Sprintf("name %q, short_name %q, start_url %q, display %q, %d icons",
			manifest.Name, manifest.ShortName, manifest.StartURL, manifest.Display, len(manifest.Icons)))
}

func (r *runner) serviceWorker(ctx context.Context) Result {
	ready, err := r.eval(ctx, fmt.Sprintf(`await (async () => {
		if (!("serviceWorker" in navigator)) return "this page has no navigator.serviceWorker (not a secure context?)";
		const timeout = new Promise((resolve) => setTimeout(() => resolve(null), %d));
		const reg = await Promise.race([navigator.serviceWorker.ready, timeout]);
		return reg ? "" : "no service worker registered and activated";
	})()`, r.opts.Timeout.Milliseconds()))
	if err != nil {
		return failed("could not ask for the service worker", describe(err))
	}
	if msg, _ := ready.(string); msg != "" {
		return failed(msg+" within "+r.opts.Timeout.String(), "navigator.serviceWorker.ready did not resolve")
	}
	var evidence []string
	controlled := false
	err = r.onPage(ctx, session.CallOptions{}, func(ctx context.Context, c *session.Call, p *session.Page) error {
		if _, err := withTimeout(ctx, r.opts.Timeout, func(ctx context.Context) (*session.Navigation, error) {
			return p.Reload(ctx, false, session.WaitLoad)
		}); err != nil {
			return err
		}
		for _, reg := range c.ServiceWorkers(ctx) {
			for _, v := range reg.Versions {
				evidence = append(evidence, fmt.Sprintf("scope %s: version %s %s (%s), script %s, controls %s",
					reg.Scope, v.ID, v.Status, v.RunningStatus, v.ScriptURL, strings.Join(v.Controls, ",")))
				controlled = controlled || slices.Contains(v.Controls, p.ID)
			}
		}
		return nil
	})
	if err != nil {
		return failed("reloading the page failed", describe(err))
	}
	if !controlled {
		return failed("after a reload no service worker controls the page", evidence...)
	}
	return passed("a service worker registers, activates and controls the page after a reload", evidence...)
}

func (r *runner) console(ctx context.Context) Result {
	var report session.ConsoleReport
	err := r.onPage(ctx, session.CallOptions{}, func(ctx context.Context, c *session.Call, p *session.Page) error {
		report = c.ConsoleLogs(p, session.ConsoleQuery{Levels: []string{"error"}, Limit: 20})
		return nil
	})
	if err != nil {
		return failed("could not read the console", describe(err))
	}
	var evidence []string
	for _, m := range report.Messages {
		line := fmt.Sprintf("%s %s", m.Source, m.Text)
		if loc := m.Location(); loc != "" {
			line += " (" + loc + ")"
		}
		evidence = append(evidence, line)
	}
	switch {
	case report.Matched == 0:
		return passed(fmt.Sprintf("no console errors or uncaught exceptions in epoch %d", report.Epoch))
	case r.opts.AllowConsoleErrors:
		return passed(fmt.Sprintf("%d console errors, allowed by --allow-console-errors", report.Matched), evidence...)
	default:
		return failed(fmt.Sprintf("%d console errors or uncaught exceptions in epoch %d", report.Matched, report.Epoch), evidence...)
	}
}

// offline reloads with the page and its workers offline: the page must render
// from the service worker; the requests that fail are listed either way.
func (r *runner) offline(ctx context.Context) Result {
	var res Result
	err := r.onPage(ctx, session.CallOptions{}, whileOffline(func(ctx context.Context, c *session.Call, p *session.Page) error {
		nav, err := withTimeout(ctx, r.opts.Timeout, func(ctx context.Context) (*session.Navigation, error) {
			return p.Reload(ctx, false, session.WaitLoad)
		})
		failures := failedRequests(c.NetworkSources(p, true))
		switch {
		case err != nil:
			res = failed("the offline reload did not render the page: "+describe(err), failures...)
		case strings.HasPrefix(nav.URL, "chrome-error:"):
			res = failed("offline, the page shows Chrome's error page: the document is not served from a cache", failures...)
		default:
			evidence := []string{fmt.Sprintf("the page rendered offline: HTTP %d, title %q", nav.Status, nav.Title)}
			if len(failures) > 0 {
				evidence = append(evidence, fmt.Sprintf("%d requests failed offline:", len(failures)))
			}
			res = passed("offline, the page renders from the service worker", append(evidence, failures...)...)
		}
		return nil
	}))
	if err != nil {
		return failed("could not go offline", describe(err))
	}
	return res
}

// offlineURLs loads each --offline-url with the browser offline.
func (r *runner) offlineURLs(ctx context.Context) Result {
	var evidence []string
	ok := true
	err := r.onPage(ctx, session.CallOptions{Navigates: true}, whileOffline(func(ctx context.Context, _ *session.Call, p *session.Page) error {
		for _, u := range r.opts.OfflineURLs {
			nav, err := withTimeout(ctx, r.opts.Timeout, func(ctx context.Context) (*session.Navigation, error) {
				return p.Navigate(ctx, u, session.WaitLoad)
			})
			switch {
			case err != nil:
				ok = false
				evidence = append(evidence, fmt.Sprintf("FAIL %s: %s", u, describe(err)))
			case nav.Status >= 400 || strings.HasPrefix(nav.URL, "chrome-error:"):
				ok = false
				evidence = append(evidence, fmt.Sprintf("FAIL %s: HTTP %d", u, nav.Status))
			default:
				evidence = append(evidence, fmt.Sprintf("ok %s: HTTP %d, title %q", u, nav.Status, nav.Title))
			}
		}
		return nil
	}))
	if err != nil {
		return failed("could not go offline", describe(err))
	}
	if !ok {
		return failed("some --offline-url did not load offline", evidence...)
	}
	return passed(fmt.Sprintf("all %d --offline-url load offline", len(r.opts.OfflineURLs)), evidence...)
}

// whileOffline wraps f so that it runs with the browser offline, and online again after.
func whileOffline(f func(context.Context, *session.Call, *session.Page) error) func(context.Context, *session.Call, *session.Page) error {
	return func(ctx context.Context, c *session.Call, p *session.Page) error {
		defer c.SetOffline(context.WithoutCancel(ctx), false)
		if change := c.SetOffline(ctx, true); len(change.Failed) > 0 {
			return fmt.Errorf("going offline failed for %s", strings.Join(change.Failed, "; "))
		}
		return f(ctx, c, p)
	}
}

// failedRequests lists the requests that failed, page's and workers' alike.
func failedRequests(reqs []session.Request) []string {
	var out []string
	for _, r := range reqs {
		if r.Error != "" {
			out = append(out, fmt.Sprintf("%s %s (%s, %s)", r.Method, r.URL, r.Error, r.Initiator))
		}
	}
	return out
}

func passed(summary string, evidence ...string) Result {
	return Result{Status: Pass, Summary: summary, Evidence: evidence}
}

func failed(summary string, evidence ...string) Result {
	return Result{Status: Fail, Summary: summary, Evidence: evidence}
}

// describe renders an error as its code and message.
func describe(err error) string {
	e := session.AsError(err)
	return string(e.Code) + ": " + e.Message
}

func withTimeout[T any](ctx context.Context, timeout time.Duration, f func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return f(ctx)
}

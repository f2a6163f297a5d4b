package session

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-rod/rod/lib/proto"
)

// settleTimeout bounds how long a service-worker action waits for its effect.
const settleTimeout = 10 * time.Second

// WorkerInfo describes a worker or frame of the session.
type WorkerInfo struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	URL      string `json:"url"`
	Owner    string `json:"owner,omitempty"` // the page (or, for a service worker, the pages it controls)
	TargetID string `json:"targetId"`
}

// Workers lists the service workers, workers and frames attached now. A
// service worker's owner is the pages it controls.
func (c *Call) Workers(ctx context.Context) []WorkerInfo {
	if c.live == nil {
		return nil
	}
	// A frame attaches before it has navigated: take URLs fresh from the browser.
	urls := map[string]string{}
	if targets, err := (proto.TargetGetTargets{}).Call(c.live.Conn.Session(ctx, "")); err == nil {
		for _, t := range targets.TargetInfos {
			urls[string(t.TargetID)] = t.URL
		}
	}
	var regs []Registration
	var out []WorkerInfo
	for _, w := range c.live.attachedWorkers() {
		info := WorkerInfo{ID: w.ID, Type: w.Type, URL: w.URL, TargetID: w.TargetID, Owner: c.pageIDOf(w.Owner)}
		if u := urls[w.TargetID]; u != "" {
			info.URL = u
		}
		if w.Type == TypeServiceWorker {
			if regs == nil {
				regs = c.ServiceWorkers(ctx)
			}
			info.Owner = strings.Join(controlledBy(regs, w.TargetID), ",")
		}
		out = append(out, info)
	}
	return out
}

// Worker finds a worker or frame by short id (sw1) or CDP target id.
func (c *Call) Worker(ctx context.Context, id string) (*Worker, error) {
	var w *Worker
	if c.live != nil {
		w = c.live.worker(id)
	}
	if w != nil && w.Type == TypeServiceWorker && !w.isClosed() && c.live.sw.stopped(w.TargetID) {
		return nil, &Error{Code: CodeTargetNotFound, Message: fmt.Sprintf("service worker %s is stopped", id),
			Details: []string{"Hint: it starts again on its next event (a fetch from a page it controls, a reload)"}}
	}
	if w == nil || w.isClosed() {
		var ids []string
		for _, info := range c.Workers(ctx) {
			ids = append(ids, info.ID)
		}
		return nil, &Error{Code: CodeTargetNotFound, Message: fmt.Sprintf("no worker %q", id),
			Details: []string{"Workers: " + joinOrNone(ids)}}
	}
	select {
	case <-w.ready:
		return w, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// pageIDOf maps a page's CDP target id to its short id ("" when unknown).
func (c *Call) pageIDOf(targetID string) string {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	for id, p := range c.s.pages {
		if p.TargetID == targetID {
			return id
		}
	}
	return ""
}

func (c *Call) pageIDsOf(targetIDs []string) []string {
	var ids []string
	for _, t := range targetIDs {
		if id := c.pageIDOf(t); id != "" {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// controlledBy returns the pages controlled by the version running in a target.
func controlledBy(regs []Registration, targetID string) []string {
	for _, reg := range regs {
		for _, v := range reg.Versions {
			if v.TargetID == targetID {
				return v.Controls
			}
		}
	}
	return nil
}

// SetOffline turns offline mode on or off for every target of the session,
// now and later: pages, service workers, workers and frames. A target that
// could not be switched (one detaching as it was asked) is reported, not fatal.
func (c *Call) SetOffline(ctx context.Context, offline bool) OfflineChange {
	if c.live == nil {
		return c.s.settings.setOffline(ctx, offline, func() []targetSession { return nil })
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return c.s.settings.setOffline(ctx, offline, func() []targetSession {
		c.s.mu.Lock()
		c.adoptLocked()
		c.s.mu.Unlock()
		return c.live.targetSessions(ctx, c.pageIDOrTarget)
	})
}

// pageIDOrTarget names a page by its short id, or by its target id before it has one.
func (c *Call) pageIDOrTarget(p *Page) string {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	if p.ID == "" {
		return p.TargetID
	}
	return p.ID
}

// Offline reports whether offline mode is on.
func (c *Call) Offline() bool { return c.s.settings.isOffline() }

// controllerScript asks a page which service worker script controls it ("" for none).
const controllerScript = `navigator.serviceWorker && navigator.serviceWorker.controller ? navigator.serviceWorker.controller.scriptURL : ""`

// ServiceWorkers returns the registrations Chrome reports, with the pages
// each version controls. Chrome's controlledClients misses clients that
// arrive by navigation (a reload empties it), so every open page is also
// asked for its controller, and the answers are merged.
func (c *Call) ServiceWorkers(ctx context.Context) []Registration {
	if c.live == nil {
		return nil
	}
	type controlled struct{ page, url, script string }
	var controllers []controlled
	for _, p := range c.openPages() {
		ask, cancel := context.WithTimeout(ctx, time.Second)
		script, err := p.evalString(ask, controllerScript)
		cancel()
		if err == nil && script != "" {
			controllers = append(controllers, controlled{p.ID, p.URL(), script})
		}
	}
	regs := c.live.sw.snapshot()
	for i := range regs {
		for j := range regs[i].Versions {
			v := &regs[i].Versions[j]
			v.Controls = c.pageIDsOf(v.ControlledTargets)
			if v.Status != "activated" || regs[i].Deleted {
				continue
			}
			for _, ctl := range controllers {
				if ctl.script == v.ScriptURL && strings.HasPrefix(ctl.url, regs[i].Scope) && !slices.Contains(v.Controls, ctl.page) {
					v.Controls = append(v.Controls, ctl.page)
				}
			}
			sort.Strings(v.Controls)
		}
	}
	return regs
}

// openPages returns the registered, open pages.
func (c *Call) openPages() []*Page {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	c.adoptLocked()
	var out []*Page
	for _, id := range sortedIDs(c.s.pages) {
		if p := c.s.pages[id]; !p.isClosed() {
			out = append(out, p)
		}
	}
	return out
}

// LiveRegistrations returns the registrations that are not deleted.
func LiveRegistrations(regs []Registration) []Registration {
	var live []Registration
	for _, r := range regs {
		if !r.Deleted {
			live = append(live, r)
		}
	}
	return live
}

// registrationFor picks the registration an action is about: the given scope
// (exact, or the only one containing it), else the one whose scope covers
// the page's URL most narrowly.
func registrationFor(regs []Registration, scope, pageURL string) (Registration, error) {
	live := LiveRegistrations(regs)
	var matches []Registration
	for _, r := range live {
		switch {
		case scope != "" && r.Scope == scope:
			return r, nil
		case scope != "" && strings.Contains(r.Scope, scope):
			matches = append(matches, r)
		case scope == "" && strings.HasPrefix(pageURL, r.Scope):
			matches = append(matches, r)
		}
	}
	if scope == "" {
		sort.Slice(matches, func(i, j int) bool { return len(matches[i].Scope) > len(matches[j].Scope) })
		if len(matches) > 0 {
			return matches[0], nil
		}
		return Registration{}, Errorf(CodeTargetNotFound, "no service worker registration covers %s", pageURL)
	}
	if len(matches) == 1 {
		return matches[0], nil
	}
	var scopes []string
	for _, r := range live {
		scopes = append(scopes, r.Scope)
	}
	what := "matches"
	if len(matches) > 1 {
		what = "matches more than one"
	}
	return Registration{}, &Error{Code: CodeTargetNotFound, Message: fmt.Sprintf("no single registration %s scope %q", what, scope),
		Details: []string{"Scopes: " + strings.Join(scopes, ", ")}}
}

// ServiceWorkerAction runs update, unregister, skip_waiting or stop on the
// registration chosen by scope (see registrationFor) and waits until Chrome
// reports the effect, or settleTimeout passes. It returns the registration's
// resulting state.
func (c *Call) ServiceWorkerAction(ctx context.Context, p *Page, action, scope string) (Registration, error) {
	reg, err := registrationFor(c.ServiceWorkers(ctx), scope, p.URL())
	if err != nil {
		return Registration{}, err
	}
	cdp := p.cdp(ctx)
	before := reg.Versions
	var settled func(Registration) bool
	switch action {
	case "update":
		if c.Offline() {
			return reg, &Error{Code: CodeInvalidInput, Message: "update is refused while offline: Chrome's update check bypasses offline emulation and would reach the server",
				Details: []string{"Hint: browser_set_offline {offline: false} first"}}
		}
		err = proto.ServiceWorkerUpdateRegistration{ScopeURL: reg.Scope}.Call(cdp)
		settled = func(r Registration) bool {
			return !hasStatus(r, "new", "installing") && !sameVersions(r.Versions, before)
		}
	case "unregister":
		err = proto.ServiceWorkerUnregister{ScopeURL: reg.Scope}.Call(cdp)
		settled = func(r Registration) bool { return r.Deleted }
	case "skip_waiting":
		if !hasStatus(reg, "installed") {
			return reg, Errorf(CodeInvalidInput, "no version of %s is waiting (installed) to activate", reg.Scope)
		}
		err = proto.ServiceWorkerSkipWaiting{ScopeURL: reg.Scope}.Call(cdp)
		settled = func(r Registration) bool { return !hasStatus(r, "installed", "activating") }
	case "stop":
		for _, v := range reg.Versions {
			if v.RunningStatus != "stopped" && err == nil {
				err = proto.ServiceWorkerStopWorker{VersionID: v.ID}.Call(cdp)
			}
		}
		settled = func(r Registration) bool { return !slices.ContainsFunc(r.Versions, isRunning) }
	default:
		return reg, Errorf(CodeInvalidInput, "unknown service worker action %q", action)
	}
	if err != nil {
		return reg, err
	}
	wait, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	waitErr := c.live.sw.waitFor(wait, func(regs []Registration) bool {
		for _, r := range regs {
			if r.ID == reg.ID {
				return settled(r)
			}
		}
		return action == "unregister"
	})
	for _, r := range c.ServiceWorkers(ctx) {
		if r.ID == reg.ID {
			reg = r
		}
	}
	if errors.Is(waitErr, context.DeadlineExceeded) && ctx.Err() == nil {
		if action == "update" {
			return reg, nil // the script was unchanged: Chrome keeps the current version
		}
		return reg, &Error{Code: CodeTimeout, Message: fmt.Sprintf("%s of %s did not take effect within %s", action, reg.Scope, settleTimeout), cause: waitErr}
	}
	return reg, waitErr
}

func hasStatus(r Registration, statuses ...string) bool {
	return slices.ContainsFunc(r.Versions, func(v Version) bool { return slices.Contains(statuses, v.Status) })
}

func isRunning(v Version) bool { return v.RunningStatus != "stopped" }

func sameVersions(a, b []Version) bool {
	return slices.EqualFunc(a, b, func(x, y Version) bool { return x.ID == y.ID && x.Status == y.Status })
}

// Cache is one Cache Storage cache of the page's origin.
type Cache struct {
	Name    string   `json:"name"`
	Entries int      `json:"entries"`
	URLs    []string `json:"urls"`
}

// Caches lists the Cache Storage of the page's storage key with up to
// maxURLs entry URLs per cache.
func (c *Call) Caches(ctx context.Context, p *Page, maxURLs int) ([]Cache, error) {
	cdp := p.cdp(ctx)
	names := proto.CacheStorageRequestCacheNames{}
	if key, err := (proto.StorageGetStorageKeyForFrame{FrameID: proto.PageFrameID(p.TargetID)}).Call(cdp); err == nil {
		names.StorageKey = string(key.StorageKey)
	} else if u, err := url.Parse(p.URL()); err == nil {
		names.SecurityOrigin = u.Scheme + "://" + u.Host
	}
	res, err := names.Call(cdp)
	if err != nil {
		return nil, fmt.Errorf("list caches: %w", err)
	}
	var out []Cache
	for _, cache := range res.Caches {
		skip, size := 0, maxURLs
		entries, err := proto.CacheStorageRequestEntries{CacheID: cache.CacheID, SkipCount: &skip, PageSize: &size}.Call(cdp)
		if err != nil {
			return nil, fmt.Errorf("read cache %s: %w", cache.CacheName, err)
		}
		info := Cache{Name: cache.CacheName, Entries: int(entries.ReturnCount)}
		for _, e := range entries.CacheDataEntries {
			info.URLs = append(info.URLs, e.RequestURL)
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// NetworkSources returns the requests of the page's current document and,
// with includeWorkers, the requests of its workers and frames and of the
// service workers whose scope covers it (since each started). Headless
// Chrome's own favicon fetches are left out.
func (c *Call) NetworkSources(p *Page, includeWorkers bool) []Request {
	p.mu.Lock()
	loader := p.loader
	pageURL := p.url
	p.mu.Unlock()
	reqs := p.net.list(func(r *Request) bool { return r.loaderID == loader && !isFavicon(r) })
	if !includeWorkers || c.live == nil {
		return reqs
	}
	for _, w := range c.live.attachedWorkers() {
		if w.Owner == p.TargetID || w.Type == TypeServiceWorker && c.live.serves(w, pageURL) {
			reqs = append(reqs, w.net.list(func(r *Request) bool { return !isFavicon(r) })...)
		}
	}
	sort.SliceStable(reqs, func(i, j int) bool { return reqs[i].Started.Before(reqs[j].Started) })
	return reqs
}

func sameOrigin(x, y string) bool {
	a, errA := url.Parse(x)
	b, errB := url.Parse(y)
	return errA == nil && errB == nil && a.Scheme == b.Scheme && a.Host == b.Host
}

func isFavicon(r *Request) bool {
	u, err := url.Parse(r.URL)
	return err == nil && u.Path == "/favicon.ico" && r.Type != "Image"
}

package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-rod/rod/lib/cdp"
	"github.com/go-rod/rod/lib/proto"
)

// WaitUntil names the lifecycle point a navigation waits for.
type WaitUntil string

// The lifecycle points; networkidle is 500 ms without network connections.
const (
	WaitLoad             WaitUntil = "load"
	WaitDOMContentLoaded WaitUntil = "domcontentloaded"
	WaitNetworkIdle      WaitUntil = "networkidle"
)

// WaitUntilValues lists the accepted WaitUntil values.
var WaitUntilValues = []string{string(WaitLoad), string(WaitDOMContentLoaded), string(WaitNetworkIdle)}

// lifecycleEvent maps a WaitUntil to the Page.lifecycleEvent name Chrome sends.
var lifecycleEvent = map[WaitUntil]string{
	WaitLoad:             "load",
	WaitDOMContentLoaded: "DOMContentLoaded",
	WaitNetworkIdle:      "networkIdle",
}

// Navigation is the outcome of a navigation or reload.
type Navigation struct {
	URL    string
	Status int // HTTP status of the document; 0 when there was no HTTP response
	Title  string
	// SameDocument is set for a fragment or history navigation that loaded nothing.
	SameDocument bool
	Dialogs      []Dialog
}

// Navigate loads url in the page and waits until the document reaches until.
// A network failure is NAVIGATION_FAILED with Chrome's net:: error; not
// reaching until before ctx ends is the caller's timeout.
func (p *Page) Navigate(ctx context.Context, url string, until WaitUntil) (*Navigation, error) {
	res, err := proto.PageNavigate{URL: url}.Call(p.cdp(ctx))
	var protocolErr *cdp.Error
	if errors.As(err, &protocolErr) && strings.Contains(protocolErr.Message, "invalid URL") {
		return nil, Errorf(CodeInvalidInput, "url %q: %s", url, protocolErr.Message)
	}
	if err != nil {
		return nil, err
	}
	if res.ErrorText != "" {
		return nil, &Error{Code: CodeNavigationFailed, Message: res.ErrorText, Details: []string{"URL: " + url}}
	}
	if res.LoaderID == "" {
		return p.finish(ctx, "", true)
	}
	loader := string(res.LoaderID)
	if err := p.waitLifecycle(ctx, func() string { return loader }, until); err != nil {
		return nil, err
	}
	return p.finish(ctx, loader, false)
}

// Reload reloads the page, bypassing the cache when ignoreCache is set, and
// waits until the new document reaches until.
func (p *Page) Reload(ctx context.Context, ignoreCache bool, until WaitUntil) (*Navigation, error) {
	p.mu.Lock()
	before := p.loader
	p.mu.Unlock()
	if err := (proto.PageReload{IgnoreCache: ignoreCache}).Call(p.cdp(ctx)); err != nil {
		return nil, err
	}
	// Reload returns no loader id: wait for the main frame's next document.
	next := func() string {
		if p.loader == before {
			return ""
		}
		return p.loader
	}
	if err := p.waitLifecycle(ctx, next, until); err != nil {
		return nil, err
	}
	p.mu.Lock()
	loader := p.loader
	p.mu.Unlock()
	return p.finish(ctx, loader, false)
}

// waitLifecycle waits until the document named by loader (evaluated under the
// page's lock; "" means not known yet) or a later document that replaced it
// reaches until.
func (p *Page) waitLifecycle(ctx context.Context, loader func() string, until WaitUntil) error {
	name := lifecycleEvent[until]
	err := p.waitFor(ctx, func() bool {
		id := loader()
		if id == "" {
			return false
		}
		start := slices.IndexFunc(p.loaders, func(l *loaderState) bool { return l.id == id })
		if start < 0 {
			return false
		}
		for _, l := range p.loaders[start:] {
			if l.lifecycle[name] && (l.id == id || l.id == p.loader) {
				return true
			}
		}
		return false
	})
	if errors.Is(err, context.DeadlineExceeded) {
		return &Error{Code: CodeTimeout, Message: fmt.Sprintf("the page did not reach %q in time", until),
			Details: []string{"Current URL: " + p.URL()}, cause: err}
	}
	return err
}

// finish collects the facts of a completed navigation.
func (p *Page) finish(ctx context.Context, loader string, sameDocument bool) (*Navigation, error) {
	title, err := p.evalString(ctx, "document.title")
	if err != nil {
		return nil, err
	}
	p.setTitle(title)
	nav := &Navigation{URL: p.URL(), Title: title, SameDocument: sameDocument, Dialogs: p.takeDialogs()}
	p.mu.Lock()
	for _, l := range p.loaders {
		if l.id == loader {
			nav.Status = l.status
		}
	}
	p.mu.Unlock()
	return nav, nil
}

// evalString evaluates a side-effect-free expression that yields a string.
func (p *Page) evalString(ctx context.Context, expr string) (string, error) {
	res, err := proto.RuntimeEvaluate{Expression: expr, ReturnByValue: true}.Call(p.cdp(ctx))
	if err != nil {
		return "", err
	}
	if res.ExceptionDetails != nil || res.Result == nil {
		return "", nil
	}
	return res.Result.Value.Str(), nil
}

package session

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-rod/rod/lib/proto"
)

// Page resolves a page for this call: id is a short id ("p2"), a CDP target
// id, or empty for the current page (a new one is opened when none is left).
// A page whose renderer crashed is reloaded first, with a notice, unless the
// call navigates anyway.
func (c *Call) Page(ctx context.Context, id string) (*Page, error) {
	p, err := c.lookup(id)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return c.NewPage(ctx)
	}
	if err := p.waitReady(ctx); err != nil {
		return nil, err
	}
	if p.isCrashed() && !c.opts.Navigates {
		if _, err := p.Reload(ctx, false, WaitLoad); err != nil {
			return nil, fmt.Errorf("reload %s after its renderer crashed: %w", p.ID, err)
		}
		p.update(func() { p.crashed = false })
		c.notices = append(c.notices, fmt.Sprintf("NOTICE: the renderer of %s crashed; reloaded it (%s). Chrome itself kept running.", p.ID, p.URL()))
	}
	return p, nil
}

// lookup finds a registered page; nil, nil means "no current page".
func (c *Call) lookup(id string) (*Page, error) {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	c.adoptLocked()
	if id == "" {
		cur := s.currentIDLocked()
		if cur == "" {
			return nil, nil
		}
		return s.pages[cur], nil
	}
	for pid, p := range s.pages {
		if (pid == id || p.TargetID == id) && !p.isClosed() {
			return p, nil
		}
	}
	return nil, &Error{Code: CodeTargetNotFound, Message: fmt.Sprintf("no open page %q", id),
		Details: []string{"Open pages: " + openIDsLocked(s)}}
}

// adoptLocked registers pages the browser opened by itself (popups,
// window.open) so that they get short ids; s.mu is held.
func (c *Call) adoptLocked() {
	if c.live == nil || c.live != c.s.live || c.live.Gone() {
		return // a browser replaced under this call: its pages are not the session's
	}
	known := map[*Page]bool{}
	for id, p := range c.s.pages {
		if p.isClosed() {
			delete(c.s.pages, id)
		}
		known[p] = true
	}
	for _, p := range c.live.attachedPages() {
		if !known[p] {
			p.ID = c.s.newPageIDLocked()
			c.s.pages[p.ID] = p
			c.s.current = append([]string{p.ID}, c.s.current...)
		}
	}
}

func openIDsLocked(s *Session) string {
	var ids []string
	for _, id := range sortedIDs(s.pages) {
		if !s.pages[id].isClosed() {
			ids = append(ids, id)
		}
	}
	return joinOrNone(ids)
}

// joinOrNone lists ids for a message: "p1, p2", or "none".
func joinOrNone(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}

// NewPage opens a blank page and makes it current.
func (c *Call) NewPage(ctx context.Context) (*Page, error) {
	p, err := c.live.newPage(ctx)
	if err != nil {
		return nil, err
	}
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	c.s.registerLocked(p, "")
	return p, nil
}

// Select makes a page current.
func (c *Call) Select(ctx context.Context, id string) (*Page, error) {
	p, err := c.Page(ctx, id)
	if err != nil {
		return nil, err
	}
	c.MakeCurrent(p)
	return p, nil
}

// MakeCurrent makes p the current page, as navigating it does.
func (c *Call) MakeCurrent(p *Page) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	c.s.touchLocked(p.ID)
}

// ClosePage closes a page and returns the id of the page that is current afterwards ("" for none).
func (c *Call) ClosePage(ctx context.Context, id string) (closed *Page, current string, err error) {
	p, err := c.lookup(id)
	if err != nil {
		return nil, "", err
	}
	if p == nil {
		return nil, "", Errorf(CodeTargetNotFound, "no page is open")
	}
	if err := c.live.closePage(ctx, p); err != nil {
		return nil, "", err
	}
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	delete(c.s.pages, p.ID)
	return p, c.s.currentIDLocked(), nil
}

// PageInfo describes one open page.
type PageInfo struct {
	ID       string `json:"id"`
	TargetID string `json:"targetId"`
	URL      string `json:"url"`
	Title    string `json:"title"`
	Current  bool   `json:"current"`
}

// Pages lists the open pages in id order, with URLs and titles fresh from the browser.
func (c *Call) Pages(ctx context.Context) ([]PageInfo, error) {
	if c.live == nil {
		return nil, nil
	}
	targets, err := proto.TargetGetTargets{}.Call(c.live.Conn.Session(ctx, ""))
	if err != nil {
		return nil, err
	}
	info := map[string]*proto.TargetTargetInfo{}
	for _, t := range targets.TargetInfos {
		info[string(t.TargetID)] = t
	}
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	c.adoptLocked()
	current := s.currentIDLocked()
	var list []PageInfo
	for _, id := range sortedIDs(s.pages) {
		p := s.pages[id]
		t, ok := info[p.TargetID]
		if p.isClosed() || !ok {
			continue
		}
		list = append(list, PageInfo{ID: id, TargetID: p.TargetID, URL: t.URL, Title: t.Title, Current: id == current})
	}
	return list, nil
}

// Running reports whether the call has a browser.
func (c *Call) Running() bool { return c.live != nil }

// Status describes the session's browser.
type Status struct {
	Running      bool
	PID          int
	Version      string
	Uptime       time.Duration
	IdleTimeout  time.Duration
	Launches     int
	Relaunches   int
	ProfileDir   string
	Pages        int
	CurrentPage  string
	CallsRunning int // other calls in flight besides this one
	Offline      bool
}

// Status reports on the browser without starting one.
func (c *Call) Status() Status {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{
		Offline:      s.settings.isOffline(),
		IdleTimeout:  s.cfg.IdleTimeout,
		Launches:     s.launches,
		Relaunches:   s.relaunches,
		CallsRunning: s.inFlight - 1,
	}
	if s.live == nil {
		return st
	}
	c.adoptLocked()
	st.Running = true
	st.PID = s.live.PID()
	st.Version = s.live.Version
	st.Uptime = time.Since(s.live.Started)
	if s.live.Profile != nil {
		st.ProfileDir = s.live.Profile.Root
	}
	st.CurrentPage = s.currentIDLocked()
	for _, p := range s.pages {
		if !p.isClosed() {
			st.Pages++
		}
	}
	return st
}

package session

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/chromekeeper/chromekeeper/browser"
)

// DefaultIdleTimeout is how long a browser may sit without a call before it is closed.
const DefaultIdleTimeout = 5 * time.Minute

const (
	// probeAfterIdle is the pause after which a call first probes the browser:
	// a hung browser looks alive (process and pipe are fine) until asked.
	probeAfterIdle = 5 * time.Second
	// crashWindow and freshProfileAfter: this many crashes within the window
	// and the next relaunch starts on a fresh profile, in case the profile
	// itself is what makes Chrome crash.
	crashWindow       = time.Minute
	freshProfileAfter = 4
	// restoreTimeout bounds reloading the current page after a relaunch.
	restoreTimeout = 15 * time.Second
)

// Config configures the sessions of a Manager.
type Config struct {
	// Starter obtains browsers: a *browser.Launcher, or an attacher.
	Starter browser.Starter
	// IdleTimeout closes a browser after this long without a call (default 5m).
	IdleTimeout time.Duration
	// HMRPatterns recognize hot updates in console lines (see CompileHMRPatterns).
	HMRPatterns []*regexp.Regexp
	// BufferSize and BufferTTL bound each page's event buffer.
	BufferSize int
	BufferTTL  time.Duration
	// NoRedact shows sensitive header values instead of ***.
	NoRedact bool
	// OnPageEvents is called, at most a few times a second per page, when a
	// page's event buffer grows; it must not block.
	OnPageEvents func(sessionID, pageID string)
	// MaxBrowsers bounds the conversations that have a browser at once
	// (--max-sessions); 0 means no limit.
	MaxBrowsers int
	Log         *zap.Logger
}

// Session is one conversation's browser: started by the first call that needs
// it, healed when it dies, closed after IdleTimeout without calls. Its
// methods are safe for concurrent use.
type Session struct {
	ID  string
	cfg Config
	log *zap.Logger

	// lifeMu serializes what replaces the browser: launch, heal, reap, close.
	// It is taken before mu, never after.
	lifeMu sync.Mutex

	mu          sync.Mutex
	live        *liveBrowser
	pages       map[string]*Page // by short id
	current     []string         // page ids, the current page last
	nextPage    int
	inFlight    int
	lastCallEnd time.Time
	reaper      *time.Timer
	launches    int
	relaunches  int
	crashes     []time.Time
	released    string // why the last browser was closed, told by the next launch
	ended       bool
	settings    settings
	counters    *counters // shared with the Manager's other sessions
}

func newSession(id string, cfg Config, shared *counters) *Session {
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	if cfg.HMRPatterns == nil {
		cfg.HMRPatterns, _ = CompileHMRPatterns(nil)
	}
	cfg.Log = cfg.Log.With(zap.String("session", id))
	if shared == nil {
		shared = &counters{max: int64(cfg.MaxBrowsers)}
	}
	return &Session{ID: id, cfg: cfg, log: cfg.Log, pages: map[string]*Page{}, counters: shared}
}

// CallOptions tell Do what kind of call it runs.
type CallOptions struct {
	// Navigates marks a call that loads a document itself: after a crash its
	// page is not first restored to the last URL.
	Navigates bool
	// NoLaunch marks a call that must not start a browser, such as a status query.
	NoLaunch bool
}

// Call is the context of one tool call: the browser it runs on and the
// notices (relaunches, reloads) the answer must begin with.
type Call struct {
	s       *Session
	opts    CallOptions
	live    *liveBrowser
	notices []string
}

// Do runs op as one tool call. It starts the browser if needed, or heals a
// dead or hung one, and if the browser dies or hangs under op it heals it and
// runs op once more. The session's idle clock stops while the call runs.
// It returns the NOTICE lines for the answer and op's error.
func (s *Session) Do(ctx context.Context, opts CallOptions, op func(ctx context.Context, c *Call) error) ([]string, error) {
	idle := s.begin()
	defer s.end()
	c := &Call{s: s, opts: opts}
	for attempt := 0; ; attempt++ {
		if !opts.NoLaunch || s.running() {
			live, err := s.ensure(ctx, c, idle)
			if err != nil {
				return c.notices, err
			}
			c.live = live
		}
		err := op(ctx, c)
		if err == nil || attempt > 0 || c.live == nil || ctx.Err() != nil || !c.live.failedUnder(ctx, err) {
			return c.notices, err
		}
		s.log.Info("browser failed under a call; healing and retrying", zap.Error(err))
	}
}

// begin marks a call in flight and stops the idle clock. It returns how long
// the session had been idle.
func (s *Session) begin() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight++
	if s.reaper != nil {
		s.reaper.Stop()
	}
	if s.lastCallEnd.IsZero() {
		return 0
	}
	return time.Since(s.lastCallEnd)
}

// end marks a call finished; the last one out restarts the idle clock.
func (s *Session) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight--
	s.lastCallEnd = time.Now()
	if s.inFlight > 0 || s.live == nil || s.ended {
		return
	}
	if s.reaper == nil {
		s.reaper = time.AfterFunc(s.cfg.IdleTimeout, s.reapIfIdle)
	} else {
		s.reaper.Reset(s.cfg.IdleTimeout)
	}
}

func (s *Session) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live != nil
}

// reapIfIdle closes the browser when no call is in flight and none has ended
// within IdleTimeout. A call that began in between keeps it.
func (s *Session) reapIfIdle() {
	s.lifeMu.Lock()
	defer s.lifeMu.Unlock()
	s.mu.Lock()
	idle := s.inFlight == 0 && s.live != nil && time.Since(s.lastCallEnd) >= s.cfg.IdleTimeout
	s.mu.Unlock()
	if idle {
		s.counters.reaps.Add(1)
		s.releaseLocked(fmt.Sprintf("was closed after %s without calls", s.cfg.IdleTimeout))
	}
}

// Release closes the browser now and removes its profile; the next call
// starts a fresh one. why completes "the previous Chrome …" in that call's notice.
func (s *Session) Release(why string) {
	s.lifeMu.Lock()
	defer s.lifeMu.Unlock()
	s.releaseLocked(why)
}

func (s *Session) releaseLocked(why string) {
	s.mu.Lock()
	live := s.live
	s.live = nil
	s.pages = map[string]*Page{}
	s.current = nil
	if live != nil {
		s.released = why
	}
	s.mu.Unlock()
	if live == nil {
		return
	}
	s.counters.release()
	if err := live.Close(); err != nil {
		s.log.Warn("close browser", zap.Error(err))
	}
	s.log.Info("browser closed", zap.Int("pid", live.PID()), zap.String("why", why))
}

// End closes the browser for good: the conversation is over.
func (s *Session) End() {
	s.lifeMu.Lock()
	defer s.lifeMu.Unlock()
	s.mu.Lock()
	s.ended = true
	if s.reaper != nil {
		s.reaper.Stop()
	}
	s.mu.Unlock()
	s.releaseLocked("")
}

// ensure returns a live, answering browser: the current one, a healed one, or
// a newly launched one. idle is how long the session waited before this call.
func (s *Session) ensure(ctx context.Context, c *Call, idle time.Duration) (*liveBrowser, error) {
	s.lifeMu.Lock()
	defer s.lifeMu.Unlock()
	s.mu.Lock()
	live, ended := s.live, s.ended
	s.mu.Unlock()
	if ended {
		return nil, Errorf(CodeInternal, "the conversation has ended")
	}
	if live == nil {
		return s.launchLocked(ctx, c)
	}
	if !live.Gone() {
		if idle < probeAfterIdle {
			return live, nil
		}
		err := live.Probe(ctx)
		if err == nil {
			return live, nil
		}
		return s.healLocked(ctx, c, live, "stopped answering ("+err.Error()+")")
	}
	return s.healLocked(ctx, c, live, live.failure())
}

// launchLocked starts a browser on a fresh profile; lifeMu is held.
func (s *Session) launchLocked(ctx context.Context, c *Call) (*liveBrowser, error) {
	if err := s.counters.acquire(); err != nil {
		return nil, err
	}
	live, page, err := s.startWithPage(ctx, nil)
	if err != nil {
		s.counters.release()
		return nil, err
	}
	s.counters.launches.Add(1)
	s.mu.Lock()
	s.live = live
	s.launches++
	s.registerLocked(page, "")
	released := s.released
	s.released = ""
	s.mu.Unlock()
	if released != "" {
		notice := fmt.Sprintf("NOTICE: the previous Chrome %s; started a new one with a fresh profile (its pages, cookies and storage are gone).", released)
		if live.Attached() {
			notice = fmt.Sprintf("NOTICE: the previous connection to Chrome %s; attached again (the user's tabs were never closed; page ids start anew).", released)
		}
		if s.settings.isOffline() {
			notice += " Offline mode is still on."
		}
		c.notices = append(c.notices, notice)
	}
	s.log.Info("browser started", zap.Int("pid", live.PID()), zap.String("version", live.Version))
	return live, nil
}

// startWithPage starts a browser (on profile, or a fresh one when nil) and
// returns it with its first page.
func (s *Session) startWithPage(ctx context.Context, profile *browser.Profile) (*liveBrowser, *Page, error) {
	live, err := startLive(ctx, s.cfg, profile, &s.settings, s.observeConfig())
	if err != nil {
		return nil, nil, err
	}
	page, err := live.initialPage(ctx)
	if err != nil {
		live.abandon(profile)
		return nil, nil, err
	}
	return live, page, nil
}

// healLocked replaces a dead or hung browser, on the same profile unless
// crashes repeat, and restores the current page; lifeMu is held.
func (s *Session) healLocked(ctx context.Context, c *Call, dead *liveBrowser, what string) (*liveBrowser, error) {
	dead.Kill()
	s.mu.Lock()
	s.crashes = append(pruneBefore(s.crashes, time.Now().Add(-crashWindow)), time.Now())
	recent := len(s.crashes)
	restoreID, restoreURL, lost := s.currentAndLostLocked()
	s.mu.Unlock()

	if delay := backoff(recent); delay > 0 {
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	profile, profileNote := dead.Profile, "on the same profile: cookies, storage, caches and service workers kept"
	if recent >= freshProfileAfter && profile != nil && !dead.Attached() {
		_ = profile.Remove()
		profile, profileNote = nil, fmt.Sprintf("on a fresh profile after %d crashes within %s", recent, crashWindow)
	}
	live, page, err := s.startWithPage(ctx, profile)
	if err != nil && profile != nil {
		s.log.Warn("relaunch on the same profile failed; trying a fresh one", zap.Error(err))
		_ = profile.Remove()
		profileNote = "on a fresh profile, because the old one would not start"
		live, page, err = s.startWithPage(ctx, nil)
	}
	if err != nil {
		s.mu.Lock()
		s.live, s.pages, s.current = nil, map[string]*Page{}, nil
		s.mu.Unlock()
		s.counters.release() // the dead browser's slot
		return nil, err
	}
	s.counters.heals.Add(1)
	s.mu.Lock()
	s.live = live
	s.relaunches++
	relaunches := s.relaunches
	s.pages, s.current = map[string]*Page{}, nil
	s.registerLocked(page, restoreID)
	s.mu.Unlock()

	notice := fmt.Sprintf("NOTICE: Chrome %s; relaunched it (relaunch %d) %s.", what, relaunches, profileNote)
	if live.Attached() {
		notice = fmt.Sprintf("NOTICE: the connection to Chrome %s; reattached (reconnection %d). The user's tabs were not touched.", what, relaunches)
	}
	if s.settings.isOffline() {
		notice += " Offline mode re-applied."
	}
	if restoreURL != "" && !c.opts.Navigates && !live.Attached() {
		restoreCtx, cancel := context.WithTimeout(ctx, restoreTimeout)
		_, err := page.Navigate(restoreCtx, restoreURL, WaitLoad)
		cancel()
		if err != nil {
			notice += fmt.Sprintf(" Restoring %s to %s failed: %s.", page.ID, restoreURL, AsError(err).Message)
		} else {
			notice += fmt.Sprintf(" %s restored to %s.", page.ID, restoreURL)
		}
	}
	if len(lost) > 0 {
		notice += " Lost: " + strings.Join(lost, ", ") + "; buffered events of the old browser are gone."
	}
	c.notices = append(c.notices, notice)
	s.log.Warn("browser healed", zap.String("what", what), zap.Int("pid", live.PID()))
	return live, nil
}

// observeConfig is what the pages of this session's browsers need.
func (s *Session) observeConfig() observeConfig {
	return observeConfig{
		hmr: s.cfg.HMRPatterns, bufferSize: s.cfg.BufferSize, bufferTTL: s.cfg.BufferTTL, redact: !s.cfg.NoRedact,
		notify: func(p *Page) {
			s.mu.Lock()
			id := p.ID
			s.mu.Unlock()
			if s.cfg.OnPageEvents != nil && id != "" {
				s.cfg.OnPageEvents(s.ID, id)
			}
		},
	}
}

// currentAndLostLocked describes the pages of a browser about to be replaced:
// the current page's id and restorable URL, and the others as "p2 (url)".
func (s *Session) currentAndLostLocked() (string, string, []string) {
	id := s.currentIDLocked()
	var restoreURL string
	var lost []string
	for _, pid := range sortedIDs(s.pages) {
		p := s.pages[pid]
		if pid == id {
			if u := p.URL(); restorable(u) {
				restoreURL = u
			}
			continue
		}
		if !p.isClosed() {
			lost = append(lost, fmt.Sprintf("%s (%s)", pid, p.URL()))
		}
	}
	return id, restoreURL, lost
}

// restorable reports whether a URL is worth loading again after a relaunch.
func restorable(u string) bool {
	return u != "" && u != "about:blank" && !strings.HasPrefix(u, "chrome-error:")
}

// backoff is the pause before a relaunch, growing with recent crashes.
func backoff(recentCrashes int) time.Duration {
	if recentCrashes <= 2 {
		return 0
	}
	d := 250 * time.Millisecond << (recentCrashes - 3)
	return min(d, 2*time.Second)
}

func pruneBefore(times []time.Time, cutoff time.Time) []time.Time {
	kept := times[:0]
	for _, t := range times {
		if t.After(cutoff) {
			kept = append(kept, t)
		}
	}
	return kept
}

// registerLocked gives a page its short id (a new one when id is empty) and
// makes it current; s.mu is held. A page registered already (adopted by a
// concurrent call, say) keeps its id: ids never change.
func (s *Session) registerLocked(p *Page, id string) {
	if p.ID != "" && s.pages[p.ID] == p {
		s.touchLocked(p.ID)
		return
	}
	if id == "" {
		id = s.newPageIDLocked()
	}
	p.ID = id
	s.pages[id] = p
	s.touchLocked(id)
}

// newPageIDLocked mints the next short page id: p1, p2…; s.mu is held.
func (s *Session) newPageIDLocked() string {
	s.nextPage++
	return "p" + strconv.Itoa(s.nextPage)
}

// touchLocked makes a page current; s.mu is held.
func (s *Session) touchLocked(id string) {
	for i, v := range s.current {
		if v == id {
			s.current = append(s.current[:i], s.current[i+1:]...)
			break
		}
	}
	s.current = append(s.current, id)
}

// currentIDLocked returns the current page's id, dropping closed pages; s.mu is held.
func (s *Session) currentIDLocked() string {
	for len(s.current) > 0 {
		id := s.current[len(s.current)-1]
		if p, ok := s.pages[id]; ok && !p.isClosed() {
			return id
		}
		s.current = s.current[:len(s.current)-1]
		delete(s.pages, id)
	}
	return ""
}

// sortedIDs orders page ids by number: p2 before p10.
func sortedIDs(pages map[string]*Page) []string {
	ids := make([]string, 0, len(pages))
	for id := range pages {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		a, _ := strconv.Atoi(strings.TrimPrefix(ids[i], "p"))
		b, _ := strconv.Atoi(strings.TrimPrefix(ids[j], "p"))
		return a < b
	})
	return ids
}

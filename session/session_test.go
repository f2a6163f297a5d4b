package session

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-rod/rod/lib/proto"

	"github.com/chromekeeper/chromekeeper/browser"
	"github.com/chromekeeper/chromekeeper/internal/leakcheck"
)

func TestMain(m *testing.M) {
	browser.RunGuardIfAsked()
	os.Exit(leakcheck.Run(m, browser.StopGuard))
}

func newTestSession(t *testing.T, idle time.Duration) *Session {
	t.Helper()
	s := newSession("test", Config{Starter: &browser.Launcher{ChromePath: os.Getenv("CHROME_PATH")}, IdleTimeout: idle}, nil)
	t.Cleanup(s.End)
	return s
}

// evalIn runs one eval call and returns its value and notices.
func evalIn(t *testing.T, s *Session, expr string) (any, []string) {
	t.Helper()
	var value any
	notices, err := s.Do(context.Background(), CallOptions{}, func(ctx context.Context, c *Call) error {
		p, err := c.Page(ctx, "")
		if err != nil {
			return err
		}
		res, err := p.Eval(ctx, expr, true, 10*time.Second)
		if err != nil {
			return err
		}
		value = res.Value
		return nil
	})
	if err != nil {
		t.Fatalf("eval %q: %v", expr, err)
	}
	return value, notices
}

func TestRendererCrashReloadsThePageWithoutRelaunchingChrome(t *testing.T) {
	s := newTestSession(t, time.Minute)
	evalIn(t, s, `document.title = "before"; location.hash = "#kept"; 1`)
	var pid int
	_, err := s.Do(context.Background(), CallOptions{}, func(ctx context.Context, c *Call) error {
		pid = c.live.PID()
		p, err := c.Page(ctx, "")
		if err != nil {
			return err
		}
		// Page.crash kills only this page's renderer; it never answers.
		crashCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_ = proto.PageCrash{}.Call(p.cdp(crashCtx))
		return p.waitFor(ctx, func() bool { return p.crashed })
	})
	if err != nil {
		t.Fatal(err)
	}
	value, notices := evalIn(t, s, "location.hash")
	if value != "#kept" {
		t.Errorf("after the renderer crash, location.hash = %v, want the page reloaded at #kept", value)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "renderer of p1 crashed") {
		t.Errorf("notices = %q, want one about the renderer crash", notices)
	}
	if st := s.status(t); st.PID != pid || st.Relaunches != 0 {
		t.Errorf("Chrome was relaunched for a renderer crash: pid %d→%d, relaunches %d", pid, st.PID, st.Relaunches)
	}
}

func TestReaperWaitsForCallsInFlight(t *testing.T) {
	s := newTestSession(t, 300*time.Millisecond)
	evalIn(t, s, "1")
	var wg sync.WaitGroup
	wg.Go(func() { evalIn(t, s, "new Promise(r => setTimeout(r, 1200))") })
	time.Sleep(900 * time.Millisecond)
	if !s.running() {
		t.Fatal("the browser was reaped while a call was in flight")
	}
	wg.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for s.running() {
		if time.Now().After(deadline) {
			t.Fatal("the browser was not reaped after the call ended and the idle timeout passed")
		}
		time.Sleep(50 * time.Millisecond)
	}
	_, notices := evalIn(t, s, "1")
	if len(notices) != 1 || !strings.Contains(notices[0], "closed after 300ms without calls") {
		t.Errorf("notices after reap = %q", notices)
	}
}

func TestConcurrentCallsShareOneLaunch(t *testing.T) {
	s := newTestSession(t, time.Minute)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { evalIn(t, s, "1+1") })
	}
	wg.Wait()
	if st := s.status(t); st.Launches != 1 || st.Pages != 1 {
		t.Errorf("4 concurrent first calls: %d launches, %d pages; want 1 and 1", st.Launches, st.Pages)
	}
}

func TestStatusDoesNotLaunch(t *testing.T) {
	s := newTestSession(t, time.Minute)
	if st := s.status(t); st.Running || st.Launches != 0 {
		t.Errorf("status launched Chrome: %+v", st)
	}
}

func (s *Session) status(t *testing.T) Status {
	t.Helper()
	var st Status
	if _, err := s.Do(context.Background(), CallOptions{NoLaunch: true}, func(ctx context.Context, c *Call) error {
		st = c.Status()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestBackoffGrowsAndIsCapped(t *testing.T) {
	for _, tc := range []struct {
		crashes int
		want    time.Duration
	}{{1, 0}, {2, 0}, {3, 250 * time.Millisecond}, {4, 500 * time.Millisecond}, {5, time.Second}, {9, 2 * time.Second}} {
		if got := backoff(tc.crashes); got != tc.want {
			t.Errorf("backoff(%d) = %s, want %s", tc.crashes, got, tc.want)
		}
	}
}

func TestSortedIDsIsNumeric(t *testing.T) {
	pages := map[string]*Page{"p10": nil, "p2": nil, "p1": nil}
	if got := strings.Join(sortedIDs(pages), ","); got != "p1,p2,p10" {
		t.Errorf("sortedIDs = %s", got)
	}
}

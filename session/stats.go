package session

import (
	"fmt"
	"sync/atomic"
)

// Stats counts what the sessions of a Manager did, for /metrics.
type Stats struct {
	Conversations   int64 // sessions known now
	BrowsersRunning int64
	Launches        int64
	Heals           int64 // relaunches after a crash or hang
	Reaps           int64 // browsers closed by the idle reaper
}

// counters are the live values behind Stats, shared by a Manager's sessions.
type counters struct {
	browsers, launches, heals, reaps atomic.Int64
	max                              int64 // browsers allowed at once; 0: no limit
}

// acquire takes a browser slot, or fails with SESSION_LIMIT.
func (c *counters) acquire() error {
	for {
		n := c.browsers.Load()
		if c.max > 0 && n >= c.max {
			return &Error{Code: CodeSessionLimit,
				Message: fmt.Sprintf("%d conversations already have a browser, the limit (--max-sessions %d)", n, c.max),
				Details: []string{"Hint: end a conversation, close one with browser_session close, or let idle ones be reaped"}}
		}
		if c.browsers.CompareAndSwap(n, n+1) {
			return nil
		}
	}
}

func (c *counters) release() { c.browsers.Add(-1) }

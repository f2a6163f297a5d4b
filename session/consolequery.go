package session

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// consoleQueryMark is where this conversation's previous console query of a
// page left off.
type consoleQueryMark struct {
	epoch, hmr int
	seq        int64
}

// Delta lines of a console answer, relative to the previous query.
const (
	DeltaReloaded   = "[PAGE RELOADED since your last query]"
	DeltaNavigated  = "[PAGE NAVIGATED since your last query]"
	DeltaHMR        = "[HMR UPDATE occurred since your last query]"
	DeltaNone       = "[No navigation or HMR changes since your last query]"
	DeltaFirstQuery = "[First console query of this page in this conversation]"
)

// ConsoleQuery filters a console query. Zero values select everything of the
// current epoch.
type ConsoleQuery struct {
	Levels                []string // log, info, warn, error, debug
	Pattern               *regexp.Regexp
	Since                 time.Time
	Limit                 int    // newest N after folding
	IncludePreviousEpochs bool   // all epochs, each message tagged
	Source                string // page, worker, all, or a worker id
}

// ConsoleReport is a page's console with its freshness.
type ConsoleReport struct {
	Page, URL      string
	Epoch          int
	EpochAge       time.Duration
	EpochCause     string
	HMRUpdates     int
	LastHMRAge     time.Duration // zero when there was none
	SPANavigations int
	LastSPA        string
	Delta          string
	NewSinceQuery  int64
	Matched        int // messages that pass the filters, before folding and limit
	Older          int // messages of earlier epochs not shown
	Dropped        int64
	Messages       []ConsoleMessage
}

// ConsoleLogs answers a console query on a page and records it as this
// conversation's last query of the page, for the next delta.
func (c *Call) ConsoleLogs(p *Page, q ConsoleQuery) ConsoleReport {
	msgs, dropped := p.console.all()
	p.mu.Lock()
	r := ConsoleReport{
		Page: p.ID, URL: p.url, Epoch: p.epoch, EpochAge: time.Since(p.epochStart), EpochCause: p.epochCause,
		HMRUpdates: p.hmrGen, SPANavigations: p.spaCount, LastSPA: p.spaLast, Dropped: dropped,
	}
	if !p.hmrLast.IsZero() {
		r.LastHMRAge = time.Since(p.hmrLast)
	}
	last := p.lastQuery
	var lastSeq int64
	if len(msgs) > 0 {
		lastSeq = msgs[len(msgs)-1].Seq
	}
	p.lastQuery = &consoleQueryMark{epoch: p.epoch, hmr: p.hmrGen, seq: lastSeq}
	p.mu.Unlock()

	switch {
	case last == nil:
		r.Delta = DeltaFirstQuery
	case last.epoch != r.Epoch && r.EpochCause == "reload":
		r.Delta = DeltaReloaded
	case last.epoch != r.Epoch:
		r.Delta = DeltaNavigated
	case last.hmr != r.HMRUpdates:
		r.Delta = DeltaHMR
	default:
		r.Delta = DeltaNone
	}
	var kept []ConsoleMessage
	for _, m := range msgs {
		if last != nil && m.Seq > last.seq {
			r.NewSinceQuery++
		}
		if m.Epoch != r.Epoch && !q.IncludePreviousEpochs {
			if q.matches(m) {
				r.Older++
			}
			continue
		}
		if q.matches(m) {
			kept = append(kept, m)
		}
	}
	r.Matched = len(kept)
	folded := fold(kept)
	if q.Limit > 0 && len(folded) > q.Limit {
		folded = folded[len(folded)-q.Limit:]
	}
	r.Messages = folded
	return r
}

func (q ConsoleQuery) matches(m ConsoleMessage) bool {
	if len(q.Levels) > 0 && !slices.Contains(q.Levels, m.Level) {
		return false
	}
	if q.Pattern != nil && !q.Pattern.MatchString(m.Text) {
		return false
	}
	if !q.Since.IsZero() && m.Time.Before(q.Since) {
		return false
	}
	switch q.Source {
	case "", "all":
		return true
	case "page":
		return m.Source == "page"
	case "worker", "workers":
		return m.Source != "page"
	default:
		return m.Source == q.Source
	}
}

// fold merges identical consecutive messages into one with a count.
func fold(msgs []ConsoleMessage) []ConsoleMessage {
	var out []ConsoleMessage
	for _, m := range msgs {
		if n := len(out); n > 0 && sameMessage(out[n-1], m) {
			out[n-1].Count++
			out[n-1].Seq, out[n-1].TS, out[n-1].Time = m.Seq, m.TS, m.Time
			continue
		}
		m.Count = 1
		out = append(out, m)
	}
	return out
}

func sameMessage(a, b ConsoleMessage) bool {
	return a.Level == b.Level && a.Text == b.Text && a.Source == b.Source && a.URL == b.URL &&
		a.Line == b.Line && a.Column == b.Column && a.Epoch == b.Epoch && a.HMR == b.HMR &&
		slices.Equal(a.Stack, b.Stack)
}

// Location renders url:line:column, or "".
func (m ConsoleMessage) Location() string {
	if m.URL == "" {
		return ""
	}
	if m.Line == 0 {
		return m.URL
	}
	return fmt.Sprintf("%s:%d:%d", m.URL, m.Line, m.Column)
}

// ValidLevels are the levels a query may name.
var ValidLevels = []string{"log", "info", "warn", "error", "debug"}

// ParseLevels reads a level filter: a list, or one comma-separated string.
func ParseLevels(values []string) ([]string, error) {
	var out []string
	for _, v := range values {
		for _, l := range strings.Split(v, ",") {
			l = strings.ToLower(strings.TrimSpace(l))
			if l == "warning" {
				l = "warn"
			}
			if l == "" {
				continue
			}
			if !slices.Contains(ValidLevels, l) {
				return nil, fmt.Errorf("unknown level %q; levels are %s", l, strings.Join(ValidLevels, ", "))
			}
			out = append(out, l)
		}
	}
	return out, nil
}

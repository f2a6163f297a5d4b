package session

import (
	"sync"
)

// Manager maps conversations to sessions. Over stdio there is one
// conversation; over HTTP, one per MCP session. Safe for concurrent use.
type Manager struct {
	cfg      Config
	counters *counters
	ending   sync.WaitGroup // sessions being ended, which EndAll waits for

	mu       sync.Mutex
	sessions map[string]*Session
}

// NewManager returns a Manager whose sessions share cfg.
func NewManager(cfg Config) *Manager {
	return &Manager{cfg: cfg, sessions: map[string]*Session{}, counters: &counters{max: int64(cfg.MaxBrowsers)}}
}

// Stats reports the sessions' counts.
func (m *Manager) Stats() Stats {
	m.mu.Lock()
	n := len(m.sessions)
	m.mu.Unlock()
	return Stats{Conversations: int64(n), BrowsersRunning: m.counters.browsers.Load(),
		Launches: m.counters.launches.Load(), Heals: m.counters.heals.Load(), Reaps: m.counters.reaps.Load()}
}

// Session returns the conversation's session, creating it (without a
// browser: that waits for the first call that needs one).
func (m *Manager) Session(id string) *Session {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok {
		s = newSession(id, m.cfg, m.counters)
		m.sessions[id] = s
	}
	return s
}

// End closes one conversation's browser and forgets the session.
func (m *Manager) End(id string) {
	m.mu.Lock()
	s, ok := m.sessions[id]
	delete(m.sessions, id)
	if ok {
		m.ending.Add(1)
	}
	m.mu.Unlock()
	if ok {
		defer m.ending.Done()
		s.End()
	}
}

// EndAll closes every browser, concurrently, and returns when all are gone,
// those that End was already closing included.
func (m *Manager) EndAll() {
	m.mu.Lock()
	sessions := m.sessions
	m.sessions = map[string]*Session{}
	m.ending.Add(len(sessions))
	m.mu.Unlock()
	for _, s := range sessions {
		go func() {
			defer m.ending.Done()
			s.End()
		}()
	}
	m.ending.Wait()
}

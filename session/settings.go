package session

import (
	"context"
	"sync"

	"github.com/go-rod/rod/lib/proto"
)

// UpdateCheckLeak says what offline mode cannot stop; browser_set_offline
// states it in its answer.
const UpdateCheckLeak = "service-worker update checks of an existing registration (registration.update(), " +
	"Chrome's 24-hour check) are made by the browser outside DevTools emulation and interception and can still " +
	"reach the network; browser_service_workers update is refused while offline"

// settings are the conversation's browser settings. Every target gets them
// before it runs, and they outlive a relaunch: a healed browser's targets are
// configured from the same settings.
type settings struct {
	// mu is held while settings are applied, so that a target being
	// configured and a change of setting never miss each other.
	mu         sync.Mutex
	offline    bool
	configured map[string]bool // CDP session ids that carry the current settings
}

// offlineRule is Network.emulateNetworkConditionsByRule with one global rule
// (an empty urlPattern matches every request). Unlike the older
// emulateNetworkConditions it also stops a service worker's own fetch() when
// sent to the worker's session (checked on Chromium 156).
type offlineRule struct {
	Offline                  bool               `json:"offline"`
	MatchedNetworkConditions []networkCondition `json:"matchedNetworkConditions"`
}

type networkCondition struct {
	URLPattern         string  `json:"urlPattern"`
	Offline            bool    `json:"offline"`
	Latency            float64 `json:"latency"`
	DownloadThroughput float64 `json:"downloadThroughput"`
	UploadThroughput   float64 `json:"uploadThroughput"`
}

// applyOffline sets or clears offline mode on one target session.
func applyOffline(ctx context.Context, c proto.Client, sessionID string, offline bool) error {
	rules := []networkCondition{}
	if offline {
		rules = []networkCondition{{Offline: true, DownloadThroughput: -1, UploadThroughput: -1}}
	}
	_, err := c.Call(ctx, sessionID, "Network.emulateNetworkConditionsByRule", offlineRule{Offline: offline, MatchedNetworkConditions: rules})
	return err
}

// configure applies the settings to a target that has not run yet. Its
// Network domain must be enabled.
func (st *settings) configure(ctx context.Context, c proto.Client, sessionID string) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.configured == nil {
		st.configured = map[string]bool{}
	}
	st.configured[sessionID] = true
	if !st.offline {
		return nil // a fresh target is online: nothing to undo
	}
	return applyOffline(ctx, c, sessionID, true)
}

// forget drops a detached target.
func (st *settings) forget(sessionID string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.configured, sessionID)
}

// targetSession is one attached target for setOffline: its short id and CDP client.
type targetSession struct {
	id        string
	sessionID string
	client    proto.Client
}

// setOffline switches offline mode and applies it to every configured target
// among targets, concurrently. It returns the short ids it covered; a target
// still being configured is covered by configure itself.
func (st *settings) setOffline(ctx context.Context, offline bool, targets []targetSession) (covered []string, err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.offline = offline
	type outcome struct {
		id  string
		err error
	}
	results := make(chan outcome, len(targets))
	n := 0
	for _, t := range targets {
		if !st.configured[t.sessionID] {
			covered = append(covered, t.id)
			continue
		}
		n++
		go func() { results <- outcome{t.id, applyOffline(ctx, t.client, t.sessionID, offline)} }()
	}
	for range n {
		r := <-results
		if r.err != nil && err == nil {
			err = r.err
		}
		if r.err == nil {
			covered = append(covered, r.id)
		}
	}
	return covered, err
}

func (st *settings) isOffline() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.offline
}

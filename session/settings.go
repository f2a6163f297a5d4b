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
//
// No lock is held across a CDP call (the event dispatcher reads these
// settings): a change bumps gen, and a target whose configuration raced
// with a change applies the settings again.
type settings struct {
	change sync.Mutex // serializes setOffline calls, CDP calls included

	mu         sync.Mutex // short-held
	offline    bool
	gen        uint64          // bumped on every change
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

// configure applies the settings to a target that has not run yet (its
// Network domain enabled) and records it as configured. If the settings
// change meanwhile, it applies them again.
func (st *settings) configure(ctx context.Context, c proto.Client, sessionID string) error {
	applied := false // a fresh target is online
	for {
		st.mu.Lock()
		offline, gen := st.offline, st.gen
		st.mu.Unlock()
		if offline != applied {
			if err := applyOffline(ctx, c, sessionID, offline); err != nil {
				return err
			}
			applied = offline
		}
		st.mu.Lock()
		if st.gen == gen {
			if st.configured == nil {
				st.configured = map[string]bool{}
			}
			st.configured[sessionID] = true
			st.mu.Unlock()
			return nil
		}
		st.mu.Unlock()
	}
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

// OfflineChange says what switching offline mode reached.
type OfflineChange struct {
	Covered []string // short ids of the targets now in the new mode
	Failed  []string // "id: error" for targets that could not be switched (one detaching, say)
}

// setOffline switches offline mode and applies it to every configured
// target, concurrently. targets is read after the switch, so a target that
// attaches meanwhile is either listed or configured with the new mode.
func (st *settings) setOffline(ctx context.Context, offline bool, targets func() []targetSession) OfflineChange {
	st.change.Lock()
	defer st.change.Unlock()
	st.mu.Lock()
	st.offline = offline
	st.gen++
	st.mu.Unlock()

	var change OfflineChange
	type outcome struct {
		id  string
		err error
	}
	list := targets()
	results := make(chan outcome, len(list))
	n := 0
	for _, t := range list {
		st.mu.Lock()
		configured := st.configured[t.sessionID]
		st.mu.Unlock()
		if !configured {
			change.Covered = append(change.Covered, t.id) // its configure applies the new mode
			continue
		}
		n++
		go func() { results <- outcome{t.id, applyOffline(ctx, t.client, t.sessionID, offline)} }()
	}
	for range n {
		r := <-results
		if r.err != nil {
			change.Failed = append(change.Failed, r.id+": "+protocolMessage(r.err))
		} else {
			change.Covered = append(change.Covered, r.id)
		}
	}
	return change
}

func (st *settings) isOffline() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.offline
}

package session

import (
	"context"
	"encoding/json"
	"sort"
	"strconv"
	"sync"

	"github.com/chromekeeper/chromekeeper/browser"
)

// Registration is a service worker registration as Chrome reports it.
type Registration struct {
	ID       string    `json:"registrationId"`
	Scope    string    `json:"scope"`
	Deleted  bool      `json:"deleted,omitempty"`
	Versions []Version `json:"versions"`
}

// Version is one version (script) of a registration.
type Version struct {
	ID            string `json:"versionId"`
	ScriptURL     string `json:"scriptURL"`
	Status        string `json:"status"`        // new, installing, installed, activating, activated, redundant
	RunningStatus string `json:"runningStatus"` // stopped, starting, running, stopping
	// Controls lists the pages it controls by short id (filled in by the session).
	Controls []string `json:"controls,omitempty"`
	// ControlledTargets are the CDP target ids of the clients it controls.
	ControlledTargets []string `json:"-"`
	TargetID          string   `json:"-"`

	registrationID string
}

// swRegistry keeps what the ServiceWorker domain reports. Chrome sends one
// snapshot on enable, then deltas, some duplicated, and has no "get
// registrations" command, so the registry keeps maps by id. Every page
// enables the domain; duplicates merge here. Safe for concurrent use.
type swRegistry struct {
	mu            sync.Mutex
	registrations map[string]Registration
	versions      map[string]Version
	changed       chan struct{}
}

func newSWRegistry() *swRegistry {
	return &swRegistry{registrations: map[string]Registration{}, versions: map[string]Version{}, changed: make(chan struct{})}
}

type registrationsUpdated struct {
	Registrations []struct {
		RegistrationID string `json:"registrationId"`
		ScopeURL       string `json:"scopeURL"`
		IsDeleted      bool   `json:"isDeleted"`
	} `json:"registrations"`
}

type versionsUpdated struct {
	Versions []struct {
		VersionID         string   `json:"versionId"`
		RegistrationID    string   `json:"registrationId"`
		ScriptURL         string   `json:"scriptURL"`
		RunningStatus     string   `json:"runningStatus"`
		Status            string   `json:"status"`
		ControlledClients []string `json:"controlledClients"`
		TargetID          string   `json:"targetId"`
	} `json:"versions"`
}

func (r *swRegistry) onEvent(e browser.Event) {
	switch e.Method {
	case "ServiceWorker.workerRegistrationUpdated":
		var ev registrationsUpdated
		if json.Unmarshal(e.Params, &ev) != nil {
			return
		}
		r.update(func() {
			for _, reg := range ev.Registrations {
				r.registrations[reg.RegistrationID] = Registration{ID: reg.RegistrationID, Scope: reg.ScopeURL, Deleted: reg.IsDeleted}
			}
		})
	case "ServiceWorker.workerVersionUpdated":
		var ev versionsUpdated
		if json.Unmarshal(e.Params, &ev) != nil {
			return
		}
		r.update(func() {
			for _, v := range ev.Versions {
				if v.TargetID == "" {
					// A stopped version loses its target id; remember the last one,
					// so that a worker still attached can be told stopped.
					v.TargetID = r.versions[v.VersionID].TargetID
				}
				r.versions[v.VersionID] = Version{ID: v.VersionID, ScriptURL: v.ScriptURL, Status: v.Status,
					RunningStatus: v.RunningStatus, TargetID: v.TargetID, ControlledTargets: v.ControlledClients,
					registrationID: v.RegistrationID}
			}
		})
	}
}

func (r *swRegistry) update(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f()
	close(r.changed)
	r.changed = make(chan struct{})
}

// snapshot returns the live registrations (deleted ones too, flagged), each
// with its versions, ordered by id.
func (r *swRegistry) snapshot() []Registration {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Registration
	for _, reg := range r.registrations {
		reg.Versions = nil
		for _, v := range r.versions {
			if v.registrationID == reg.ID {
				reg.Versions = append(reg.Versions, v)
			}
		}
		sort.Slice(reg.Versions, func(i, j int) bool { return numericLess(reg.Versions[i].ID, reg.Versions[j].ID) })
		out = append(out, reg)
	}
	sort.Slice(out, func(i, j int) bool { return numericLess(out[i].ID, out[j].ID) })
	return out
}

// scopeOf returns the scope of the registration whose version runs in a target, or "".
func (r *swRegistry) scopeOf(targetID string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range r.versions {
		if v.TargetID == targetID {
			return r.registrations[v.registrationID].Scope
		}
	}
	return ""
}

// stopped reports whether the version running in a target is known to be stopped.
func (r *swRegistry) stopped(targetID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range r.versions {
		if v.TargetID == targetID {
			return v.RunningStatus == "stopped"
		}
	}
	return false
}

// waitFor waits until cond holds for the registrations.
func (r *swRegistry) waitFor(ctx context.Context, cond func([]Registration) bool) error {
	for {
		r.mu.Lock()
		changed := r.changed
		r.mu.Unlock()
		if cond(r.snapshot()) {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func numericLess(a, b string) bool {
	x, errX := strconv.Atoi(a)
	y, errY := strconv.Atoi(b)
	if errX != nil || errY != nil {
		return a < b
	}
	return x < y
}

package session

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
)

// recordingClient records the offline rules sent to it. It stands in for a
// target's CDP session: the logic tested here is chromekeeper's own.
type recordingClient struct {
	mu      sync.Mutex
	applied []bool
	onCall  func()
}

func (c *recordingClient) Call(_ context.Context, _, method string, params any) ([]byte, error) {
	if method == "Network.emulateNetworkConditionsByRule" {
		b, _ := json.Marshal(params)
		var rule offlineRule
		_ = json.Unmarshal(b, &rule)
		c.mu.Lock()
		c.applied = append(c.applied, rule.Offline)
		hook := c.onCall
		c.onCall = nil
		c.mu.Unlock()
		if hook != nil {
			hook()
		}
	}
	return []byte("{}"), nil
}

func (c *recordingClient) last() (bool, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.applied) == 0 {
		return false, 0
	}
	return c.applied[len(c.applied)-1], len(c.applied)
}

func TestConfigureReappliesWhenOfflineChangesMeanwhile(t *testing.T) {
	var st settings
	st.setOffline(context.Background(), true, func() []targetSession { return nil })
	c := &recordingClient{}
	// While the new target is being switched offline, offline is turned off.
	c.onCall = func() { st.setOffline(context.Background(), false, func() []targetSession { return nil }) }
	if err := st.configure(context.Background(), c, "s1"); err != nil {
		t.Fatal(err)
	}
	if offline, n := c.last(); offline || n != 2 {
		t.Errorf("after a change during configure: last rule offline=%v after %d rules; want online after 2", offline, n)
	}
	if !st.configured["s1"] {
		t.Error("the target is not recorded as configured")
	}
}

func TestSetOfflineSkipsTargetsStillConfiguring(t *testing.T) {
	var st settings
	done, pending := &recordingClient{}, &recordingClient{}
	if err := st.configure(context.Background(), done, "done"); err != nil {
		t.Fatal(err)
	}
	change := st.setOffline(context.Background(), true, func() []targetSession {
		return []targetSession{{id: "p1", sessionID: "done", client: done}, {id: "sw1", sessionID: "pending", client: pending}}
	})
	if offline, _ := done.last(); !offline {
		t.Error("a configured target was not switched offline")
	}
	if _, n := pending.last(); n != 0 {
		t.Error("a target still configuring was sent a rule; its configure applies the mode")
	}
	if len(change.Covered) != 2 || len(change.Failed) != 0 {
		t.Errorf("change = %+v, want both covered", change)
	}
}

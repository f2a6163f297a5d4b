package session

import (
	"encoding/json"
	"sync"
	"time"
)

// maxRequests bounds the requests one target remembers.
const maxRequests = 1000

// Response sources, in the order CDP-NOTES says to classify them.
const (
	SourceNetwork       = "network"
	SourceServiceWorker = "service-worker"
	SourceDiskCache     = "disk-cache"
	SourceMemoryCache   = "memory-cache"
	SourcePrefetchCache = "prefetch-cache"
	SourceFailed        = "failed"
	SourcePending       = "pending"
)

// Request is one network request of a target and where its response came from.
type Request struct {
	ID           string    `json:"requestId"`
	URL          string    `json:"url"`
	Method       string    `json:"method"`
	Type         string    `json:"resourceType"`
	Status       int       `json:"status"`
	MIMEType     string    `json:"mimeType,omitempty"`
	Source       string    `json:"source"`
	WorkerSource string    `json:"serviceWorkerSource,omitempty"` // cache-storage, http-cache, network, fallback-code
	CacheName    string    `json:"cacheName,omitempty"`
	Revalidated  bool      `json:"revalidated,omitempty"` // a 304: the cached copy was confirmed
	Error        string    `json:"error,omitempty"`
	Initiator    string    `json:"initiator"` // "page", or the worker or frame id that made it
	Started      time.Time `json:"started"`

	loaderID        string
	servedFromCache bool
}

// netLog records the requests of one CDP session, bounded to maxRequests.
// It is fed on the dispatcher goroutine and read by calls; safe for concurrent use.
type netLog struct {
	mu   sync.Mutex
	reqs []*Request
	byID map[string]*Request
}

type requestWillBeSent struct {
	RequestID string `json:"requestId"`
	LoaderID  string `json:"loaderId"`
	Type      string `json:"type"`
	Request   struct {
		URL    string `json:"url"`
		Method string `json:"method"`
	} `json:"request"`
}

type responseReceived struct {
	RequestID string `json:"requestId"`
	LoaderID  string `json:"loaderId"`
	Type      string `json:"type"`
	Response  struct {
		URL                         string `json:"url"`
		Status                      int    `json:"status"`
		MIMEType                    string `json:"mimeType"`
		FromDiskCache               bool   `json:"fromDiskCache"`
		FromServiceWorker           bool   `json:"fromServiceWorker"`
		FromPrefetchCache           bool   `json:"fromPrefetchCache"`
		ServiceWorkerResponseSource string `json:"serviceWorkerResponseSource"`
		CacheStorageCacheName       string `json:"cacheStorageCacheName"`
	} `json:"response"`
}

type loadingFailed struct {
	RequestID string `json:"requestId"`
	ErrorText string `json:"errorText"`
	Canceled  bool   `json:"canceled"`
}

// onEvent records one Network event; it reports whether the event was one.
func (n *netLog) onEvent(method string, params json.RawMessage, initiator string) bool {
	switch method {
	case "Network.requestWillBeSent":
		var ev requestWillBeSent
		if json.Unmarshal(params, &ev) == nil {
			n.add(&Request{ID: ev.RequestID, URL: ev.Request.URL, Method: ev.Request.Method, Type: ev.Type,
				Source: SourcePending, Initiator: initiator, Started: time.Now(), loaderID: ev.LoaderID})
		}
	case "Network.requestServedFromCache":
		var ev struct {
			RequestID string `json:"requestId"`
		}
		if json.Unmarshal(params, &ev) == nil {
			n.with(ev.RequestID, func(r *Request) { r.servedFromCache = true })
		}
	case "Network.responseReceived":
		var ev responseReceived
		if json.Unmarshal(params, &ev) == nil {
			n.with(ev.RequestID, func(r *Request) {
				res := ev.Response
				r.URL, r.Status, r.MIMEType = res.URL, res.Status, res.MIMEType
				if ev.Type != "" {
					r.Type = ev.Type
				}
				r.Source = classify(res.FromServiceWorker, r.servedFromCache, res.FromDiskCache, res.FromPrefetchCache)
				if res.FromServiceWorker {
					r.WorkerSource, r.CacheName = res.ServiceWorkerResponseSource, res.CacheStorageCacheName
				}
				r.Revalidated = res.Status == 304
			})
		}
	case "Network.loadingFailed":
		var ev loadingFailed
		if json.Unmarshal(params, &ev) == nil {
			n.with(ev.RequestID, func(r *Request) {
				r.Error = ev.ErrorText
				if r.Status == 0 {
					r.Source = SourceFailed
				}
			})
		}
	default:
		return false
	}
	return true
}

// classify names where a response came from. fromDiskCache is also set for a
// service worker's Cache Storage hit, hence the order.
func classify(fromServiceWorker, servedFromCache, fromDiskCache, fromPrefetchCache bool) string {
	switch {
	case fromServiceWorker:
		return SourceServiceWorker
	case servedFromCache && !fromDiskCache:
		return SourceMemoryCache
	case servedFromCache, fromDiskCache:
		return SourceDiskCache
	case fromPrefetchCache:
		return SourcePrefetchCache
	default:
		return SourceNetwork
	}
}

func (n *netLog) add(r *Request) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.byID == nil {
		n.byID = map[string]*Request{}
	}
	if old, ok := n.byID[r.ID]; ok {
		// A redirect reuses the request id: the log keeps the final hop.
		*old = *r
		return
	}
	n.reqs = append(n.reqs, r)
	n.byID[r.ID] = r
	if len(n.reqs) > maxRequests {
		delete(n.byID, n.reqs[0].ID)
		n.reqs = n.reqs[1:]
	}
}

func (n *netLog) with(id string, f func(*Request)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if r, ok := n.byID[id]; ok {
		f(r)
	}
}

// list returns copies of the requests keep accepts, oldest first.
func (n *netLog) list(keep func(*Request) bool) []Request {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []Request
	for _, r := range n.reqs {
		if keep(r) {
			out = append(out, *r)
		}
	}
	return out
}

package session

import (
	"encoding/json"
	"fmt"
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

	StatusText        string            `json:"-"`
	RequestHeaders    map[string]string `json:"-"`
	ResponseHeaders   map[string]string `json:"-"`
	PostData          string            `json:"-"`
	InitiatorType     string            `json:"-"` // parser, script, other…
	RemoteAddress     string            `json:"-"`
	Responded         time.Time         `json:"-"`
	Finished          time.Time         `json:"-"` // loadingFinished or loadingFailed
	EncodedDataLength float64           `json:"-"`

	loaderID        string
	servedFromCache bool
}

// netLog records the requests of one CDP session, bounded to maxRequests.
// It is fed on the dispatcher goroutine and read by calls; safe for concurrent use.
type netLog struct {
	mu    sync.Mutex
	reqs  []*Request
	byID  map[string]*Request
	wsURL map[string]string // WebSocket request id → URL
}

type requestWillBeSent struct {
	RequestID string `json:"requestId"`
	LoaderID  string `json:"loaderId"`
	Type      string `json:"type"`
	Request   struct {
		URL      string                     `json:"url"`
		Method   string                     `json:"method"`
		Headers  map[string]json.RawMessage `json:"headers"`
		PostData string                     `json:"postData"`
	} `json:"request"`
	Initiator struct {
		Type string `json:"type"`
	} `json:"initiator"`
}

type responseReceived struct {
	RequestID string `json:"requestId"`
	LoaderID  string `json:"loaderId"`
	Type      string `json:"type"`
	Response  struct {
		URL                         string                     `json:"url"`
		Status                      int                        `json:"status"`
		StatusText                  string                     `json:"statusText"`
		Headers                     map[string]json.RawMessage `json:"headers"`
		RemoteIPAddress             string                     `json:"remoteIPAddress"`
		RemotePort                  int                        `json:"remotePort"`
		MIMEType                    string                     `json:"mimeType"`
		FromDiskCache               bool                       `json:"fromDiskCache"`
		FromServiceWorker           bool                       `json:"fromServiceWorker"`
		FromPrefetchCache           bool                       `json:"fromPrefetchCache"`
		ServiceWorkerResponseSource string                     `json:"serviceWorkerResponseSource"`
		CacheStorageCacheName       string                     `json:"cacheStorageCacheName"`
	} `json:"response"`
}

type loadingFailed struct {
	RequestID string `json:"requestId"`
	ErrorText string `json:"errorText"`
	Canceled  bool   `json:"canceled"`
}

// requestRef is any Network event that only names its request.
type requestRef struct {
	RequestID string `json:"requestId"`
}

// webSocketEvent is any of the Network.webSocket* events.
type webSocketEvent struct {
	RequestID    string `json:"requestId"`
	URL          string `json:"url"`
	ErrorMessage string `json:"errorMessage"`
	Response     struct {
		Opcode      int                        `json:"opcode"`
		PayloadData string                     `json:"payloadData"`
		Status      int                        `json:"status"`
		StatusText  string                     `json:"statusText"`
		Headers     map[string]json.RawMessage `json:"headers"`
	} `json:"response"`
}

type loadingFinished struct {
	RequestID         string  `json:"requestId"`
	EncodedDataLength float64 `json:"encodedDataLength"`
}

// onEvent records one Network event; other events are ignored.
func (n *netLog) onEvent(e *cdpEvent, initiator string) {
	switch e.Method {
	case "Network.requestWillBeSent":
		if ev, ok := decodeAs[requestWillBeSent](e); ok {
			n.add(&Request{ID: ev.RequestID, URL: ev.Request.URL, Method: ev.Request.Method, Type: ev.Type,
				Source: SourcePending, Initiator: initiator, Started: time.Now(), loaderID: ev.LoaderID,
				RequestHeaders: headerMap(ev.Request.Headers), PostData: ev.Request.PostData, InitiatorType: ev.Initiator.Type})
		}
	case "Network.requestServedFromCache":
		if ev, ok := decodeAs[requestRef](e); ok {
			n.with(ev.RequestID, func(r *Request) { r.servedFromCache = true })
		}
	case "Network.responseReceived":
		if ev, ok := decodeAs[responseReceived](e); ok {
			n.with(ev.RequestID, func(r *Request) {
				res := ev.Response
				r.URL, r.Status, r.MIMEType = res.URL, res.Status, res.MIMEType
				r.StatusText, r.ResponseHeaders, r.Responded = res.StatusText, headerMap(res.Headers), time.Now()
				if res.RemoteIPAddress != "" {
					r.RemoteAddress = fmt.Sprintf("%s:%d", res.RemoteIPAddress, res.RemotePort)
				}
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
		if ev, ok := decodeAs[loadingFailed](e); ok {
			n.with(ev.RequestID, func(r *Request) {
				r.Error, r.Finished = ev.ErrorText, time.Now()
				if r.Status == 0 {
					r.Source = SourceFailed
				}
			})
		}
	case "Network.loadingFinished":
		if ev, ok := decodeAs[loadingFinished](e); ok {
			n.with(ev.RequestID, func(r *Request) { r.Finished, r.EncodedDataLength = time.Now(), ev.EncodedDataLength })
		}
	case "Network.webSocketCreated":
		if ev, ok := decodeAs[webSocketEvent](e); ok {
			n.mu.Lock()
			if n.wsURL == nil || len(n.wsURL) > maxRequests {
				n.wsURL = map[string]string{}
			}
			n.wsURL[ev.RequestID] = ev.URL
			n.mu.Unlock()
		}
	}
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

// find returns a copy of a request by id.
func (n *netLog) find(id string) (Request, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if r, ok := n.byID[id]; ok {
		return *r, true
	}
	return Request{}, false
}

// urlOf returns the URL of a request or WebSocket by id.
func (n *netLog) urlOf(id string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if r, ok := n.byID[id]; ok {
		return r.URL
	}
	return n.wsURL[id]
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

package session

import (
	"encoding/json"
	"strings"
)

// origin names where an event came from: the page itself or one of its
// workers or frames.
type origin struct {
	source    string // page, sw1, w1, f1
	targetID  string
	sessionID string
	net       *netLog // the requests of that target, to name the URL of later network events
	redact    bool
}

// normalize turns a CDP event into an Event of seed 004's shape; ok is false
// for events the buffer does not keep. Console messages come pre-parsed.
func normalize(e *cdpEvent, o origin, console *ConsoleMessage) (Event, bool) {
	ev := Event{TargetID: o.targetID, SessionID: o.sessionID, Source: o.source}
	headers := func(h map[string]json.RawMessage) map[string]string {
		m := headerMap(h)
		if o.redact {
			m = Redact(m)
		}
		return m
	}
	switch e.Method {
	case "Runtime.consoleAPICalled", "Runtime.exceptionThrown", "Log.entryAdded":
		if console == nil {
			return ev, false
		}
		ev.Kind, ev.Type, ev.Text, ev.Args, ev.Frames = console.Kind, console.Level, console.Text, console.Args, console.Stack
		if console.Kind == "exception" {
			ev.Kind = KindException
		}
		if console.URL != "" {
			ev.Stack = &StackRef{URL: console.URL, Line: console.Line, Column: console.Column}
		}
	case "Network.requestWillBeSent":
		r, ok := decodeAs[requestWillBeSent](e)
		if !ok {
			return ev, false
		}
		ev.Kind, ev.RequestID, ev.URL, ev.Method = KindRequest, r.RequestID, r.Request.URL, r.Request.Method
		ev.ResourceType, ev.Headers, ev.PostDataPreview, ev.Initiator = r.Type, headers(r.Request.Headers), r.Request.PostData, r.Initiator.Type
	case "Network.responseReceived":
		r, ok := decodeAs[responseReceived](e)
		if !ok {
			return ev, false
		}
		res := r.Response
		ev.Kind, ev.RequestID, ev.URL, ev.ResourceType = KindResponse, r.RequestID, res.URL, r.Type
		ev.Status, ev.StatusText, ev.MIMEType, ev.Headers = res.Status, res.StatusText, res.MIMEType, headers(res.Headers)
		ev.FromDiskCache, ev.FromServiceWorker = res.FromDiskCache, res.FromServiceWorker
		if req, ok := o.net.find(r.RequestID); ok {
			ev.Method, ev.RemoteAddress = req.Method, req.RemoteAddress
		}
	case "Network.loadingFinished":
		r, ok := decodeAs[loadingFinished](e)
		if !ok {
			return ev, false
		}
		ev.Kind, ev.RequestID, ev.EncodedDataLength = KindLoadingFinished, r.RequestID, r.EncodedDataLength
		ev.URL = o.net.urlOf(r.RequestID)
	case "Network.loadingFailed":
		r, ok := decodeAs[loadingFailed](e)
		if !ok {
			return ev, false
		}
		ev.Kind, ev.RequestID, ev.ErrorText, ev.Canceled = KindLoadingFailed, r.RequestID, r.ErrorText, r.Canceled
		ev.URL = o.net.urlOf(r.RequestID)
	case "Network.webSocketCreated", "Network.webSocketClosed", "Network.webSocketFrameSent",
		"Network.webSocketFrameReceived", "Network.webSocketFrameError":
		r, ok := decodeAs[webSocketEvent](e)
		if !ok {
			return ev, false
		}
		ev.Kind, ev.RequestID, ev.URL = KindWebSocket, r.RequestID, r.URL
		if ev.URL == "" {
			ev.URL = o.net.urlOf(r.RequestID)
		}
		ev.Type = strings.TrimPrefix(e.Method, "Network.webSocket")
		ev.Type = strings.ToLower(ev.Type[:1]) + ev.Type[1:] // created, closed, frameSent…
		switch e.Method {
		case "Network.webSocketFrameSent":
			ev.Direction, ev.Opcode, ev.PayloadPreview = "sent", r.Response.Opcode, r.Response.PayloadData
		case "Network.webSocketFrameReceived":
			ev.Direction, ev.Opcode, ev.PayloadPreview = "recv", r.Response.Opcode, r.Response.PayloadData
		case "Network.webSocketFrameError":
			ev.ErrorText = r.ErrorMessage
		}
	default:
		return ev, false
	}
	return ev, true
}

// navigationEvent records a main-frame navigation of a page in its buffer.
func navigationEvent(o origin, url, typ string) Event {
	return Event{TargetID: o.targetID, SessionID: o.sessionID, Source: o.source, Kind: KindNavigation, URL: url, Type: typ}
}

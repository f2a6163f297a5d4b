package session

import (
	"encoding/json"

	"github.com/chromekeeper/chromekeeper/browser"
)

// cdpEvent is one CDP event on its way through the pipeline. Its params are
// decoded once, however many consumers read them: the request log, the
// event buffer and the watcher of every page the event reaches. It lives on
// the dispatcher goroutine only.
type cdpEvent struct {
	browser.Event
	decoded any // the params, decoded by the first decodeAs
	valid   bool

	console       *ConsoleMessage // parsed by the first consoleFrom
	consoleSource string
	consoleDone   bool
}

func newCDPEvent(e browser.Event) *cdpEvent { return &cdpEvent{Event: e} }

// decodeAs returns the params as a *T, decoding them on the first call. A
// consumer asking for another type than the first gets its own decoding.
func decodeAs[T any](e *cdpEvent) (*T, bool) {
	if e.decoded == nil {
		v := new(T)
		e.decoded, e.valid = v, json.Unmarshal(e.Params, v) == nil
		return v, e.valid
	}
	if v, ok := e.decoded.(*T); ok {
		return v, e.valid
	}
	v := new(T)
	return v, json.Unmarshal(e.Params, v) == nil
}

// consoleFrom returns the event as a console message from source, or nil
// when it is not one; it is parsed once.
func (e *cdpEvent) consoleFrom(source string) *ConsoleMessage {
	if !e.consoleDone || e.consoleSource != source {
		e.consoleDone, e.consoleSource, e.console = true, source, nil
		if m, ok := parseConsole(e.Method, e.Params, source); ok {
			e.console = &m
		}
	}
	return e.console
}

package session

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	// consoleCapacity bounds the messages one page keeps, across epochs.
	consoleCapacity = 50000
	// maxMessageText bounds one message's text.
	maxMessageText = 2000
	// hmrBurst: HMR lines within this long of each other are one update
	// (webpack prints four lines per update, Vite one per module).
	hmrBurst = 500 * time.Millisecond
	// hmrPushWindow: a WebSocket frame this recent before an HMR line is the
	// push that started the update.
	hmrPushWindow = 2 * time.Second
)

// DefaultHMRPatterns recognize a hot update in what dev servers print.
var DefaultHMRPatterns = []string{
	`^\[vite\] (css )?hot updated:`,
	`^\[vite\] page reload`,
	`^\[HMR\] Updated modules`,
	`^\[HMR\] App is up to date`,
	`^\[webpack-dev-server\] App (hot update|updated)`,
	`^\[Fast Refresh\] done`,
	`^\[parcel\] .*(updated|hot)`,
}

// ConsoleMessage is one console API call, uncaught exception or browser log
// entry of a page or of a worker it owns.
type ConsoleMessage struct {
	Seq    int64     `json:"seq"`
	Time   time.Time `json:"-"`
	TS     int64     `json:"ts"` // epoch milliseconds
	Level  string    `json:"level"`
	Kind   string    `json:"kind"` // console, exception, log
	Text   string    `json:"text"`
	Args   []string  `json:"args,omitempty"` // each argument formatted, when there are several
	Source string    `json:"source"`         // page, sw1, w1, f1
	URL    string    `json:"url,omitempty"`
	Line   int       `json:"line,omitempty"`
	Column int       `json:"column,omitempty"`
	Stack  []string  `json:"stack,omitempty"`
	Epoch  int       `json:"epoch"`
	HMR    int       `json:"hmr"` // HMR generation within its epoch
	Count  int       `json:"count,omitempty"`
}

// consoleBuffer is a page's ring of console messages. Safe for concurrent use.
type consoleBuffer struct {
	mu      sync.Mutex
	msgs    []ConsoleMessage
	start   int // index of the oldest message in msgs once full
	seq     int64
	dropped int64
}

func (b *consoleBuffer) add(m ConsoleMessage) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	m.Seq = b.seq
	if len(b.msgs) < consoleCapacity {
		b.msgs = append(b.msgs, m)
		return
	}
	b.msgs[b.start] = m
	b.start = (b.start + 1) % consoleCapacity
	b.dropped++
}

// lastSeq returns the seq of the newest message (0 for none).
func (b *consoleBuffer) lastSeq() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.seq
}

// retag moves the messages after seq in epoch to HMR generation gen.
func (b *consoleBuffer) retag(after int64, epoch, gen int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range b.msgs {
		if m := &b.msgs[i]; m.Seq > after && m.Epoch == epoch {
			m.HMR = gen
		}
	}
}

// all returns the messages oldest first, and how many were dropped.
func (b *consoleBuffer) all() ([]ConsoleMessage, int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]ConsoleMessage, 0, len(b.msgs))
	out = append(out, b.msgs[b.start:]...)
	out = append(out, b.msgs[:b.start]...)
	return out, b.dropped
}

// remoteObject is the part of a Runtime.RemoteObject console formatting uses.
type remoteObject struct {
	Type                string          `json:"type"`
	Subtype             string          `json:"subtype"`
	ClassName           string          `json:"className"`
	Value               json.RawMessage `json:"value"`
	UnserializableValue string          `json:"unserializableValue"`
	Description         string          `json:"description"`
	Preview             *struct {
		Overflow   bool `json:"overflow"`
		Properties []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Value string `json:"value"`
		} `json:"properties"`
	} `json:"preview"`
}

type stackTrace struct {
	CallFrames []struct {
		FunctionName string `json:"functionName"`
		URL          string `json:"url"`
		LineNumber   int    `json:"lineNumber"`
		ColumnNumber int    `json:"columnNumber"`
	} `json:"callFrames"`
}

// frames renders the first stackFrames frames, one-based like DevTools.
func (s *stackTrace) frames() []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, f := range s.CallFrames {
		if len(out) == stackFrames {
			break
		}
		name := f.FunctionName
		if name == "" {
			name = "<anonymous>"
		}
		out = append(out, fmt.Sprintf("at %s (%s:%d:%d)", name, f.URL, f.LineNumber+1, f.ColumnNumber+1))
	}
	return out
}

// format renders one console argument the way DevTools prints it: strings
// bare, primitives as written, objects by their preview.
func (o remoteObject) format() string {
	switch {
	case o.Type == "string":
		var s string
		_ = json.Unmarshal(o.Value, &s)
		return s
	case o.UnserializableValue != "":
		return o.UnserializableValue
	case o.Type == "undefined":
		return "undefined"
	case len(o.Value) > 0 && o.Type != "object":
		return string(o.Value)
	case o.Subtype == "null":
		return "null"
	case o.Preview != nil && o.Subtype != "error" && o.Subtype != "node":
		var parts []string
		for _, p := range o.Preview.Properties {
			v := p.Value
			if p.Type == "string" {
				v = strconv.Quote(v)
			}
			if o.Subtype == "array" {
				parts = append(parts, v)
			} else {
				parts = append(parts, p.Name+": "+v)
			}
		}
		if o.Preview.Overflow {
			parts = append(parts, "…")
		}
		if o.Subtype == "array" {
			return "[" + strings.Join(parts, ", ") + "]"
		}
		prefix := ""
		if o.ClassName != "" && o.ClassName != "Object" {
			prefix = o.ClassName + " "
		}
		return prefix + "{" + strings.Join(parts, ", ") + "}"
	default:
		return o.Description
	}
}

type consoleAPICalled struct {
	Type       string         `json:"type"`
	Args       []remoteObject `json:"args"`
	Timestamp  float64        `json:"timestamp"` // epoch milliseconds
	StackTrace *stackTrace    `json:"stackTrace"`
}

type exceptionThrown struct {
	Timestamp        float64          `json:"timestamp"`
	ExceptionDetails exceptionDetails `json:"exceptionDetails"`
}

// exceptionDetails is Runtime.ExceptionDetails: of an uncaught exception, or
// of a thrown evaluation.
type exceptionDetails struct {
	Text         string        `json:"text"`
	URL          string        `json:"url"`
	LineNumber   int           `json:"lineNumber"`
	ColumnNumber int           `json:"columnNumber"`
	StackTrace   *stackTrace   `json:"stackTrace"`
	Exception    *remoteObject `json:"exception"`
}

type logEntryAdded struct {
	Entry struct {
		Source     string      `json:"source"`
		Level      string      `json:"level"`
		Text       string      `json:"text"`
		Timestamp  float64     `json:"timestamp"`
		URL        string      `json:"url"`
		LineNumber int         `json:"lineNumber"`
		StackTrace *stackTrace `json:"stackTrace"`
	} `json:"entry"`
}

// consoleLevel maps a console API type to one of log, info, warn, error, debug.
var consoleLevel = map[string]string{
	"warning": "warn", "error": "error", "assert": "error", "debug": "debug", "info": "info",
	"verbose": "debug", // Log.entryAdded
}

// parseConsole turns a Runtime or Log event into a message; ok is false for
// any other event. Epoch, HMR and Seq are filled in by the page.
func parseConsole(method string, params json.RawMessage, source string) (ConsoleMessage, bool) {
	m := ConsoleMessage{Source: source, Time: time.Now()}
	switch method {
	case "Runtime.consoleAPICalled":
		var ev consoleAPICalled
		if json.Unmarshal(params, &ev) != nil || ev.Type == "endGroup" || ev.Type == "clear" {
			return m, false
		}
		parts := make([]string, len(ev.Args))
		for i, a := range ev.Args {
			parts[i] = a.format()
		}
		m.Kind, m.Text = "console", strings.Join(parts, " ")
		if len(parts) > 1 {
			m.Args = parts
		}
		m.Level = levelOr(consoleLevel[ev.Type], "log")
		if ev.StackTrace != nil && len(ev.StackTrace.CallFrames) > 0 {
			top := ev.StackTrace.CallFrames[0]
			m.URL, m.Line, m.Column = top.URL, top.LineNumber+1, top.ColumnNumber+1
			if m.Level == "error" || ev.Type == "trace" {
				m.Stack = ev.StackTrace.frames()
			}
		}
		m.setTime(ev.Timestamp)
	case "Runtime.exceptionThrown":
		var ev exceptionThrown
		if json.Unmarshal(params, &ev) != nil {
			return m, false
		}
		d := ev.ExceptionDetails
		m.Kind, m.Level = "exception", "error"
		m.Text = d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			m.Text = d.Text + " " + firstLine(d.Exception.Description)
		} else if d.Exception != nil {
			m.Text = d.Text + " " + d.Exception.format()
		}
		m.URL, m.Line, m.Column = d.URL, d.LineNumber+1, d.ColumnNumber+1
		m.Stack = d.StackTrace.frames()
		m.setTime(ev.Timestamp)
	case "Log.entryAdded":
		var ev logEntryAdded
		if json.Unmarshal(params, &ev) != nil {
			return m, false
		}
		e := ev.Entry
		if e.Source == "network" && strings.HasSuffix(strings.SplitN(e.URL, "?", 2)[0], "/favicon.ico") {
			return m, false // headless Chrome's own favicon fetch, not the page's
		}
		m.Kind, m.Text, m.URL = "log", e.Text, e.URL
		m.Level = levelOr(consoleLevel[e.Level], "info")
		if e.LineNumber > 0 {
			m.Line = e.LineNumber + 1
		}
		m.Stack = e.StackTrace.frames()
		m.setTime(e.Timestamp)
	default:
		return m, false
	}
	if len(m.Text) > maxMessageText {
		m.Text = strings.ToValidUTF8(m.Text[:maxMessageText], "") + fmt.Sprintf("… [%d bytes]", len(m.Text))
		m.Args = nil // as large as the text
	}
	return m, true
}

func levelOr(level, def string) string {
	if level == "" {
		return def
	}
	return level
}

// setTime takes the browser's timestamp (epoch ms) when it has one.
func (m *ConsoleMessage) setTime(ms float64) {
	if ms > 0 {
		m.Time = time.UnixMilli(int64(ms))
	}
	m.TS = m.Time.UnixMilli()
}

// CompileHMRPatterns compiles the default patterns and any extra ones.
func CompileHMRPatterns(extra []string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for _, p := range append(append([]string{}, DefaultHMRPatterns...), extra...) {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("hmr pattern %q: %w", p, err)
		}
		out = append(out, re)
	}
	return out, nil
}

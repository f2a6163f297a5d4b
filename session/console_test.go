package session

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseConsoleFormatsArgumentsLikeDevTools(t *testing.T) {
	cases := []struct {
		name, method, params, level, text string
	}{
		{"strings bare, numbers as written", "Runtime.consoleAPICalled",
			`{"type":"log","args":[{"type":"string","value":"count"},{"type":"number","value":3}],"timestamp":1}`, "log", "count 3"},
		{"object preview", "Runtime.consoleAPICalled",
			`{"type":"warning","args":[{"type":"object","className":"Object","preview":{"properties":[{"name":"a","type":"number","value":"1"},{"name":"b","type":"string","value":"x"}]}}],"timestamp":1}`,
			"warn", `{a: 1, b: "x"}`},
		{"array preview", "Runtime.consoleAPICalled",
			`{"type":"info","args":[{"type":"object","subtype":"array","preview":{"overflow":true,"properties":[{"name":"0","type":"number","value":"1"}]}}],"timestamp":1}`,
			"info", "[1, …]"},
		{"debug stays debug", "Runtime.consoleAPICalled", `{"type":"debug","args":[{"type":"string","value":"[vite] connected."}]}`, "debug", "[vite] connected."},
		{"assert is an error", "Runtime.consoleAPICalled", `{"type":"assert","args":[{"type":"string","value":"Assertion failed"}]}`, "error", "Assertion failed"},
		{"unserializable", "Runtime.consoleAPICalled", `{"type":"log","args":[{"type":"number","unserializableValue":"NaN"},{"type":"undefined"}]}`, "log", "NaN undefined"},
		{"exception", "Runtime.exceptionThrown",
			`{"timestamp":1,"exceptionDetails":{"text":"Uncaught","url":"http://x/a.js","lineNumber":2,"columnNumber":4,"exception":{"type":"object","subtype":"error","description":"Error: boom\n    at f (http://x/a.js:3:5)"},"stackTrace":{"callFrames":[{"functionName":"f","url":"http://x/a.js","lineNumber":2,"columnNumber":4}]}}}`,
			"error", "Uncaught Error: boom"},
		{"log entry", "Log.entryAdded", `{"entry":{"source":"network","level":"error","text":"Failed to load resource","timestamp":1,"url":"http://x/y"}}`, "error", "Failed to load resource"},
		{"verbose log entry", "Log.entryAdded", `{"entry":{"source":"violation","level":"verbose","text":"slow","timestamp":1}}`, "debug", "slow"},
	}
	for _, tc := range cases {
		m, ok := parseConsole(tc.method, json.RawMessage(tc.params), "page")
		if !ok {
			t.Errorf("%s: not parsed", tc.name)
			continue
		}
		if m.Level != tc.level || m.Text != tc.text {
			t.Errorf("%s: got %s %q, want %s %q", tc.name, m.Level, m.Text, tc.level, tc.text)
		}
	}
	if m, _ := parseConsole("Runtime.consoleAPICalled", json.RawMessage(cases[0].params), "page"); len(m.Args) != 2 || m.Args[1] != "3" {
		t.Errorf("formatted arguments = %q", m.Args)
	}
	m, _ := parseConsole("Runtime.exceptionThrown", json.RawMessage(cases[6].params), "page")
	if m.Location() != "http://x/a.js:3:5" || len(m.Stack) != 1 || m.Stack[0] != "at f (http://x/a.js:3:5)" {
		t.Errorf("exception location %q stack %q", m.Location(), m.Stack)
	}
	if _, ok := parseConsole("Runtime.consoleAPICalled", json.RawMessage(`{"type":"endGroup","args":[]}`), "page"); ok {
		t.Error("endGroup is not a message")
	}
	long, _ := parseConsole("Runtime.consoleAPICalled", json.RawMessage(`{"type":"log","args":[{"type":"string","value":"`+strings.Repeat("y", 5000)+`"}]}`), "page")
	if len(long.Text) > maxMessageText+40 || !strings.HasSuffix(long.Text, "[5000 bytes]") {
		t.Errorf("long message not bounded: %d bytes", len(long.Text))
	}
}

func TestHMRPatterns(t *testing.T) {
	patterns, err := CompileHMRPatterns([]string{`^\[custom\] swapped`})
	if err != nil {
		t.Fatal(err)
	}
	p := &Page{hmrPatterns: patterns}
	for text, want := range map[string]bool{
		"[vite] hot updated: /src/App.tsx":                       true,
		"[vite] css hot updated: /src/app.css":                   true,
		"[vite] connected.":                                      false,
		"[HMR] Updated modules:":                                 true,
		"[webpack-dev-server] App updated. Recompiling...":       true,
		"[Fast Refresh] done in 42ms":                            true,
		"[custom] swapped module":                                true,
		"user text mentioning [vite] hot updated: in the middle": false,
	} {
		if got := p.isHMR(text); got != want {
			t.Errorf("isHMR(%q) = %v, want %v", text, got, want)
		}
	}
	if _, err := CompileHMRPatterns([]string{"("}); err == nil {
		t.Error("an invalid pattern compiled")
	}
}

func TestConsoleBufferKeepsTheNewest(t *testing.T) {
	var b consoleBuffer
	for i := range consoleCapacity + 5 {
		b.add(ConsoleMessage{Text: string(rune('a' + i%26))})
	}
	msgs, dropped := b.all()
	if len(msgs) != consoleCapacity || dropped != 5 || msgs[0].Seq != 6 || msgs[len(msgs)-1].Seq != consoleCapacity+5 {
		t.Errorf("ring: %d kept, %d dropped, seq %d..%d", len(msgs), dropped, msgs[0].Seq, msgs[len(msgs)-1].Seq)
	}
}

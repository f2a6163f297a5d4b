package session

import (
	"encoding/json"
	"testing"
)

func TestSerializedValues(t *testing.T) {
	cases := []struct {
		name, serialized, description, want string
	}{
		{"number", `{"type":"number","value":2}`, "", `2`},
		{"float", `{"type":"number","value":1.5e300}`, "", `1.5e300`},
		{"nan", `{"type":"number","value":"NaN"}`, "", `"[NaN]"`},
		{"negative zero", `{"type":"number","value":"-0"}`, "", `-0`},
		{"undefined", `{"type":"undefined"}`, "", `"[undefined]"`},
		{"null", `{"type":"null"}`, "", `null`},
		{"bigint", `{"type":"bigint","value":"10"}`, "", `"[BigInt: 10n]"`},
		{"regexp", `{"type":"regexp","value":{"pattern":"a+","flags":"g"}}`, "", `"/a+/g"`},
		{"date", `{"type":"date","value":"1970-01-01T00:00:00.000Z"}`, "", `"1970-01-01T00:00:00.000Z"`},
		{"object keeps order", `{"type":"object","value":[["z",{"type":"number","value":1}],["a",{"type":"string","value":"<b>"}]]}`, "", `{"z":1,"a":"<b>"}`},
		{"cycle", `{"type":"object","value":[["self",{"type":"object","weakLocalObjectReference":1}]],"weakLocalObjectReference":1}`, "", `{"self":"[Circular]"}`},
		{"repeat is not a cycle", `{"type":"array","value":[{"type":"object","value":[["v",{"type":"number","value":1}]],"weakLocalObjectReference":1},{"type":"object","weakLocalObjectReference":1}]}`, "", `[{"v":1},{"v":1}]`},
		{"depth limit", `{"type":"object","value":[["deep",{"type":"object"}]]}`, "", `{"deep":"[Object]"}`},
		{"map with object key", `{"type":"map","value":[[{"type":"number","value":1},{"type":"string","value":"one"}]]}`, "", `{"1":"one"}`},
		{"set", `{"type":"set","value":[{"type":"number","value":1}]}`, "", `[1]`},
		{"element", `{"type":"node","value":{"nodeType":1,"localName":"div","attributes":{"id":"a","class":"b"}}}`, "", `"<div class=\"b\" id=\"a\">"`},
		{"text node", `{"type":"node","value":{"nodeType":3,"nodeValue":"hi"}}`, "", `"[Text: \"hi\"]"`},
		{"function", `{"type":"function"}`, "function f() {}\n", `"[Function: function f() {}]"`},
		{"error", `{"type":"error"}`, "Error: boom\n    at x", `"[Error: boom]"`},
		{"nested function", `{"type":"array","value":[{"type":"function"}]}`, "Array(1)", `["[Function]"]`},
		{"window", `{"type":"window","value":{"context":"x"}}`, "Window", `"[Window]"`},
		{"promise", `{"type":"promise"}`, "Promise", `"[Promise]"`},
	}
	for _, tc := range cases {
		var n serializedNode
		if err := json.Unmarshal([]byte(tc.serialized), &n); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, err := EncodeJSON(n.value(tc.description))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if string(got) != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
	}
}

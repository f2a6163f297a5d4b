package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// serializedNode is one value in CDP's deep serialization (the WebDriver BiDi
// format). An object met twice carries a weakLocalObjectReference, and its
// value only once.
type serializedNode struct {
	Type    string          `json:"type"`
	Value   json.RawMessage `json:"value"`
	WeakRef *int            `json:"weakLocalObjectReference"`
}

// value converts a serialized JavaScript value to JSON-ready Go values.
// description is Chrome's description of the top-level value, used where the
// serialization carries nothing (functions, errors, symbols).
func (n *serializedNode) value(description string) any {
	c := converter{byRef: map[int]*serializedNode{}}
	c.index(n)
	v := c.convert(n, nil)
	if s, ok := v.(string); ok && description != "" {
		switch n.Type {
		case "function":
			return "[Function: " + firstLine(description) + "]"
		case "error":
			return "[" + firstLine(description) + "]"
		case "symbol":
			return "[" + description + "]"
		default:
			return s
		}
	}
	return v
}

type converter struct {
	byRef map[int]*serializedNode // the occurrence of each shared object that carries its value
}

// index records, for every shared object, the occurrence that holds its value.
func (c *converter) index(n *serializedNode) {
	if n.WeakRef != nil && len(n.Value) > 0 {
		if _, seen := c.byRef[*n.WeakRef]; !seen {
			c.byRef[*n.WeakRef] = n
		}
	}
	for _, child := range n.children() {
		c.index(child)
	}
}

// children returns the nested values of arrays, sets, objects and maps
// (keys of objects and maps included).
func (n *serializedNode) children() []*serializedNode {
	switch n.Type {
	case "array", "set":
		var items []*serializedNode
		_ = json.Unmarshal(n.Value, &items)
		return items
	case "object", "map":
		var out []*serializedNode
		for _, e := range n.entries() {
			if e.keyNode != nil {
				out = append(out, e.keyNode)
			}
			out = append(out, e.value)
		}
		return out
	}
	return nil
}

type entry struct {
	key     string
	keyNode *serializedNode
	value   *serializedNode
}

// entries decodes the [key, value] pairs of an object or map; a key is a plain
// string or a serialized value.
func (n *serializedNode) entries() []entry {
	var pairs [][2]json.RawMessage
	if err := json.Unmarshal(n.Value, &pairs); err != nil {
		return nil
	}
	out := make([]entry, 0, len(pairs))
	for _, pair := range pairs {
		var e entry
		if err := json.Unmarshal(pair[0], &e.key); err != nil {
			e.keyNode = &serializedNode{}
			_ = json.Unmarshal(pair[0], e.keyNode)
		}
		e.value = &serializedNode{}
		if json.Unmarshal(pair[1], e.value) == nil {
			out = append(out, e)
		}
	}
	return out
}

// convert turns one node into a JSON-ready value. ancestors holds the shared
// objects being converted above this node, to tell a cycle from a repeat.
func (c *converter) convert(n *serializedNode, ancestors []int) any {
	if n.WeakRef != nil {
		ref := *n.WeakRef
		for _, a := range ancestors {
			if a == ref {
				return "[Circular]"
			}
		}
		if len(n.Value) == 0 {
			if holder, ok := c.byRef[ref]; ok {
				n = holder
			}
		}
		ancestors = append(ancestors, ref)
	}
	switch n.Type {
	case "undefined":
		return "[undefined]"
	case "null":
		return nil
	case "string", "date":
		var s string
		_ = json.Unmarshal(n.Value, &s)
		return s
	case "boolean":
		var b bool
		_ = json.Unmarshal(n.Value, &b)
		return b
	case "number":
		var special string
		if json.Unmarshal(n.Value, &special) == nil {
			if special == "-0" {
				return json.Number("-0")
			}
			return "[" + special + "]"
		}
		return json.Number(bytes.TrimSpace(n.Value))
	case "bigint":
		var digits string
		_ = json.Unmarshal(n.Value, &digits)
		return "[BigInt: " + digits + "n]"
	case "regexp":
		var re struct{ Pattern, Flags string }
		_ = json.Unmarshal(n.Value, &re)
		return "/" + re.Pattern + "/" + re.Flags
	case "array", "set":
		if len(n.Value) == 0 {
			return "[" + titleCase(n.Type) + "]"
		}
		children := n.children()
		items := make([]any, len(children))
		for i, child := range children {
			items[i] = c.convert(child, ancestors)
		}
		return items
	case "object", "map":
		if len(n.Value) == 0 {
			return "[" + titleCase(n.Type) + "]"
		}
		obj := orderedObject{}
		for _, e := range n.entries() {
			key := e.key
			if e.keyNode != nil {
				key = keyString(c.convert(e.keyNode, ancestors))
			}
			obj = append(obj, field{key, c.convert(e.value, ancestors)})
		}
		return obj
	case "node":
		return describeNode(n.Value)
	case "function":
		return "[Function]"
	case "error":
		return "[Error]"
	case "symbol":
		return "[Symbol]"
	default: // window, promise, weakmap, weakset, proxy, typedarray, arraybuffer, generator…
		return "[" + titleCase(n.Type) + "]"
	}
}

// describeNode renders a DOM node the way an element reads in HTML: <div id="a">.
func describeNode(raw json.RawMessage) string {
	var node struct {
		NodeType   int               `json:"nodeType"`
		LocalName  string            `json:"localName"`
		NodeValue  string            `json:"nodeValue"`
		Attributes map[string]string `json:"attributes"`
	}
	_ = json.Unmarshal(raw, &node)
	switch node.NodeType {
	case 1:
		names := make([]string, 0, len(node.Attributes))
		for name := range node.Attributes {
			names = append(names, name)
		}
		sort.Strings(names)
		var b strings.Builder
		b.WriteString("<" + node.LocalName)
		for _, name := range names {
			fmt.Fprintf(&b, " %s=%q", name, Clip(node.Attributes[name], 80))
		}
		b.WriteString(">")
		return b.String()
	case 3:
		return fmt.Sprintf("[Text: %q]", Clip(node.NodeValue, 80))
	case 9:
		return "[Document]"
	default:
		return fmt.Sprintf("[Node: type %d]", node.NodeType)
	}
}

func keyString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := EncodeJSON(v)
	return string(b)
}

func titleCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// orderedObject is a JSON object that keeps the JavaScript property order.
type orderedObject []field

type field struct {
	key   string
	value any
}

// MarshalJSON writes the fields in order.
func (o orderedObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := EncodeJSON(f.key)
		b.Write(key)
		b.WriteByte(':')
		value, err := EncodeJSON(f.value)
		if err != nil {
			return nil, err
		}
		b.Write(value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// EncodeJSON marshals v compactly without escaping <, > and &: results are
// read by a model, not embedded in HTML.
func EncodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

package tools

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/chromekeeper/chromekeeper/session"
)

// args reads a call's arguments leniently where a model is commonly sloppy
// ("5000" for 5000, "true" for true) and strictly where a mistake would go
// unnoticed (unknown names, wrong enum values). The first problem is kept and
// reported as INVALID_INPUT naming the argument.
type args struct {
	values map[string]any
	known  []string
	err    *session.Error
}

func newArgs(raw any, known ...string) *args {
	a := &args{known: known}
	switch v := raw.(type) {
	case nil:
		a.values = map[string]any{}
	case map[string]any:
		a.values = v
	default:
		a.fail("arguments must be an object")
		a.values = map[string]any{}
	}
	var unknown []string
	for name := range a.values {
		if !slices.Contains(known, name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		a.fail("unknown argument %s; this tool takes: %s", strings.Join(unknown, ", "), strings.Join(known, ", "))
	}
	return a
}

func (a *args) fail(format string, v ...any) {
	if a.err == nil {
		a.err = session.Errorf(session.CodeInvalidInput, format, v...)
	}
}

// problem returns the first invalid argument as an error, or nil.
func (a *args) problem() error {
	if a.err == nil {
		return nil
	}
	return a.err
}

func (a *args) present(name string) bool {
	v, ok := a.values[name]
	return ok && v != nil
}

// str returns a string argument; required makes absence (or "") an error.
func (a *args) str(name string, required bool) string {
	v, ok := a.values[name]
	if !ok || v == nil {
		if required {
			a.fail("%s is required", name)
		}
		return ""
	}
	s, ok := v.(string)
	if !ok {
		a.fail("%s must be a string, got %T", name, v)
		return ""
	}
	if required && strings.TrimSpace(s) == "" {
		a.fail("%s must not be empty", name)
	}
	return s
}

// strs returns a list-of-strings argument; one string is a list of one.
func (a *args) strs(name string) []string {
	v, ok := a.values[name]
	if !ok || v == nil {
		return nil
	}
	switch list := v.(type) {
	case string:
		return []string{list}
	case []any:
		out := make([]string, 0, len(list))
		for _, item := range list {
			s, ok := item.(string)
			if !ok {
				a.fail("%s must be a list of strings, got %T in it", name, item)
				return nil
			}
			out = append(out, s)
		}
		return out
	}
	a.fail("%s must be a list of strings, got %T", name, v)
	return nil
}

// oneOfEach returns a list argument (or one comma-separated string) whose
// every item must be one of allowed.
func (a *args) oneOfEach(name string, allowed []string) []string {
	var out []string
	for _, v := range a.strs(name) {
		for _, item := range strings.Split(v, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			if !slices.Contains(allowed, item) {
				a.fail("%s: %q is not one of %s", name, item, strings.Join(allowed, ", "))
				return nil
			}
			out = append(out, item)
		}
	}
	return out
}

// boolean returns a boolean argument, or def when absent.
func (a *args) boolean(name string, def bool) bool {
	v, ok := a.values[name]
	if !ok || v == nil {
		return def
	}
	switch b := v.(type) {
	case bool:
		return b
	case string:
		if parsed, err := strconv.ParseBool(b); err == nil {
			return parsed
		}
	}
	a.fail("%s must be true or false, got %v", name, v)
	return def
}

// integer returns an integer argument within [lo, hi], or def when absent.
func (a *args) integer(name string, def, lo, hi int) int {
	v, ok := a.values[name]
	if !ok || v == nil {
		return def
	}
	var f float64
	switch n := v.(type) {
	case float64:
		f = n
	case int:
		f = float64(n)
	case string:
		parsed, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
		if err != nil {
			a.fail("%s must be an integer, got %q", name, n)
			return def
		}
		f = parsed
	default:
		a.fail("%s must be an integer, got %T", name, v)
		return def
	}
	if f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		a.fail("%s must be an integer from %d to %d, got %v", name, lo, hi, v)
		return def
	}
	return int(f)
}

// enum returns a string argument that must be one of allowed, or def when absent.
func (a *args) enum(name, def string, allowed []string) string {
	if !a.present(name) {
		return def
	}
	s := strings.ToLower(strings.TrimSpace(a.str(name, false)))
	if a.err != nil {
		return def
	}
	if !slices.Contains(allowed, s) {
		a.fail("%s must be one of %s, got %q", name, strings.Join(allowed, ", "), s)
		return def
	}
	return s
}

// exclusive reports an error when more than one of names is given.
func (a *args) exclusive(names ...string) {
	var set []string
	for _, n := range names {
		if a.present(n) {
			set = append(set, n)
		}
	}
	if len(set) > 1 {
		a.fail("%s cannot be combined", strings.Join(set, " and "))
	}
}

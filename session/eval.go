package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-rod/rod/lib/cdp"
	"github.com/go-rod/rod/lib/proto"
	"go.uber.org/zap"

	"github.com/chromekeeper/chromekeeper/browser"
)

const (
	// evalMaxDepth bounds how deep an object result is serialized.
	evalMaxDepth = 8
	// evalObjectGroup holds the remote objects evaluation creates, released after each call.
	evalObjectGroup = "chromekeeper-eval"
	// stackFrames is how many stack lines an exception keeps.
	stackFrames = 5
)

// EvalResult is a JavaScript value made JSON: Type is the JavaScript type
// (number, string, object, array, node, undefined, …) and Value a JSON-ready
// form of it, where values JSON cannot hold are described in brackets:
// "[undefined]", "[NaN]", "[Circular]", "[Function: f]", "<div id=\"x\">".
type EvalResult struct {
	Type    string
	Value   any
	Dialogs []Dialog
}

// evaluateParams is Runtime.evaluate with the fields rod's proto lacks or
// renders in a way chromekeeper does not want.
type evaluateParams struct {
	Expression           string               `json:"expression"`
	AwaitPromise         bool                 `json:"awaitPromise,omitempty"`
	ReplMode             bool                 `json:"replMode,omitempty"`
	UserGesture          bool                 `json:"userGesture,omitempty"`
	ObjectGroup          string               `json:"objectGroup,omitempty"`
	Timeout              float64              `json:"timeout,omitempty"`
	SerializationOptions serializationOptions `json:"serializationOptions"`
}

type callFunctionParams struct {
	FunctionDeclaration  string               `json:"functionDeclaration"`
	ObjectID             string               `json:"objectId"`
	AwaitPromise         bool                 `json:"awaitPromise"`
	ObjectGroup          string               `json:"objectGroup,omitempty"`
	SerializationOptions serializationOptions `json:"serializationOptions"`
}

type serializationOptions struct {
	Serialization        string         `json:"serialization"`
	MaxDepth             int            `json:"maxDepth"`
	AdditionalParameters map[string]any `json:"additionalParameters,omitempty"`
}

var deepSerialization = serializationOptions{
	Serialization:        "deep",
	MaxDepth:             evalMaxDepth,
	AdditionalParameters: map[string]any{"maxNodeDepth": 0, "includeShadowTree": "none"},
}

type evalAnswer struct {
	Result struct {
		Type        string          `json:"type"`
		Subtype     string          `json:"subtype"`
		Description string          `json:"description"`
		ObjectID    string          `json:"objectId"`
		Deep        *serializedNode `json:"deepSerializedValue"`
	} `json:"result"`
	ExceptionDetails *exceptionDetails `json:"exceptionDetails"`
}

// Eval evaluates expression in the page's main world; see evaluator.eval.
// Dialogs the evaluation opened are reported with the result.
func (p *Page) Eval(ctx context.Context, expression string, awaitPromise bool, timeout time.Duration) (*EvalResult, error) {
	res, err := evaluator{p.conn, p.sessionID, p.log}.eval(ctx, expression, awaitPromise, timeout)
	if err != nil {
		return nil, err
	}
	res.Dialogs = p.takeDialogs()
	return res, nil
}

// Eval evaluates expression in the worker's global scope; see evaluator.eval.
func (w *Worker) Eval(ctx context.Context, expression string, awaitPromise bool, timeout time.Duration) (*EvalResult, error) {
	return evaluator{w.conn, w.sessionID, w.log}.eval(ctx, expression, awaitPromise, timeout)
}

// evaluator runs agent JavaScript in one target with raw Runtime.evaluate: it
// has a timeout, where rod's callFunctionOn-based Eval has none.
type evaluator struct {
	conn      *browser.Conn
	sessionID string
	log       *zap.Logger
}

func (e evaluator) cdp(ctx context.Context) proto.Client { return e.conn.Session(ctx, e.sessionID) }

// eval evaluates expression in REPL mode (top-level await, redeclarable let),
// awaiting a returned promise when awaitPromise is set. A thrown error is
// EVAL_EXCEPTION with the first stack frames; running past timeout terminates
// the script and is TIMEOUT.
func (e evaluator) eval(ctx context.Context, expression string, awaitPromise bool, timeout time.Duration) (*EvalResult, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	params := evaluateParams{
		Expression:           expression,
		AwaitPromise:         awaitPromise,
		ReplMode:             true,
		UserGesture:          true,
		ObjectGroup:          evalObjectGroup,
		Timeout:              float64(timeout.Milliseconds()),
		SerializationOptions: deepSerialization,
	}
	raw, err := e.conn.Call(ctx, e.sessionID, "Runtime.evaluate", params)
	if err != nil {
		return nil, e.failed(ctx, err, timeout)
	}
	var ans evalAnswer
	if err := json.Unmarshal(raw, &ans); err != nil {
		return nil, fmt.Errorf("decode evaluation result: %w", err)
	}
	// In REPL mode a returned promise is not awaited: await it here.
	if awaitPromise && ans.ExceptionDetails == nil && ans.Result.Subtype == "promise" && ans.Result.ObjectID != "" {
		raw, err = e.conn.Call(ctx, e.sessionID, "Runtime.callFunctionOn", callFunctionParams{
			FunctionDeclaration:  "function() { return this; }",
			ObjectID:             ans.Result.ObjectID,
			AwaitPromise:         true,
			ObjectGroup:          evalObjectGroup,
			SerializationOptions: deepSerialization,
		})
		if err != nil {
			return nil, e.failed(ctx, err, timeout)
		}
		ans = evalAnswer{}
		if err := json.Unmarshal(raw, &ans); err != nil {
			return nil, fmt.Errorf("decode evaluation result: %w", err)
		}
	}
	if ans.Result.ObjectID != "" {
		go e.releaseObjects()
	}
	if ans.ExceptionDetails != nil {
		return nil, exceptionError(ans.ExceptionDetails, timeout)
	}
	result := &EvalResult{Type: ans.Result.Type}
	if ans.Result.Deep != nil {
		// The serialization's type is the most specific: node, window, map, null…
		result.Type = ans.Result.Deep.Type
		result.Value = ans.Result.Deep.value(ans.Result.Description)
	}
	return result, nil
}

// failed turns a failed evaluate call into an error. Past the deadline the
// target may be wedged in a loop: terminate the running script so that it
// answers the next call.
func (e evaluator) failed(ctx context.Context, err error, timeout time.Duration) error {
	var protocolErr *cdp.Error
	if errors.As(err, &protocolErr) {
		// For example "Execution context was destroyed." when the page
		// navigated during the evaluation.
		return &Error{Code: CodeEvalException, Message: protocolErr.Message}
	}
	if !errors.Is(err, context.DeadlineExceeded) || context.Cause(ctx) != context.DeadlineExceeded {
		return err
	}
	terminate, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	_ = proto.RuntimeTerminateExecution{}.Call(e.cdp(terminate))
	return evalTimedOut(timeout, err)
}

// evalTimedOut is the TIMEOUT of an evaluation whose script was terminated.
func evalTimedOut(timeout time.Duration, cause error) *Error {
	return &Error{Code: CodeTimeout, cause: cause,
		Message: fmt.Sprintf("evaluation did not finish within %s; its script was terminated", timeout)}
}

func (e evaluator) releaseObjects() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := (proto.RuntimeReleaseObjectGroup{ObjectGroup: evalObjectGroup}).Call(e.cdp(ctx)); err != nil {
		e.log.Debug("release eval objects", zap.Error(err))
	}
}

// exceptionError describes a thrown value: the message, then the first stack frames.
func exceptionError(d *exceptionDetails, timeout time.Duration) error {
	text := d.Text
	if d.Exception != nil {
		if d.Exception.Description != "" {
			text = d.Exception.Description
		} else if len(d.Exception.Value) > 0 {
			text = "Uncaught " + string(d.Exception.Value)
		}
	}
	lines := strings.Split(text, "\n")
	message := lines[0]
	if strings.Contains(message, "Execution was terminated") {
		return evalTimedOut(timeout, nil)
	}
	var stack []string
	for _, line := range lines[1:] {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "at ") && len(stack) < stackFrames {
			stack = append(stack, line)
		}
	}
	if len(stack) == 0 {
		stack = d.StackTrace.frames()
	}
	if len(stack) == 0 && d.LineNumber+d.ColumnNumber > 0 {
		stack = append(stack, fmt.Sprintf("at line %d, column %d of the expression", d.LineNumber+1, d.ColumnNumber+1))
	}
	e := &Error{Code: CodeEvalException, Message: message}
	for _, frame := range stack {
		e.Details = append(e.Details, "Stack: "+frame)
	}
	return e
}

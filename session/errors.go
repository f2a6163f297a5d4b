package session

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-rod/rod/lib/cdp"

	"github.com/chromekeeper/chromekeeper/browser"
)

// Code is a stable error code of the product contract (SPEC §4). Every tool
// answers failures with one of these, taken from this one table.
type Code string

// The error codes.
const (
	CodeInvalidInput       Code = "INVALID_INPUT"
	CodeBrowserNotFound    Code = "BROWSER_NOT_FOUND"
	CodeBrowserUnreachable Code = "BROWSER_UNREACHABLE"
	CodeTargetNotFound     Code = "TARGET_NOT_FOUND"
	CodeNavigationFailed   Code = "NAVIGATION_FAILED"
	CodeEvalException      Code = "EVAL_EXCEPTION"
	CodeTimeout            Code = "TIMEOUT"
	CodeNotObserving       Code = "NOT_OBSERVING"
	CodeBodyNotAvailable   Code = "BODY_NOT_AVAILABLE"
	CodeSecurityBlocked    Code = "SECURITY_BLOCKED"
	CodeSessionLimit       Code = "SESSION_LIMIT"
	CodeInternal           Code = "INTERNAL_ERROR"
)

// Error is a failure the model can act on: a code, a one-line message and
// optional detail lines (a stack, a hint).
type Error struct {
	Code    Code
	Message string
	Details []string
	cause   error // what the error stands for, such as context.DeadlineExceeded
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Unwrap returns the underlying cause, so that errors.Is(err,
// context.DeadlineExceeded) still holds for a TIMEOUT.
func (e *Error) Unwrap() error { return e.cause }

// Errorf returns an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// protocolMessage is the message of a CDP error, or the error's text.
func protocolMessage(err error) string {
	var protocolErr *cdp.Error
	if errors.As(err, &protocolErr) {
		return protocolErr.Message
	}
	return err.Error()
}

// AsError classifies any error into an *Error: an *Error passes through,
// known sentinels get their code, anything else is INTERNAL_ERROR.
func AsError(err error) *Error {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, browser.ErrNotFound):
		return &Error{Code: CodeBrowserNotFound, Message: err.Error()}
	case errors.Is(err, browser.ErrRemoteEndpoint):
		return &Error{Code: CodeSecurityBlocked, Message: err.Error()}
	case errors.Is(err, browser.ErrUnreachable), errors.Is(err, browser.ErrLaunch),
		errors.Is(err, browser.ErrConnectionLost), errors.Is(err, browser.ErrUnresponsive):
		return &Error{Code: CodeBrowserUnreachable, Message: err.Error()}
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Code: CodeTimeout, Message: "the operation timed out", cause: err}
	case errors.Is(err, context.Canceled):
		return &Error{Code: CodeInternal, Message: "the call was cancelled"}
	default:
		return &Error{Code: CodeInternal, Message: err.Error()}
	}
}

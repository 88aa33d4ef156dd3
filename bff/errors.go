package bff

import (
	"errors"
	"fmt"
	"time"
)

// Error codes: each maps to one HTTP status in package web. Messages of an
// *Error are safe to show to the user; anything else is an internal error,
// logged and never shown.
const (
	ECONFLICT     = "conflict"     // the request clashes with the current state
	EINTERNAL     = "internal"     // a fault of ours: logged, never detailed
	EINVALID      = "invalid"      // bad input; Field names the form field
	ENOTFOUND     = "not_found"    // no such thing, or not the caller's
	EUNAUTHORIZED = "unauthorized" // sign-in required or failed
	EFORBIDDEN    = "forbidden"    // a form not from this site, or expired
	EMALFORMED    = "malformed"    // a request no page of the app makes (a tampered link)
	EGONE         = "gone"         // the intake expired
	ERATELIMIT    = "rate_limited" // too many requests; RetryAfter says how long
	EQUOTA        = "quota"        // the day's turns or intakes are spent
	EUNAVAILABLE  = "unavailable"  // the service cannot be reached right now
)

// MsgCannotSave is what a person is told when the database refuses writes
// (a full disk, a read-only database): nothing of their request was kept,
// and the page shows what they typed again.
const MsgCannotSave = "This app cannot save anything right now, so nothing you typed has been sent. " +
	"What you typed is still here: please try again in a few minutes."

// Error is an application error with a code and a message safe to show.
// It is the one error kind of the app: services return it, and package web
// makes its own refusals with it too.
type Error struct {
	Code    string
	Message string
	Field   string // for EINVALID: the form field at fault
	// Fields, for EINVALID about several fields at once: field -> message.
	Fields map[string]string
	// RetryAfter, for ERATELIMIT and EUNAVAILABLE: how long to wait before
	// trying again (sent as Retry-After); 0 when unknown.
	RetryAfter time.Duration
	// Cause, for EINVALID, is the detail behind Message that a page may
	// show in full: a suite file's *scenarios.Problem list, one a line.
	// It is as safe to show as Message; nil for most errors.
	Cause error
}

func (e *Error) Error() string {
	return fmt.Sprintf("bff error: code=%s message=%s", e.Code, e.Message)
}

// Unwrap is the Cause.
func (e *Error) Unwrap() error { return e.Cause }

// Errorf returns an *Error with a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns an EINVALID error about one field.
func Invalid(field, format string, args ...any) *Error {
	return &Error{Code: EINVALID, Field: field, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err, EINTERNAL for errors that are not ours.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the message of err safe to show.
func ErrorMessage(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Message
	}
	return "Something went wrong on our side. It has been logged; please try again."
}

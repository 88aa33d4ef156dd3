package bff

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits of the forms, mirroring the service's (spec, Limits) so that no bad
// request reaches it.
const (
	MaxAge             = 130
	MaxHistoryChars    = 4000
	MaxMessageChars    = 8000
	MaxReviewNoteChars = 2000
	// The sign-in form's fields: a username as `clinician add` makes them, a
	// password no longer than bcrypt reads.
	MaxUsernameChars = 32
	MaxPasswordBytes = 72
	// MaxSubmissionIDBytes bounds the form's submission id, which is kept
	// with each turn (and, for a start, in memory for ten minutes). The app
	// makes them 28 bytes ("sub_" and 24 hex digits); anything much longer
	// was not made by the app's forms, and is refused before it is stored.
	MaxSubmissionIDBytes = 128
)

// CheckSubmissionID applies MaxSubmissionIDBytes.
func CheckSubmissionID(id string) error {
	if len(id) > MaxSubmissionIDBytes {
		return Invalid("submission_id", "The form's submission id is %s bytes; the limit is %d. Reload the page for a fresh form.", Count(len(id)), MaxSubmissionIDBytes)
	}
	return nil
}

// StartForm is the start page's form as the browser sent it.
type StartForm struct {
	Age          string
	Sex          string
	History      string
	Synthetic    bool
	SubmissionID string
}

// NewIntake is what a valid start form asks the service for.
type NewIntake struct {
	AgeYears *int   // 0 to 130, or nil
	Sex      string // "", female, male or intersex
	History  string // at most 4,000 characters
}

// Validate returns the request the form describes, or an EINVALID *Error
// whose Fields name every field at fault.
func (f StartForm) Validate() (NewIntake, error) {
	var ni NewIntake
	bad := map[string]string{}
	if a := strings.TrimSpace(f.Age); a != "" {
		n, err := strconv.Atoi(a)
		if err != nil || n < 0 || n > MaxAge {
			bad["age"] = fmt.Sprintf("Age must be a whole number from 0 to %d, or left empty.", MaxAge)
		} else {
			ni.AgeYears = &n
		}
	}
	switch f.Sex {
	case "", "female", "male", "intersex":
		ni.Sex = f.Sex
	default:
		bad["sex"] = "Sex must be female, male, intersex, or left unanswered."
	}
	if n := utf8.RuneCountInString(f.History); n > MaxHistoryChars {
		bad["history"] = fmt.Sprintf("Medical history must be at most %s characters; it has %s.", Count(MaxHistoryChars), Count(n))
	}
	if _, ok := bad["history"]; !ok {
		if id, found := FindRealIdentifier(f.History); found {
			bad["history"] = refusedIdentifier("The medical history", id)
		}
	}
	ni.History = f.History
	if !f.Synthetic {
		bad["synthetic"] = "Confirm that this is a synthetic scenario: real patient data must never be entered."
	}
	if len(bad) > 0 {
		return ni, &Error{Code: EINVALID, Message: "Some answers need another look.", Fields: bad}
	}
	return ni, nil
}

// CheckMessage applies the service's message rule (1 to 8,000 characters)
// and refuses a blank message, which no patient means to send.
func CheckMessage(m string) error {
	n := utf8.RuneCountInString(m)
	switch {
	case strings.TrimSpace(m) == "":
		return Invalid("message", "Type a message before sending.")
	case n > MaxMessageChars:
		return Invalid("message", "Your message is %s characters; the limit is %s. Please shorten it.", Count(n), Count(MaxMessageChars))
	}
	if id, found := FindRealIdentifier(m); found {
		return Invalid("message", "%s", refusedIdentifier("Your message", id))
	}
	return nil
}

// refusedIdentifier says what looked real and what to use instead. The
// identifier is shown masked; the text is neither sent nor stored.
func refusedIdentifier(what string, id RealIdentifier) string {
	return fmt.Sprintf("%s contains what looks like %s (%s). This app is for synthetic scenarios only: %s. Nothing was sent or stored.",
		what, id.Kind, id.Masked, id.Advice)
}

// Count writes n with a thousands separator, for messages.
func Count(n int) string {
	s := strconv.Itoa(n)
	if len(s) <= 3 {
		return s
	}
	return s[:len(s)-3] + "," + s[len(s)-3:]
}

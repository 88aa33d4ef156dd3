package bff

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// WorkItem is one row of the clinicians' worklist.
type WorkItem struct {
	Intake *Intake
	Review *Review // the latest review, nil if none
	Group  int     // the worklist's order: the Group constants, see WorkGroup
	// Opening is the patient's first message, "" before any: what tells
	// intakes apart at a glance.
	Opening string
}

// WorkGroup names, in worklist order.
const (
	GroupUrgent   = iota // urgent and not yet reviewed
	GroupToReview        // closed, awaiting review
	GroupOpen            // still in conversation
	GroupExpired         // passed the two-hour limit, not reviewed
	GroupReviewed        // reviewed
)

// WorkGroup is an intake's worklist group as its stored fields say: the
// latest review time ("" or zero when never reviewed), then urgency, status
// and terminal. Stores compute the same in SQL; an open intake past its
// ExpiresAt is GroupOpen until it is marked expired (MarkExpired, which the
// worklist does before it reads a page).
func WorkGroup(in *Intake, reviewed bool) int {
	switch {
	case reviewed:
		return GroupReviewed
	case in.Urgent:
		return GroupUrgent
	case in.Status == StatusClosed || in.Terminal:
		return GroupToReview
	case in.Status == StatusOpen:
		return GroupOpen
	}
	return GroupExpired
}

// WorklistFilter narrows the worklist; zero values select everything.
type WorklistFilter struct {
	Status     string // open, closed or expired
	UrgentOnly bool
	Unreviewed bool
}

// WorklistCursor is a place in the worklist's order: the key (group, then
// UpdatedAt newest first, then ID descending) of a row a page starts after
// (or, Backward, ends before). The zero cursor is the start of the list.
type WorklistCursor struct {
	Group     int
	UpdatedAt time.Time
	ID        string
	Backward  bool // the page of rows before this key (a "Previous" link)
}

// IsZero reports whether c is the start of the list.
func (c WorklistCursor) IsZero() bool { return c.ID == "" }

// KeyOf is the cursor of an item's place in the order (forward).
func KeyOf(it *WorkItem) WorklistCursor {
	return WorklistCursor{Group: it.Group, UpdatedAt: it.Intake.UpdatedAt, ID: it.Intake.ID}
}

// maxCursorID bounds a cursor's id: ids are short; anything longer is junk.
const maxCursorID = 128

// String encodes c for a URL: opaque to the browser, decoded only by
// ParseWorklistCursor. "" for the zero cursor.
func (c WorklistCursor) String() string {
	if c.IsZero() {
		return ""
	}
	dir := "a"
	if c.Backward {
		dir = "b"
	}
	raw := fmt.Sprintf("1.%s.%d.%d.%s", dir, c.Group, c.UpdatedAt.UnixNano(), c.ID)
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// ParseWorklistCursor decodes a cursor made by String; "" is the zero
// cursor. Anything else that does not decode to a valid key is an *Error
// with EINVALID naming field: a forged cursor that does decode is harmless,
// as it only names a place in an order the clinician may read anyway.
func ParseWorklistCursor(field, s string) (WorklistCursor, error) {
	if s == "" {
		return WorklistCursor{}, nil
	}
	bad := Invalid(field, "The %s parameter is not a worklist position this app made. Start again from the first page.", field)
	if len(s) > 2*maxCursorID {
		return WorklistCursor{}, bad
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return WorklistCursor{}, bad
	}
	parts := strings.SplitN(string(b), ".", 5)
	if len(parts) != 5 || parts[0] != "1" || (parts[1] != "a" && parts[1] != "b") {
		return WorklistCursor{}, bad
	}
	g, err := strconv.Atoi(parts[2])
	if err != nil || g < GroupUrgent || g > GroupReviewed {
		return WorklistCursor{}, bad
	}
	ns, err := strconv.ParseInt(parts[3], 10, 64)
	if err != nil || ns < 0 {
		return WorklistCursor{}, bad
	}
	id := parts[4]
	if id == "" || len(id) > maxCursorID || strings.ContainsFunc(id, func(r rune) bool { return r < 0x21 || r > 0x7e }) {
		return WorklistCursor{}, bad
	}
	return WorklistCursor{Group: g, UpdatedAt: time.Unix(0, ns).UTC(), ID: id, Backward: parts[1] == "b"}, nil
}

// WorklistPage is one page of the worklist, in worklist order.
type WorklistPage struct {
	Items []*WorkItem
	// Next and Prev are the cursors of the following and preceding pages;
	// zero when there is none (Prev is zero on the first page).
	Next, Prev WorklistCursor
	First      bool // this is the first page
}

// WorklistStore keeps what the worklist shows beyond the intakes' own rows.
// Error contract as for the other stores.
type WorklistStore interface {
	// OpeningMessages returns each intake's first turn's message, keyed by
	// intake id (intakes without a turn are absent).
	OpeningMessages(ctx context.Context) (map[string]string, error)
	// SetActiveProtocol records an intake's active protocol, and nothing
	// else of it (a turn may be updating the rest); ENOTFOUND for no such
	// intake.
	SetActiveProtocol(ctx context.Context, id, protocol string) error
	// WorklistPage returns at most limit items matching f, in worklist
	// order, strictly after from (or, from.Backward, strictly before it);
	// more reports that further matching items lie beyond them in that
	// direction. Filters and order run in the database on indexes. Items
	// carry their latest review and opening message. No ENOTFOUND: an empty
	// page is no error.
	WorklistPage(ctx context.Context, f WorklistFilter, from WorklistCursor, limit int) (items []*WorkItem, more bool, err error)
	// WorkItem returns one intake's worklist row; ENOTFOUND for no such
	// intake.
	WorkItem(ctx context.Context, id string) (*WorkItem, error)
	// ExpiredOpen returns the ids of intakes still stored open whose
	// ExpiresAt is at or before now (an index on expires_at of open
	// intakes), so the worklist can mark them expired before it reads.
	ExpiredOpen(ctx context.Context, now time.Time) ([]string, error)
}

// Matches reports whether the item passes f (as the stores' SQL does).
func (f WorklistFilter) Matches(it *WorkItem) bool {
	return (f.Status == "" || it.Intake.Status == f.Status) &&
		(!f.UrgentOnly || it.Intake.Urgent) &&
		(!f.Unreviewed || it.Review == nil)
}

// Before reports whether c comes before o in worklist order.
func (c WorklistCursor) Before(o WorklistCursor) bool {
	if c.Group != o.Group {
		return c.Group < o.Group
	}
	if !c.UpdatedAt.Equal(o.UpdatedAt) {
		return c.UpdatedAt.After(o.UpdatedAt)
	}
	return c.ID > o.ID
}

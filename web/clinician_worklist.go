package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/templates"
)

func worklistFilter(c *fiber.Ctx) (bff.WorklistFilter, templates.WorklistFilter) {
	f := bff.WorklistFilter{UrgentOnly: c.Query("urgent") != "", Unreviewed: c.Query("unreviewed") != ""}
	switch st := c.Query("status"); st {
	case bff.StatusOpen, bff.StatusClosed, bff.StatusExpired:
		f.Status = st
	}
	return f, templates.WorklistFilter{Status: f.Status, UrgentOnly: f.UrgentOnly, Unreviewed: f.Unreviewed}
}

// worklistQuery is the page's query string: the filter and, when not the
// first page, the cursor ("" for neither).
func worklistQuery(f templates.WorklistFilter, cursor bff.WorklistCursor) string {
	q := url.Values{}
	if f.Status != "" {
		q.Set("status", f.Status)
	}
	if f.UrgentOnly {
		q.Set("urgent", "1")
	}
	if f.Unreviewed {
		q.Set("unreviewed", "1")
	}
	if !cursor.IsZero() {
		q.Set("cursor", cursor.String())
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// worklistCursor reads the page's cursor: a bad one is a 400 that names the
// parameter (it came from a link this app made, so it was tampered with or
// cut short).
func worklistCursor(c *fiber.Ctx) (bff.WorklistCursor, error) {
	cur, err := bff.ParseWorklistCursor("cursor", c.Query("cursor"))
	if err != nil {
		return cur, &bff.Error{Code: bff.EMALFORMED, Message: bff.ErrorMessage(err)}
	}
	return cur, nil
}

// showWorklist shows one page of the intakes for review (keyset pages:
// First, Previous and Next are plain links); it updates its rows live.
func (s *Server) showWorklist(c *fiber.Ctx) error {
	f, fv := worklistFilter(c)
	from, err := worklistCursor(c)
	if err != nil {
		return err
	}
	p, err := s.reviews.WorklistPage(c.UserContext(), f, from, 0)
	if err != nil {
		return err
	}
	const base = "/clinician"
	page := templates.WorklistPage{
		Layout:    s.clinicianLayout(c, "Worklist"),
		Filter:    fv,
		Rows:      worklistRows(p.Items),
		RowURL:    "/clinician/worklist/row/",
		RowQuery:  worklistQuery(fv, bff.WorklistCursor{}),
		EventsURL: "/clinician/events",
		AuditURL:  "/clinician/audit",
		PageURL:   base + worklistQuery(fv, bff.WorklistCursor{}),
		FirstPage: p.First,
		LastPage:  p.Next.IsZero(),
	}
	if !p.First {
		page.FirstURL = base + worklistQuery(fv, bff.WorklistCursor{})
	}
	if !p.Prev.IsZero() {
		page.PrevURL = base + worklistQuery(fv, p.Prev)
	}
	if !p.Next.IsZero() {
		page.NextURL = base + worklistQuery(fv, p.Next)
	}
	return render(c, http.StatusOK, templates.WorklistPageView(page))
}

// showWorklistRow is one intake's row, for the live feed to put in place:
// the <tr> when it matches the filter, else 204 (the page drops the row).
func (s *Server) showWorklistRow(c *fiber.Ctx) error {
	f, _ := worklistFilter(c)
	it, err := s.reviews.WorkItem(c.UserContext(), param(c, "id"))
	if err != nil {
		return err
	}
	if !f.Matches(it) {
		return c.SendStatus(http.StatusNoContent)
	}
	return render(c, http.StatusOK, templates.WorklistRows(worklistRows([]*bff.WorkItem{it})))
}

var groupNames = map[int]string{
	bff.GroupUrgent: "Urgent", bff.GroupToReview: "Awaiting review", bff.GroupOpen: "Open",
	bff.GroupExpired: "Expired", bff.GroupReviewed: "Reviewed",
}

func worklistRows(items []*bff.WorkItem) []templates.WorklistRow {
	rows := make([]templates.WorklistRow, 0, len(items))
	for _, it := range items {
		in := it.Intake
		r := templates.WorklistRow{
			ID: in.ID, URL: "/clinician/intakes/" + in.ID, Group: groupNames[it.Group],
			Created: compact(in.CreatedAt), Updated: compact(in.UpdatedAt), Status: in.Status, Turns: in.TurnCount,
			SafetyStatus: in.SafetyStatus, DispositionLabel: in.DispositionLabel, Urgent: in.Urgent,
			ActiveProtocol: in.ActiveProtocol, Rank: it.Group, SortTime: in.UpdatedAt.UTC().Format(sortTimeLayout),
			DownloadURL: "/clinician/intakes/" + in.ID + "/handoff.json",
			FHIRURL:     "/clinician/intakes/" + in.ID + "/handoff.fhir.json",
		}
		r.Opening, r.OpeningFull = shorten(it.Opening, openingChars)
		if it.Review != nil {
			r.Reviewed, r.ReviewedBy, r.ReviewedAt = true, it.Review.Clinician, compact(it.Review.ReviewedAt)
		}
		rows = append(rows, r)
	}
	return rows
}

// sortTimeLayout is fixed-width, so the page's script orders rows by
// comparing the text.
const sortTimeLayout = "2006-01-02T15:04:05.000000000Z"

// openingChars is how much of an opening message a worklist row shows.
const openingChars = 80

// shorten cuts s (spaces collapsed) to at most n characters at a word
// boundary with an ellipsis; full is the whole text when it was cut, else "".
func shorten(s string, n int) (short, full string) {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s, ""
	}
	r := []rune(s)[:n]
	cut := string(r)
	if i := strings.LastIndexByte(cut, ' '); i > n/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,.;:") + "…", s
}

func clock(t time.Time) string { return t.UTC().Format("2 Jan 2006 15:04:05 UTC") }

// compact is a time for the worklist's narrow columns.
func compact(t time.Time) string { return t.UTC().Format("2 Jan 15:04 UTC") }

// worklistEvents is the live feed of intake changes: one event per change,
// "reload" when the browser was away longer than the feed remembers. The
// stream re-checks the sign-in every Limits.StreamRecheck: signing out (in
// any tab), a disabled account, the idle limit or the session's end closes
// it with a "signedout" event, and a role taken away (the feed needs what
// clinicianRoutes says) with a "forbidden" event, so revoked access stops
// the feed within seconds, not at the next page load.
func (s *Server) worklistEvents(c *fiber.Ctx) error {
	after, _ := strconv.ParseInt(c.Get("Last-Event-ID"), 10, 64)
	token := s.sessions.Token(c.UserContext())
	name := clinicianOf(c)
	path := strings.Clone(c.Path()) // Fiber reuses the request's memory after the handler returns
	release, err := s.caps.openStream("clinician:" + token)
	if err != nil {
		return err
	}
	if after == 0 {
		after = s.reviews.LastWorklistEvent() // a fresh page already shows everything
	}
	s.stream(c, "worklist", release, func(w *eventStream) {
		replay, live, cancel, gap := s.reviews.FollowWorklist(after)
		defer cancel()
		if !w.write("retry: 3000\n: ok\n\n") {
			return
		}
		if gap {
			if !w.write(fmt.Sprintf("id: %d\nevent: reload\ndata: {}\n\n", s.reviews.LastWorklistEvent())) {
				return
			}
			replay = nil
		}
		for _, ev := range replay {
			if !w.write(fmt.Sprintf("id: %d\nevent: %s\ndata: %s\n\n", ev.ID, ev.Name, ev.Data)) {
				return
			}
		}
		heartbeat := time.NewTicker(s.cfg.Limits.Heartbeat)
		defer heartbeat.Stop()
		recheck := time.NewTicker(s.cfg.Limits.StreamRecheck)
		defer recheck.Stop()
		for {
			select {
			case ev, ok := <-live:
				if !ok { // fell behind: the browser reconnects and resumes
					return
				}
				if !w.write(fmt.Sprintf("id: %d\nevent: %s\ndata: %s\n\n", ev.ID, ev.Name, ev.Data)) {
					return
				}
			case <-recheck.C:
				acc := s.stillSignedIn(token, name)
				if acc == nil {
					w.write("event: signedout\ndata: {}\n\n")
					return
				}
				if !mayOpen(acc, path) {
					w.write("event: forbidden\ndata: {}\n\n")
					return
				}
			case <-heartbeat.C:
				if !w.write(": heartbeat\n\n") {
					return
				}
			case <-s.done:
				w.write("retry: 1000\n\n")
				return
			}
		}
	})
	return nil
}

// stillSignedIn returns name's account, with its roles as they are now,
// while the session token still holds name's sign-in: the session exists
// and has not expired (signing out renews the token, so the old one is
// gone), it names the same clinician, neither the idle limit nor the
// session's lifetime has passed, it was not ended from a sessions page, and
// the account is active; otherwise nil. A store error counts as signed
// out: the browser reconnects and is checked afresh.
func (s *Server) stillSignedIn(token, name string) *bff.Clinician {
	if token == "" || name == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	sctx, err := s.sessions.Load(ctx, token)
	if err != nil || s.sessions.GetString(sctx, sessClinician) != name {
		return nil
	}
	if seen := time.Unix(s.sessions.GetInt64(sctx, sessSeen), 0); s.now().Sub(seen) > s.cfg.ClinicianIdle || s.lifetimeOver(sctx) {
		return nil
	}
	if _, err := s.accounts.SessionActive(ctx, token); err != nil { // ended from a sessions page
		return nil
	}
	acc, err := s.accounts.ActiveClinician(ctx, name)
	if err != nil {
		return nil
	}
	return acc
}

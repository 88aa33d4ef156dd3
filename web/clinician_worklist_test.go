package web_test

import (
	"bufio"
	"context"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
	appwire "github.com/clinical-intake/intake-web/cmd/intake-web/app"
)

// withIntakes stores n intakes before the app starts: a third closed, the
// rest open (none past its expiry), updated a minute apart.
func withIntakes(t *testing.T, n int) func(*appwire.Config) {
	return func(c *appwire.Config) {
		db, err := sqlite.Open(context.Background(), c.DatabasePath, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		now := time.Now()
		for i := range n {
			in := &bff.Intake{ID: fmt.Sprintf("wl_%03d", i), Owner: "o", CreatedAt: now, ExpiresAt: now.Add(24 * time.Hour),
				UpdatedAt: now.Add(-time.Duration(i) * time.Minute), Status: bff.StatusOpen}
			if i%3 == 0 {
				in.Status, in.Terminal = bff.StatusClosed, true
			}
			if err := db.CreateIntake(context.Background(), in); err != nil {
				t.Fatal(err)
			}
		}
	}
}

var (
	rowIDs   = regexp.MustCompile(`data-intake-id="([^"]+)"`)
	pageLink = func(label string) *regexp.Regexp {
		return regexp.MustCompile(`<a (?:rel="\w+" )?href="([^"]*)">` + label + `</a>`)
	}
)

func linkOf(t *testing.T, body, label string) string {
	t.Helper()
	m := pageLink(label).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// TestWorklistPagesWithoutJS follows the plain First, Previous and Next
// links: 50 rows a page, every intake once, the filter kept in every link.
func TestWorklistPagesWithoutJS(t *testing.T) {
	t.Parallel()
	a := startApp(t, withClinician(t, "dr.ada"), withIntakes(t, 120))
	doc := a.browser()
	doc.signIn("dr.ada", clinPassword)

	var pages [][]string
	var bodies []string
	path := "/clinician"
	for path != "" {
		p := doc.get(path)
		if p.status != http.StatusOK {
			t.Fatalf("GET %s: %d", path, p.status)
		}
		var ids []string
		for _, m := range rowIDs.FindAllStringSubmatch(p.body, -1) {
			ids = append(ids, m[1])
		}
		pages, bodies = append(pages, ids), append(bodies, p.body)
		path = linkOf(t, p.body, "Next page")
		if len(pages) > 5 {
			t.Fatal("no end of pages")
		}
	}
	if len(pages) != 3 || len(pages[0]) != 50 || len(pages[1]) != 50 || len(pages[2]) != 20 {
		t.Fatalf("page sizes: %d pages %v", len(pages), pages)
	}
	seen := map[string]bool{}
	for _, ids := range pages {
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("%s on two pages", id)
			}
			seen[id] = true
		}
	}
	if len(seen) != 120 {
		t.Fatalf("%d intakes listed, want 120", len(seen))
	}
	if linkOf(t, bodies[0], "Previous page") != "" || linkOf(t, bodies[0], "First page") != "" {
		t.Error("the first page links a previous or first page")
	}
	// Previous from the third page is the second; First is the first.
	prev := doc.get(linkOf(t, bodies[2], "Previous page"))
	var got []string
	for _, m := range rowIDs.FindAllStringSubmatch(prev.body, -1) {
		got = append(got, m[1])
	}
	if !slices.Equal(got, pages[1]) {
		t.Errorf("Previous from page 3 shows %v, want page 2 %v", got, pages[1])
	}
	if first := linkOf(t, bodies[2], "First page"); first != "/clinician" {
		t.Errorf("First page link %q", first)
	}

	// A filter travels with the links; its pages hold only what it selects.
	closed := doc.get("/clinician?status=closed")
	next := linkOf(t, closed.body, "Next"+" page")
	if n := len(rowIDs.FindAllString(closed.body, -1)); n != 40 || next != "" {
		t.Fatalf("closed filter: %d rows, next %q (want 40, none)", n, next)
	}
	open := doc.get("/clinician?status=open")
	next = linkOf(t, open.body, "Next page")
	if !strings.Contains(next, "status=open") || !strings.Contains(next, "cursor=") {
		t.Fatalf("the next link of a filtered page drops the filter: %q", next)
	}
	if p := doc.get(next); len(rowIDs.FindAllString(p.body, -1)) != 30 || strings.Contains(p.body, `pill--closed`) {
		t.Errorf("second page of open intakes: %d rows", len(rowIDs.FindAllString(p.body, -1)))
	}
}

// TestWorklistBadCursor: a cursor this app did not make is a 400 that names
// the parameter, never a 500.
func TestWorklistBadCursor(t *testing.T) {
	t.Parallel()
	a := startApp(t, withClinician(t, "dr.ada"), withIntakes(t, 3))
	doc := a.browser()
	doc.signIn("dr.ada", clinPassword)
	for _, c := range []string{"garbage!", "MS5hLjkuMS54", "MS5hLjAuLTEueA", strings.Repeat("A", 400), "MS5hLjAuMS4"} {
		p := doc.get("/clinician?cursor=" + c)
		if p.status != http.StatusBadRequest || !strings.Contains(p.body, "cursor parameter") {
			t.Errorf("cursor %q: %d, body names the parameter: %v", c, p.status, strings.Contains(p.body, "cursor parameter"))
		}
	}
	if p := doc.get("/clinician?cursor=" + (bff.WorklistCursor{Group: 2, UpdatedAt: time.Now(), ID: "wl_001"}).String()); p.status != http.StatusOK {
		t.Errorf("a cursor the app made: %d", p.status)
	}
}

// TestWorklistLiveRow: the feed names the changed intake, and its row alone
// comes from the row URL with its place in the order (data-rank,
// data-sort) for the page's script; 204 when it does not match the page's
// filter, 404 for no such intake.
func TestWorklistLiveRow(t *testing.T) {
	t.Parallel()
	a := startApp(t, withClinician(t, "dr.ada"), withIntakes(t, 60))
	doc := a.browser()
	doc.signIn("dr.ada", clinPassword)
	list := doc.get("/clinician").body
	for _, attr := range []string{`data-row-url="/clinician/worklist/row/"`, `data-first-page`, `id="worklist-changes"`} {
		if !strings.Contains(list, attr) {
			t.Fatalf("the page lacks %s", attr)
		}
	}
	if strings.Contains(list, "data-last-page") {
		t.Fatal("the first of two pages says it is the last")
	}

	req, _ := http.NewRequest("GET", a.web.URL+"/clinician/events", nil)
	res, err := doc.http.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("feed: %v %v", err, res)
	}
	defer res.Body.Close()
	got := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			got <- sc.Text()
		}
		close(got)
	}()
	patient := a.browser()
	intake := patient.start()
	id := strings.TrimPrefix(intake, "/intakes/")
	patient.say(intake, "this is an emergency")
	deadline := time.After(10 * time.Second)
	for urgent := false; !urgent; {
		select {
		case line := <-got:
			urgent = strings.HasPrefix(line, "data: ") && strings.Contains(line, id) && strings.Contains(line, `"urgent":true`)
		case <-deadline:
			t.Fatal("no urgent intake event on the worklist feed")
		}
	}
	row := doc.get("/clinician/worklist/row/" + id)
	if row.status != http.StatusOK || len(rowIDs.FindAllString(row.body, -1)) != 1 ||
		!strings.Contains(row.body, `data-intake-id="`+id+`"`) || !strings.Contains(row.body, `data-rank="0"`) ||
		!regexp.MustCompile(`data-sort="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z"`).MatchString(row.body) ||
		!strings.Contains(row.body, "badge--urgent") || strings.Contains(row.body, "<html") {
		t.Fatalf("row fragment: %d %s", row.status, row.body)
	}
	if p := doc.get("/clinician/worklist/row/" + id + "?status=open"); p.status != http.StatusNoContent || p.body != "" {
		t.Errorf("a row outside the filter: %d %q", p.status, p.body)
	}
	if p := doc.get("/clinician/worklist/row/" + id + "?urgent=1&status=closed"); p.status != http.StatusOK {
		t.Errorf("a row inside the filter: %d", p.status)
	}
	if p := doc.get("/clinician/worklist/row/nobody"); p.status != http.StatusNotFound {
		t.Errorf("no such intake: %d", p.status)
	}
	if p := a.browser().get("/clinician/worklist/row/" + id); p.status == http.StatusOK {
		t.Error("the row is served without a sign-in")
	}
}

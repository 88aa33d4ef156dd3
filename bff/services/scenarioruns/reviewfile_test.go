package scenarioruns

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/clinical-intake/intake-web/bff"
)

const reviewsYAML = `release: rel-1
reviews:
  - question: "Have you been   vomiting?"
    decision: corrected
    concept: vomiting
    inverse: true
    note: "asks whether it stopped"
    by: dr.ada
    at: 2026-11-28T09:30:00Z
  - question: any fever?
    decision: unanswerable
    by: dr.bob
    at: 2026-11-27T08:00:00Z
`

// A release's reviews exported and imported into another database come
// out the same; each imported decision is audited under the importer.
func TestReviewFileRoundTrip(t *testing.T) {
	db := mustOpenDB(t)
	s := newService(t, Deps{Store: db, Audit: db, Target: TargetSandbox})
	rel, n, err := s.ImportReviews(t.Context(), "cli:tester", []byte(reviewsYAML))
	if err != nil || rel != "rel-1" || n != 2 {
		t.Fatalf("import: %q %d %v", rel, n, err)
	}
	first, err := s.ExportReviews(t.Context(), "rel-1")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"question: have you been vomiting?", "concept: vomiting", "inverse: true", "note: asks whether it stopped",
		"by: dr.ada", "at: 2026-11-28T09:30:00Z", "decision: unanswerable"} {
		if !strings.Contains(string(first), want) {
			t.Fatalf("export lacks %q:\n%s", want, first)
		}
	}
	audit, err := db.Audit(t.Context(), 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	imported := 0
	for _, e := range audit {
		if e.Action == bff.AuditReadingReview && e.Actor == "cli:tester" && strings.Contains(e.Detail, "imported: release rel-1") {
			imported++
		}
	}
	if imported != 2 {
		t.Fatalf("%d imports audited under cli:tester, want 2: %+v", imported, audit)
	}

	other := mustOpenDB(t)
	s2 := newService(t, Deps{Store: other, Audit: other, Target: TargetSandbox})
	if _, n, err := s2.ImportReviews(t.Context(), "cli:tester", first); err != nil || n != 2 {
		t.Fatalf("import of the export: %d %v", n, err)
	}
	again, err := s2.ExportReviews(t.Context(), "rel-1")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, again) {
		t.Fatalf("round trip changed the file:\n%s\nthen\n%s", first, again)
	}
	if _, err := s2.ExportReviews(t.Context(), "rel-2"); bff.ErrorCode(err) != bff.ENOTFOUND {
		t.Fatalf("export of a release without reviews: %v", err)
	}
}

// A file with one bad review adds none, and the error names its line and
// field.
func TestReviewFileBadFileChangesNothing(t *testing.T) {
	for _, tc := range []struct{ name, file, line, field string }{
		{"decision", reviewsYAML + "  - question: any rash?\n    decision: maybe\n    by: dr.ada\n    at: 2026-11-28T09:30:00Z\n", "line 15", "decision"},
		{"concept", strings.Replace(reviewsYAML, "concept: vomiting", "concept: not_a_concept", 1), "line 5", "concept"},
		{"at", strings.Replace(reviewsYAML, "at: 2026-11-27T08:00:00Z", "at: yesterday", 1), "line 13", "at"},
		{"unknown field", strings.Replace(reviewsYAML, "by: dr.bob", "who: dr.bob", 1), "line 12", "who"},
		{"no by", strings.Replace(reviewsYAML, "    by: dr.bob\n", "", 1), "line 10", "by"},
		{"twice", reviewsYAML + "  - question: ANY FEVER?\n    decision: confirmed\n    by: dr.ada\n    at: 2026-11-28T09:30:00Z\n", "line 14", "question"},
		{"no release", strings.Replace(reviewsYAML, "release: rel-1\n", "", 1), "line 1", "release"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := mustOpenDB(t)
			s := newService(t, Deps{Store: db, Audit: db, Target: TargetSandbox})
			_, n, err := s.ImportReviews(t.Context(), "cli:tester", []byte(tc.file))
			var be *bff.Error
			if !errors.As(err, &be) || be.Code != bff.EINVALID || be.Field != tc.field || !strings.Contains(be.Message, tc.line+": "+tc.field) {
				t.Fatalf("import: %d, %v; want EINVALID naming %s and %s", n, err, tc.line, tc.field)
			}
			if rv, err := db.ReadingReviews(t.Context(), "rel-1"); err != nil || len(rv) != 0 {
				t.Fatalf("a bad file added %d reviews (%v)", len(rv), err)
			}
			if audit, _ := db.Audit(t.Context(), 100, 0); len(audit) != 0 {
				t.Fatalf("a bad file was audited: %+v", audit)
			}
		})
	}
}

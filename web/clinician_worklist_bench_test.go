package web

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/templates"
)

// BenchmarkWorklistPageBytes renders the worklist page as the handler does,
// with rows like the sandbox's (30-character ids, a 64-character opening,
// states, protocol, every fifth reviewed), and reports its size: a page of
// 50 rows now, and every row of 100,000 intakes as the page was before
// keyset pages. B/page is the HTML; gzip-B/page the same compressed (the
// app sends brotli or gzip).
//
//	go test -run '^$' -bench WorklistPageBytes -benchtime 3x ./web/
func BenchmarkWorklistPageBytes(b *testing.B) {
	for _, n := range []int{50, 100_000} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			items := benchItems(n)
			var size, zsize int
			for b.Loop() {
				var buf bytes.Buffer
				page := templates.WorklistPage{
					Layout: templates.Layout{Title: "Worklist", CSRF: "0123456789abcdef0123456789abcdef", SignedInAs: "dr.ada"},
					Rows:   worklistRows(items), RowURL: "/clinician/worklist/row/", EventsURL: "/clinician/events",
					AuditURL: "/clinician/audit", PageURL: "/clinician", FirstPage: true,
					NextURL: "/clinician?cursor=" + bff.KeyOf(items[len(items)-1]).String(),
				}
				if err := templates.WorklistPageView(page).Render(context.Background(), &buf); err != nil {
					b.Fatal(err)
				}
				size = buf.Len()
				var z bytes.Buffer
				zw := gzip.NewWriter(&z)
				if _, err := zw.Write(buf.Bytes()); err != nil {
					b.Fatal(err)
				}
				if err := zw.Close(); err != nil {
					b.Fatal(err)
				}
				zsize = z.Len()
			}
			b.ReportMetric(float64(size), "B/page")
			b.ReportMetric(float64(zsize), "gzip-B/page")
		})
	}
}

func benchItems(n int) []*bff.WorkItem {
	now := time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC)
	items := make([]*bff.WorkItem, n)
	for i := range items {
		in := &bff.Intake{ID: fmt.Sprintf("enc_ece610a4_%016x", i*7919), CreatedAt: now.Add(-time.Duration(i) * time.Minute),
			UpdatedAt: now.Add(-time.Duration(i) * time.Minute / 2), Status: bff.StatusClosed, TurnCount: 6, Terminal: true,
			SafetyStatus: "no_red_flags", DispositionLabel: "Self-care with safety-netting", ActiveProtocol: "sore_throat.v1"}
		it := &bff.WorkItem{Intake: in, Opening: "I have had a sore throat for three days and it hurts to swallow"}
		if i%5 == 4 {
			it.Review = &bff.Review{Clinician: "dr.ada", ReviewedAt: now}
		}
		it.Group = bff.WorkGroup(in, it.Review != nil)
		items[i] = it
	}
	return items
}

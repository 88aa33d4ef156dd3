package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestPercentileIsNearestRank(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{0.5, 50}, {0.99, 99}, {1, 100}, {0, 1}} {
		if got := percentile(d, c.p); got != c.want {
			t.Errorf("p%v = %d, want %d", c.p, got, c.want)
		}
	}
	if percentile(nil, 0.5) != 0 {
		t.Error("no samples")
	}
	if s := summarize([]time.Duration{3, 1, 2}); s.min != 1 || s.maxd != 3 || s.p50 != 2 || s.avg != 2 {
		t.Errorf("summary %+v", s)
	}
}

func TestSSEConnReadsEventsOverAChunkedStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Cookie") != "a=b" {
			http.Error(w, "no cookie", http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		fmt.Fprint(w, "retry: 2000\n: ok\n\n")
		_ = rc.Flush()
		for i := 1; i <= 3; i++ {
			fmt.Fprintf(w, "id: %d\nevent: delta\ndata: {\"text\":\"f%d \"}\n\n", i, i)
			_ = rc.Flush()
		}
		fmt.Fprint(w, "event: final\ndata: {\"status\":\"completed\"}\n\n")
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := openSSE(ctx, strings.TrimPrefix(srv.URL, "http://"), http.MethodGet, "/events", nil, "Cookie", "a=b")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got []string
	for {
		e, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e.At.IsZero() {
			t.Errorf("event %q has no read time", e.Name)
		}
		if e.Name == "delta" {
			text, err := decodeText(e.Data)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, e.ID+":"+text)
			continue
		}
		got = append(got, e.Name)
		break
	}
	if want := "1:f1 ,2:f2 ,3:f3 ,final"; strings.Join(got, ",") != want {
		t.Fatalf("events %q, want %q", got, want)
	}
	if _, err := openSSE(ctx, strings.TrimPrefix(srv.URL, "http://"), http.MethodGet, "/events", nil); err == nil {
		t.Fatal("a 403 opened a stream")
	}
}

func TestDeltaTextDecodesTheSandboxWrite(t *testing.T) {
	b := []byte("event: message.delta\ndata: {\"text\":\"I need \\\"this\\\" \"}\n\n")
	if got := deltaText(b[len(deltaPrefix):]); got != `I need "this" ` {
		t.Fatalf("%q", got)
	}
}

func TestRecorderStampsDeltasPerTurnRequest(t *testing.T) {
	rec := newRecorder()
	rec.next = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/intakes" {
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		fmt.Fprint(w, "event: message.delta\ndata: {\"text\":\"a\"}\n\n")
		fmt.Fprint(w, "event: message.completed\ndata: {}\n\n")
		fmt.Fprint(w, "event: message.delta\ndata: {\"text\":\"b\"}\n\n")
	})
	for _, p := range []string{"/v1/intakes/enc_1/turns", "/v1/intakes/enc_1/turns", "/v1/intakes"} {
		rec.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, p, nil))
	}
	d := rec.deltas("enc_1")
	if len(d) != 2 || len(d[0]) != 2 || d[0][0].text != "a" || d[1][1].text != "b" || d[0][1].at.Before(d[0][0].at) {
		t.Fatalf("deltas %+v", d)
	}
	if s := rec.statusCounts(); s[200] != 2 || s[429] != 1 {
		t.Fatalf("statuses %v", s)
	}
}

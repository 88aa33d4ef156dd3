package web_test

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// Pages link content-hashed assets, served for a year as immutable; the
// plain names still answer, briefly cached; pages and assets are compressed
// when the browser accepts it, event streams and operations endpoints not.
func TestStaticAssetsAndCompression(t *testing.T) {
	t.Parallel()
	a := startApp(t)
	b := a.browser()
	page := b.get("/")
	link := regexp.MustCompile(`href="(/static/css/app\.[0-9a-f]{10}\.css)"`).FindStringSubmatch(page.body)
	script := regexp.MustCompile(`src="(/static/js/app\.[0-9a-f]{10}\.js)"`).FindStringSubmatch(page.body)
	if link == nil || script == nil {
		t.Fatalf("the page does not link hashed assets")
	}
	for _, u := range []string{link[1], script[1]} {
		p := b.get(u)
		if p.status != http.StatusOK || p.header.Get("Cache-Control") != "public, max-age=31536000, immutable" || p.header.Get("ETag") == "" {
			t.Errorf("%s: %d %q", u, p.status, p.header.Get("Cache-Control"))
		}
	}
	if p := b.get("/static/css/app.css"); p.status != http.StatusOK || p.header.Get("Cache-Control") != "public, max-age=300" ||
		!strings.HasPrefix(p.header.Get("Content-Type"), "text/css") {
		t.Errorf("plain name: %d %q %q", p.status, p.header.Get("Cache-Control"), p.header.Get("Content-Type"))
	}
	if p := b.get("/static/css/app.0123456789.css"); p.status != http.StatusNotFound {
		t.Errorf("a stale hash: %d", p.status)
	}
	// A revalidation with the ETag costs no body.
	etag := b.get(link[1]).header.Get("ETag")
	req, _ := http.NewRequest("GET", a.web.URL+link[1], nil)
	req.Header.Set("If-None-Match", etag)
	if p := b.do(req); p.status != http.StatusNotModified || p.body != "" {
		t.Errorf("If-None-Match: %d, %d bytes", p.status, len(p.body))
	}

	raw := func(path, enc string) *http.Response {
		req, _ := http.NewRequest("GET", a.web.URL+path, nil)
		req.Header.Set("Accept-Encoding", enc)
		res, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		return res
	}
	for _, path := range []string{"/", link[1], script[1]} {
		for _, enc := range []string{"br", "gzip"} {
			res := raw(path, enc)
			if res.Header.Get("Content-Encoding") != enc || !strings.Contains(res.Header.Get("Vary"), "Accept-Encoding") {
				t.Errorf("%s with Accept-Encoding %s: Content-Encoding %q, Vary %q", path, enc, res.Header.Get("Content-Encoding"), res.Header.Get("Vary"))
			}
		}
		if res := raw(path, "identity"); res.Header.Get("Content-Encoding") != "" {
			t.Errorf("%s without compression accepted: %q", path, res.Header.Get("Content-Encoding"))
		}
	}
	// (/metrics compresses itself: promhttp gzips when asked.)
	if res := raw("/healthz", "gzip"); res.Header.Get("Content-Encoding") != "" {
		t.Errorf("/healthz is compressed: %q", res.Header.Get("Content-Encoding"))
	}
}

// An event stream is never compressed: each event leaves when written.
func TestEventStreamsUncompressed(t *testing.T) {
	t.Parallel()
	a := startApp(t, withClinician(t, "dr.ada"))
	b := a.browser()
	b.signIn("dr.ada", clinPassword)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", a.web.URL+"/clinician/events", nil)
	req.Header.Set("Accept-Encoding", "gzip, br")
	res, err := b.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Encoding") != "" || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Errorf("the worklist stream: %d, Content-Type %q, Content-Encoding %q", res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("Content-Encoding"))
	}
}

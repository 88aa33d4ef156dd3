package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// replicaBrowser is one browser talking to several replicas: a single cookie
// jar, so the session made on one replica is the session on the others (the
// jar keys cookies by host, not port, as browsers do).
type replicaBrowser struct {
	t    *testing.T
	http *http.Client
}

func newReplicaBrowser(t *testing.T) *replicaBrowser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &replicaBrowser{t: t, http: &http.Client{Jar: jar, Timeout: 30 * time.Second}}
}

// page is an answer read whole.
type page struct {
	status int
	url    *url.URL // after redirects
	body   string
}

func (b *replicaBrowser) do(req *http.Request) page {
	b.t.Helper()
	res, err := b.http.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		b.t.Fatalf("%s %s: read: %v", req.Method, req.URL, err)
	}
	return page{status: res.StatusCode, url: res.Request.URL, body: string(body)}
}

func (b *replicaBrowser) get(u string) page {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.do(req)
}

// post sends a form; headers are name, value pairs.
func (b *replicaBrowser) post(u string, form url.Values, headers ...string) page {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return b.do(req)
}

// hiddenField returns the value of the first hidden input named name after
// the first occurrence of within in body (within "" = from the start).
func hiddenField(t *testing.T, body, within, name string) string {
	t.Helper()
	i := strings.Index(body, within)
	if i < 0 {
		t.Fatalf("no %q in the page:\n%s", within, body)
	}
	m := regexp.MustCompile(`name="` + regexp.QuoteMeta(name) + `" value="([^"]*)"`).FindStringSubmatch(body[i:])
	if m == nil {
		t.Fatalf("no hidden field %q after %q in the page:\n%s", name, within, body)
	}
	return m[1]
}

// sseEvent is one event of a turn's stream.
type sseEvent struct {
	ID   int64
	Name string
	Data string
}

// openEvents opens an event stream the way EventSource does (with
// Last-Event-ID once an event was seen) and delivers its events until it
// ends; the channel is closed then. retry is the server's reconnect hint.
func (b *replicaBrowser) openEvents(ctx context.Context, u string, lastID int64) (events <-chan sseEvent, retry *time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if lastID > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(lastID, 10))
	}
	// No client timeout: the stream stays open as long as the turn runs;
	// ctx bounds it.
	client := &http.Client{Jar: b.http.Jar}
	res, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return nil, nil, fmt.Errorf("events %s: %d %s: %s", u, res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	out := make(chan sseEvent)
	hint := 2 * time.Second
	go func() {
		defer close(out)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev sseEvent
		var data []string
		for sc.Scan() {
			line := sc.Text()
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch {
			case line == "":
				if ev.Name != "" || len(data) > 0 {
					ev.Data = strings.Join(data, "\n")
					select {
					case out <- ev:
					case <-ctx.Done():
						return
					}
				}
				ev, data = sseEvent{}, nil
			case field == "id":
				ev.ID, _ = strconv.ParseInt(value, 10, 64)
			case field == "event":
				ev.Name = value
			case field == "data":
				data = append(data, value)
			case field == "retry":
				if ms, err := strconv.Atoi(value); err == nil {
					hint = time.Duration(ms) * time.Millisecond
				}
			}
		}
	}()
	return out, &hint, nil
}

// jsonField decodes one string field of a JSON object.
func jsonField(t *testing.T, body, name string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("not JSON: %v: %s", err, body)
	}
	s, _ := m[name].(string)
	return s
}

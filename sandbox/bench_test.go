package sandbox_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/sandbox"
	"github.com/clinical-intake/intake-web/sandbox/rules"
)

// stampWriter records when each event left the handler, so the benchmark can
// measure delivery latency per fragment (write -> client read).
type stampWriter struct {
	http.ResponseWriter
	mu    *sync.Mutex
	times *[]time.Time
}

func (w stampWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	if bytes.HasPrefix(b, []byte("event: ")) {
		w.mu.Lock()
		*w.times = append(*w.times, time.Now())
		w.mu.Unlock()
	}
	return n, err
}

func (w stampWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// BenchmarkConcurrentStreamingTurns runs 500 streaming turns at once against
// one sandbox (rate limit off, the rules engine, 20 ms between fragments) and
// reports the per-fragment delivery latency and the memory the round needed.
// Run: go test -run '^$' -bench ConcurrentStreamingTurns -benchtime 3x ./sandbox/
func BenchmarkConcurrentStreamingTurns(b *testing.B) {
	const streams = 500
	eng, err := rules.New()
	if err != nil {
		b.Fatal(err)
	}
	cfg := sandbox.DefaultConfig()
	cfg.Keys = []string{keyA}
	cfg.Engine = eng
	cfg.RPM, cfg.TurnsPerDay, cfg.IntakesPerDay = 0, 0, 0
	cfg.FragmentDelay = 20 * time.Millisecond
	svc, err := sandbox.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer svc.Close()

	var mu sync.Mutex
	writes := map[string]*[]time.Time{} // by encounter id
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id, ok := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/v1/intakes/"), "/turns"); ok {
			times := &[]time.Time{}
			mu.Lock()
			writes[id] = times
			mu.Unlock()
			w = stampWriter{ResponseWriter: w, mu: &mu, times: times}
		}
		svc.ServeHTTP(w, r)
	}))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: streams, MaxConnsPerHost: 0}}

	var latencies []time.Duration
	var peakHeap uint64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		ids := make([]string, streams)
		for i := range ids {
			ids[i] = benchCreate(b, client, srv.URL)
		}
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		stop := make(chan struct{})
		peak := make(chan uint64)
		go func() { // sample the heap while the streams run
			var m runtime.MemStats
			var hi uint64
			t := time.NewTicker(10 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stop:
					peak <- hi
					return
				case <-t.C:
					runtime.ReadMemStats(&m)
					hi = max(hi, m.HeapInuse-min(m.HeapInuse, before.HeapInuse))
				}
			}
		}()
		b.StartTimer()

		reads := make([][]time.Time, streams)
		var wg sync.WaitGroup
		for i, id := range ids {
			wg.Go(func() { reads[i] = benchStream(b, client, srv.URL, id) })
		}
		wg.Wait()

		b.StopTimer()
		close(stop)
		peakHeap = max(peakHeap, <-peak)
		mu.Lock()
		for i, id := range ids {
			w := *writes[id]
			if len(w) != len(reads[i]) {
				b.Fatalf("stream %s: %d events written, %d read", id, len(w), len(reads[i]))
			}
			for j := range w {
				latencies = append(latencies, reads[i][j].Sub(w[j]))
			}
		}
		mu.Unlock()
		b.StartTimer()
	}
	slices.Sort(latencies)
	pct := func(p float64) float64 {
		return float64(latencies[int(p*float64(len(latencies)-1))].Microseconds())
	}
	b.ReportMetric(pct(0.50), "p50-µs/event")
	b.ReportMetric(pct(0.99), "p99-µs/event")
	b.ReportMetric(float64(peakHeap)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(peakHeap)/streams/1024, "KiB/stream")
}

func benchCreate(b *testing.B, c *http.Client, base string) string {
	req, _ := http.NewRequest("POST", base+"/v1/intakes", nil)
	req.Header.Set("Authorization", "Bearer "+keyA)
	res, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	var m struct {
		EncounterID string `json:"encounter_id"`
	}
	if err := json.NewDecoder(res.Body).Decode(&m); err != nil || res.StatusCode != 201 {
		b.Fatalf("create: %d %v", res.StatusCode, err)
	}
	return m.EncounterID
}

// benchStream returns the time each event was read.
func benchStream(b *testing.B, c *http.Client, base, id string) []time.Time {
	req, _ := http.NewRequestWithContext(context.Background(), "POST", base+"/v1/intakes/"+id+"/turns",
		strings.NewReader(`{"message":"I have had a sore throat and a fever since Tuesday","stream":true}`))
	req.Header.Set("Authorization", "Bearer "+keyA)
	res, err := c.Do(req)
	if err != nil {
		b.Error(err)
		return nil
	}
	defer res.Body.Close()
	var times []time.Time
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "event: ") {
			times = append(times, time.Now())
		}
	}
	if err := sc.Err(); err != nil {
		b.Error(err)
	}
	return times
}

// Package metrics is a small registry that writes the Prometheus text
// exposition format: labelled counters, gauges read at scrape time, and
// histograms. It covers what the app exports without pulling in a client
// library and its dependencies.
package metrics

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Registry holds the metrics; safe for concurrent use.
type Registry struct {
	mu      sync.Mutex
	metrics []metric
}

type metric interface {
	write(w io.Writer)
	name() string
}

// New returns an empty registry.
func New() *Registry { return &Registry{} }

func (r *Registry) add(m metric) {
	r.mu.Lock()
	r.metrics = append(r.metrics, m)
	r.mu.Unlock()
}

// Expose writes every metric in the text format, sorted by name.
func (r *Registry) Expose(w io.Writer) {
	r.mu.Lock()
	ms := append([]metric(nil), r.metrics...)
	r.mu.Unlock()
	sort.Slice(ms, func(i, j int) bool { return ms[i].name() < ms[j].name() })
	for _, m := range ms {
		m.write(w)
	}
}

// Counter is a monotonically increasing count, split by label values.
type Counter struct {
	n, help string
	labels  []string
	mu      sync.Mutex
	values  map[string]float64 // key: label values joined by \xff
}

// Counter registers a counter with the given label names.
func (r *Registry) Counter(name, help string, labels ...string) *Counter {
	c := &Counter{n: name, help: help, labels: labels, values: map[string]float64{}}
	r.add(c)
	return c
}

// Inc adds one for the label values (in the order of the label names).
func (c *Counter) Inc(values ...string) { c.Add(1, values...) }

// Add adds v (>= 0).
func (c *Counter) Add(v float64, values ...string) {
	c.mu.Lock()
	c.values[strings.Join(values, "\xff")] += v
	c.mu.Unlock()
}

func (c *Counter) name() string { return c.n }

func (c *Counter) write(w io.Writer) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n", c.n, c.help, c.n)
	c.mu.Lock()
	keys := make([]string, 0, len(c.values))
	for k := range c.values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "%s%s %s\n", c.n, labelSet(c.labels, strings.Split(k, "\xff"), "", ""), num(c.values[k]))
	}
	c.mu.Unlock()
}

// Gauge is a value read when the metrics are scraped.
type Gauge struct {
	n, help string
	read    func() float64
}

// GaugeFunc registers a gauge whose value read returns at scrape time.
func (r *Registry) GaugeFunc(name, help string, read func() float64) {
	r.add(&Gauge{n: name, help: help, read: read})
}

func (g *Gauge) name() string { return g.n }

func (g *Gauge) write(w io.Writer) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s gauge\n%s %s\n", g.n, g.help, g.n, g.n, num(g.read()))
}

// Histogram counts observations into cumulative buckets, split by labels.
type Histogram struct {
	n, help string
	labels  []string
	bounds  []float64
	mu      sync.Mutex
	series  map[string]*series
}

type series struct {
	counts []uint64 // per bucket, not cumulative; last is +Inf
	sum    float64
	count  uint64
}

// Histogram registers a histogram with upper bounds (ascending).
func (r *Registry) Histogram(name, help string, bounds []float64, labels ...string) *Histogram {
	h := &Histogram{n: name, help: help, labels: labels, bounds: bounds, series: map[string]*series{}}
	r.add(h)
	return h
}

// Observe records v for the label values.
func (h *Histogram) Observe(v float64, values ...string) {
	k := strings.Join(values, "\xff")
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.series[k]
	if s == nil {
		s = &series{counts: make([]uint64, len(h.bounds)+1)}
		h.series[k] = s
	}
	i := sort.SearchFloat64s(h.bounds, v)
	s.counts[i]++
	s.sum += v
	s.count++
}

func (h *Histogram) name() string { return h.n }

func (h *Histogram) write(w io.Writer) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s histogram\n", h.n, h.help, h.n)
	h.mu.Lock()
	defer h.mu.Unlock()
	keys := make([]string, 0, len(h.series))
	for k := range h.series {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s, vals := h.series[k], strings.Split(k, "\xff")
		var cum uint64
		for i, b := range h.bounds {
			cum += s.counts[i]
			fmt.Fprintf(w, "%s_bucket%s %d\n", h.n, labelSet(h.labels, vals, "le", num(b)), cum)
		}
		fmt.Fprintf(w, "%s_bucket%s %d\n", h.n, labelSet(h.labels, vals, "le", "+Inf"), s.count)
		fmt.Fprintf(w, "%s_sum%s %s\n%s_count%s %d\n", h.n, labelSet(h.labels, vals, "", ""), num(s.sum), h.n, labelSet(h.labels, vals, "", ""), s.count)
	}
}

func labelSet(names, values []string, extraName, extraValue string) string {
	var parts []string
	for i, n := range names {
		v := ""
		if i < len(values) {
			v = values[i]
		}
		parts = append(parts, n+`="`+escape(v)+`"`)
	}
	if extraName != "" {
		parts = append(parts, extraName+`="`+extraValue+`"`)
	}
	if len(parts) == 0 {
		return ""
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func escape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

func num(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// CounterFunc is a counter whose values, by one label, are read at scrape
// time from a count kept elsewhere.
type CounterFunc struct {
	n, help, label string
	read           func() map[string]float64
}

// CounterFunc registers a counter read at scrape time; read returns the
// value for each value of label ("" label means no label).
func (r *Registry) CounterFunc(name, help, label string, read func() map[string]float64) {
	r.add(&CounterFunc{n: name, help: help, label: label, read: read})
}

func (c *CounterFunc) name() string { return c.n }

func (c *CounterFunc) write(w io.Writer) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n", c.n, c.help, c.n)
	vals := c.read()
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if c.label == "" {
			fmt.Fprintf(w, "%s %s\n", c.n, num(vals[k]))
			continue
		}
		fmt.Fprintf(w, "%s%s %s\n", c.n, labelSet([]string{c.label}, []string{k}, "", ""), num(vals[k]))
	}
}

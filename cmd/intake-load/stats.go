package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// percentile returns the p-th quantile (0..1) of sorted d by the
// nearest-rank method; 0 for no samples.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted)) + 0.5)
	i = min(max(i-1, 0), len(sorted)-1)
	if p >= 1 {
		i = len(sorted) - 1
	}
	return sorted[i]
}

type summary struct {
	n              int
	p50, p90, p99  time.Duration
	maxd, min, avg time.Duration
}

func summarize(d []time.Duration) summary {
	s := slices.Clone(d)
	slices.Sort(s)
	out := summary{n: len(s)}
	if len(s) == 0 {
		return out
	}
	var sum time.Duration
	for _, v := range s {
		sum += v
	}
	out.p50, out.p90, out.p99 = percentile(s, 0.50), percentile(s, 0.90), percentile(s, 0.99)
	out.min, out.maxd, out.avg = s[0], s[len(s)-1], sum/time.Duration(len(s))
	return out
}

// ms formats a duration in milliseconds with a precision that suits it.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v < 0 && v > -10, v >= 0 && v < 10:
		return fmt.Sprintf("%.2f ms", v)
	case v < 100 && v > -100:
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.0f ms", v)
}

func kib(b float64) string { return fmt.Sprintf("%.1f KiB", b/1024) }
func mib(b float64) string { return fmt.Sprintf("%.1f MiB", b/(1<<20)) }

// table prints a Markdown table.
type table struct {
	head []string
	rows [][]string
}

func (t *table) add(cells ...any) {
	row := make([]string, len(cells))
	for i, c := range cells {
		row[i] = fmt.Sprint(c)
	}
	t.rows = append(t.rows, row)
}

func (t *table) print(w io.Writer) {
	fmt.Fprintf(w, "| %s |\n", strings.Join(t.head, " | "))
	fmt.Fprintf(w, "|%s\n", strings.Repeat("---|", len(t.head)))
	for _, r := range t.rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
	}
	fmt.Fprintln(w)
}

// checks collects correctness failures; any makes the command exit 1.
type checks struct{ failed []string }

func (c *checks) expect(ok bool, format string, a ...any) {
	if !ok {
		c.failed = append(c.failed, fmt.Sprintf(format, a...))
	}
}

func (c *checks) report(w io.Writer) error {
	if len(c.failed) == 0 {
		fmt.Fprintln(w, "All correctness checks passed.")
		return nil
	}
	fmt.Fprintf(w, "%d correctness check(s) FAILED:\n", len(c.failed))
	for i, f := range c.failed {
		if i == 20 {
			fmt.Fprintf(w, "- ... and %d more\n", len(c.failed)-20)
			break
		}
		fmt.Fprintf(w, "- %s\n", f)
	}
	return fmt.Errorf("%d correctness check(s) failed", len(c.failed))
}

// Package pacertest holds an in-memory pacer.Journal for tests. Tests that
// wait in a pacer run it on its real clock inside testing/synctest bubbles
// (the one fake clock of the project's tests).
package pacertest

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/clinical-intake/intake-web/bff/adapters/pacer"
)

// Journal is an in-memory pacer.Journal that outlives the pacers using it,
// as a database outlives a process: a test "restarts" by building a new
// pacer on the same Journal. Set Err to make every method fail.
type Journal struct {
	mu      sync.Mutex
	entries []pacer.Entry
	err     error
}

var _ pacer.Journal = (*Journal)(nil)

// Fail makes every later call return err (nil: succeed again).
func (j *Journal) Fail(err error) {
	j.mu.Lock()
	j.err = err
	j.mu.Unlock()
}

// Record appends e.
func (j *Journal) Record(ctx context.Context, e pacer.Entry) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return j.err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	j.entries = append(j.entries, e)
	return nil
}

// Load returns the entries recorded at or after since, or with Until after
// since, oldest first.
func (j *Journal) Load(ctx context.Context, since time.Time) ([]pacer.Entry, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return nil, j.err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []pacer.Entry
	for _, e := range j.entries {
		if !e.At.Before(since) || e.Until.After(since) {
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b pacer.Entry) int { return a.At.Compare(b.At) })
	return out, nil
}

// Prune deletes the entries recorded before before whose Until is not after
// it.
func (j *Journal) Prune(ctx context.Context, before time.Time) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return j.err
	}
	j.entries = slices.DeleteFunc(j.entries, func(e pacer.Entry) bool {
		return e.At.Before(before) && !e.Until.After(before)
	})
	return nil
}

// Entries returns a copy of what is recorded, in the order recorded.
func (j *Journal) Entries() []pacer.Entry {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.entries)
}

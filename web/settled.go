package web

import (
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// settledRenders renders each settling event of a turn once, whoever
// follows the turn: the streams that ask at the same time share one render
// (singleflight), and those that come a moment later (a reload, another
// tab) take the kept result. The fragments hold the session's CSRF token,
// so the token is part of the key.
type settledRenders struct {
	group singleflight.Group
	mu    sync.Mutex
	kept  map[string]keptRender
}

type keptRender struct {
	data []byte
	at   time.Time
}

// keepRenders is how long a rendered event is kept for late followers.
const keepRenders = time.Minute

func newSettledRenders() *settledRenders { return &settledRenders{kept: map[string]keptRender{}} }

func (r *settledRenders) render(turnKey string, eventID int64, csrf string, raw []byte,
	fn func(raw []byte, csrf string) ([]byte, error)) ([]byte, error) {
	key := turnKey + "#" + strconv.FormatInt(eventID, 10) + "#" + csrf
	r.mu.Lock()
	k, ok := r.kept[key]
	r.mu.Unlock()
	if ok {
		return k.data, nil
	}
	v, err, _ := r.group.Do(key, func() (any, error) {
		r.mu.Lock()
		k, ok := r.kept[key] // rendered while this caller was on its way
		r.mu.Unlock()
		if ok {
			return k.data, nil
		}
		data, err := fn(raw, csrf)
		if err != nil {
			return nil, err
		}
		now := time.Now()
		r.mu.Lock()
		for old, e := range r.kept { // few entries: one per turn settled in the last minute
			if now.Sub(e.at) > keepRenders {
				delete(r.kept, old)
			}
		}
		r.kept[key] = keptRender{data: data, at: now}
		r.mu.Unlock()
		return data, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]byte), nil
}

package relay

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/clinical-intake/intake-web/bff"
)

// SharedFeed is the worklist's live feed across replicas: a change
// announced on one replica is published to its own Feed and, through the
// database's notifications, to every other replica's. Each replica's feed
// keeps its own ids; a browser that reconnects elsewhere with an id from
// another replica gets a gap, and a worklist page refetches on a gap.
type SharedFeed struct {
	feed    *Feed
	replica string
	notify  func(ctx context.Context, payload []byte) error
	log     *slog.Logger
}

// sharedChange is a notification's payload.
type sharedChange struct {
	Replica string          `json:"r"`
	Name    string          `json:"n"`
	Data    json.RawMessage `json:"d"`
}

// NewSharedFeed shares feed under the name replica; notify sends a payload
// to every replica (PostgreSQL's NOTIFY).
func NewSharedFeed(feed *Feed, replica string, notify func(context.Context, []byte) error, logger *slog.Logger) *SharedFeed {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &SharedFeed{feed: feed, replica: replica, notify: notify, log: logger}
}

// Publish publishes here and tells the other replicas. A failed
// notification is logged: their worklists catch up at their next change or
// reconnection.
func (f *SharedFeed) Publish(name string, data any) {
	f.feed.Publish(name, data)
	b, err := json.Marshal(data)
	if err != nil {
		return
	}
	payload, _ := json.Marshal(sharedChange{Replica: f.replica, Name: name, Data: b})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := f.notify(ctx, payload); err != nil {
		f.log.Warn("tell the other replicas of a worklist change", "err", err)
	}
}

// Receive is a notification from any replica: another's change is
// published here (this replica's own were published already).
func (f *SharedFeed) Receive(payload []byte) {
	var c sharedChange
	if err := json.Unmarshal(payload, &c); err != nil || c.Replica == f.replica || c.Name == "" {
		return
	}
	f.feed.Publish(c.Name, c.Data)
}

// Missed says notifications may have been lost (the database connection
// came back): open worklists are told they may have missed changes.
func (f *SharedFeed) Missed() {
	f.feed.Publish(bff.EventWorklistMissed, struct{}{})
}

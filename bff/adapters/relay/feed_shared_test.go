package relay_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/relay"
)

// bus is NOTIFY in memory: every replica receives every payload, its own
// included, as PostgreSQL delivers them.
type bus struct {
	mu    sync.Mutex
	feeds []*relay.SharedFeed
}

func (b *bus) notify(_ context.Context, payload []byte) error {
	b.mu.Lock()
	feeds := append([]*relay.SharedFeed(nil), b.feeds...)
	b.mu.Unlock()
	for _, f := range feeds {
		f.Receive(payload)
	}
	return nil
}

func (b *bus) replica(name string) (*relay.SharedFeed, *relay.Feed) {
	feed := relay.NewFeed(10)
	sf := relay.NewSharedFeed(feed, name, b.notify, nil)
	b.mu.Lock()
	b.feeds = append(b.feeds, sf)
	b.mu.Unlock()
	return sf, feed
}

// A change announced on A reaches B's worklist feed, and A's exactly once.
func TestAWorklistChangeReachesEveryReplicaOnce(t *testing.T) {
	var b bus
	a, feedA := b.replica("a")
	_, feedB := b.replica("b")
	bff.AnnounceChange(a, &bff.Intake{ID: "iw_1", Status: bff.StatusOpen, Urgent: true})
	for name, feed := range map[string]*relay.Feed{"a": feedA, "b": feedB} {
		replay, _, cancel, _ := feed.Subscribe(0)
		cancel()
		if len(replay) != 1 {
			t.Fatalf("replica %s's feed has %d events, want 1", name, len(replay))
		}
		var c bff.IntakeChanged
		if err := json.Unmarshal(replay[0].Data, &c); err != nil || c.IntakeID != "iw_1" || !c.Urgent || replay[0].Name != bff.EventIntakeChanged {
			t.Fatalf("replica %s got %s %s (%v)", name, replay[0].Name, replay[0].Data, err)
		}
	}
}

// After the listener reconnects, open worklists are told to refetch.
func TestMissedNotificationsMakeWorklistsRefetch(t *testing.T) {
	var b bus
	a, feedA := b.replica("a")
	a.Missed()
	replay, _, cancel, _ := feedA.Subscribe(0)
	cancel()
	if len(replay) != 1 || replay[0].Name != bff.EventWorklistMissed {
		t.Fatalf("after a reconnection the feed has %+v", replay)
	}
}

// A browser coming from another replica, with an id this replica's feed
// never gave, is told to reload rather than silently missing changes.
func TestAnIDFromAnotherReplicaIsAGap(t *testing.T) {
	feed := relay.NewFeed(10)
	feed.Publish(bff.EventIntakeChanged, bff.IntakeChanged{IntakeID: "iw_1"})
	if _, _, cancel, gap := feed.Subscribe(1); gap {
		t.Fatal("the feed's own last id is a gap")
	} else {
		cancel()
	}
	_, _, cancel, gap := feed.Subscribe(7)
	cancel()
	if !gap {
		t.Fatal("an id past this feed's last is not a gap")
	}
}

package web

import (
	"context"
	"encoding/json"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/templates"
)

// queueGap is how long queueNote waits for the next buffered event of a
// stream before taking the last one it read as the latest: the buffer is
// handed over at once, or by a goroutine within moments.
const queueGap = 20 * time.Millisecond

// queueNote is what a page made on the server (read without JavaScript, or
// before the script follows the stream) says of a queued turn's wait: the
// last place and wait its stream reported. The zero value when the turn is
// not queued or its stream reported none.
func (s *Server) queueNote(ctx context.Context, t *bff.Turn) templates.QueueView {
	if t.Status != bff.TurnQueued {
		return templates.QueueView{}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*queueGap)
	defer cancel()
	events, found := s.patients.FollowTurn(ctx, t.IntakeID, t.Index, 0)
	if !found {
		return templates.QueueView{}
	}
	var q templates.QueueView
	gap := time.NewTimer(queueGap)
	defer gap.Stop()
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return q
			}
			if ev.Name == bff.EventStarted {
				return templates.QueueView{} // sent: no longer in line
			}
			var d bff.QueuedData
			if ev.Name == bff.EventQueued && json.Unmarshal(ev.Data, &d) == nil {
				q = templates.QueueView{Position: d.Position, WaitSeconds: d.WaitSeconds,
					ServiceAsked: d.Reason == bff.QueuedServiceAsked, AddedSeconds: d.AddedSeconds}
			}
			gap.Reset(queueGap)
		case <-gap.C:
			return q
		case <-ctx.Done():
			return q
		}
	}
}

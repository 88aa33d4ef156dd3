package storetest

import (
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
)

// testScenarioReplayLink: a replay's link to the run it replays, and the
// question, survive the store in the run itself and in the lists.
func testScenarioReplayLink(t *testing.T, db bff.ScenarioRunStore) {
	mustCreateRun(t, db, newRun("sr_old", t0))
	r := newRun("sr_replay", t0.Add(time.Minute))
	r.ReplayOf, r.ReplayQuestion = "sr_old", "any chest pain?"
	mustCreateRun(t, db, r)
	checkRun(t, mustRun(t, db, "sr_replay"), r)
	if got := mustRun(t, db, "sr_old"); got.ReplayOf != "" || got.ReplayQuestion != "" {
		t.Fatalf("a run of its own reads back as a replay: %q, %q", got.ReplayOf, got.ReplayQuestion)
	}
	list, err := db.ScenarioRuns(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != "sr_replay" || list[0].ReplayOf != "sr_old" || list[0].ReplayQuestion != "any chest pain?" {
		t.Fatalf("runs listed: %s; want sr_replay first, a replay of sr_old", dumpJSON(list))
	}
}

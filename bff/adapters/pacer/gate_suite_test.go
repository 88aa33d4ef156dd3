package pacer_test

import (
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff/adapters/gatetest"
	"github.com/clinical-intake/intake-web/bff/adapters/pacer"
	"github.com/clinical-intake/intake-web/bff/adapters/pacing"
)

// The pacer passes the suite every gate passes, in synctest bubbles: waits
// take no real time.
func TestGateSuite(t *testing.T) {
	gatetest.Run(t, gatetest.Harness{
		New: func(t *testing.T, r pacing.Rules) gatetest.Gate {
			return pacer.New(pacer.Config{PerMinute: r.PerMinute, Window: r.Window, Margin: r.Margin,
				TurnsPerDay: r.TurnsPerDay, IntakesPerDay: r.IntakesPerDay})
		},
		Run:    inBubble,
		Window: time.Minute,
	})
}

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
			return pacer.New(pacer.Config{Rules: r})
		},
		Run:    inBubble,
		Window: time.Minute,
	})
}

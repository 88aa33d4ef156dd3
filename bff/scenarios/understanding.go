package scenarios

// Understanding is the understanding by meaning the simulated patients use:
// the concept vocabulary and its cues (bff/scenarios/concepts), built
// afresh on each call from embedded files (a few milliseconds; call it once
// per run, not per question).
func Understanding() (Understander, error) {
	return nil, nil // TODO(merge): concepts.Load
}

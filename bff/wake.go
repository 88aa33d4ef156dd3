package bff

import "context"

type wakeKey struct{}

// WithWake returns ctx for PatientService.FollowTurn: wake is called each
// time an event is put in the channel FollowTurn returns, and when that
// channel is closed, so its reader can drain it when told, with no
// goroutine parked on it (a browser stream idle for minutes then costs no
// stack). wake runs where the event is published, under the stream's
// lock: it must return at once and call nothing of the service.
func WithWake(ctx context.Context, wake func()) context.Context {
	return context.WithValue(ctx, wakeKey{}, wake)
}

// WakeOf is the wake WithWake put in ctx, nil when none.
func WakeOf(ctx context.Context) func() {
	wake, _ := ctx.Value(wakeKey{}).(func())
	return wake
}

package bff

import "context"

type requestIDKey struct{}

// WithRequestID returns ctx carrying the id of the request that caused the
// work: the web layer sets it, the upstream client sends it as X-Request-Id,
// and log lines carry it, so one id follows a turn end to end.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID returns the request id in ctx, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// Package intakeapi is the typed client of the Clinical Intake Service
// (spec: docs/clinical-intake-service.md). Everything the web app says
// to the service goes through it, so the spec's Endpoints, Errors and Limits
// rules are enforced here once.
//
// The package root holds the domain types (resources, events, errors) and the
// small interfaces other packages implement, after Ben Johnson's WTF Dial
// layout: Gate is implemented by package pacer, which imports this package,
// never the reverse. The resources and events are aliases of package
// intakeservice, the one definition of the service's contract, which the
// sandbox encodes and a test keeps equal to the OpenAPI document.
//
// Error contract, for every method:
//
//   - the service answered with an error status: *Error (branch with IsCode or
//     IsTurnInProgress); a request the client refuses locally (a message over
//     8,000 characters, say) is an *Error with Status 0 and CodeInvalidRequest;
//   - the request may have reached the service but no answer came back
//     (connection refused or cut, timeout): an error wrapping ErrTransport;
//   - a stream that ended before turn.completed or an error event: an error
//     wrapping ErrStreamInterrupted. After either of these the caller
//     reconciles from the handoff before it resends a turn;
//   - the Gate refused the call (a spent daily quota, say): the Gate's error,
//     unchanged, and nothing was sent;
//   - the caller's context ended: an error wrapping ctx.Err().
//
// The API key never appears in an error, a log line or the String form of the
// client or its Config.
package intakeapi

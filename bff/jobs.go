package bff

import (
	"context"
	"time"
)

// TurnQueue is the durable side of turns: a pending (queued or streaming)
// turn is a job, leased to the replica running it. The lease is what lets
// several replicas share the work and lets one replica's death lose nothing.
//
// Error contract as for the other stores (ENOTFOUND, ECONFLICT as *Error;
// anything else internal). Methods honour ctx.
type TurnQueue interface {
	// ClaimStaleTurns leases to owner, until until, at most n pending turns
	// whose lease is empty or ran out at or before now, oldest first, and
	// returns them with their lease set. Two replicas claiming at once never
	// get the same turn.
	ClaimStaleTurns(ctx context.Context, owner string, now, until time.Time, n int) ([]*Turn, error)
	// RenewLeases extends every lease owner holds on a pending turn to
	// until, returning how many: one statement per replica, however many
	// turns it runs.
	RenewLeases(ctx context.Context, owner string, until time.Time) (int, error)
	// MarkTurnStreaming sets a queued turn streaming (its request is about to
	// be sent upstream) with its release, if owner still holds its lease;
	// ECONFLICT when it does not (another replica took the turn over: the
	// caller must stop working it).
	MarkTurnStreaming(ctx context.Context, t *Turn) error
	// SettleTurn writes a settled turn (completed or failed; its lease is
	// cleared) and, when in is not nil, every mutable field of its intake,
	// in one transaction, if t.LeaseOwner still holds the lease (or t has
	// none); ECONFLICT when another replica took the turn over.
	SettleTurn(ctx context.Context, t *Turn, in *Intake) error
}

// TurnEventLog keeps each turn's stream events with their ids, so that a
// browser connected to any replica follows a turn another replica runs,
// and resumes after that replica dies. Only a store shared by several
// replicas needs one (PostgreSQL); with one process the relay's memory is
// the whole truth.
//
// Error contract: every error is internal. Methods honour ctx.
type TurnEventLog interface {
	// AppendTurnEvents stores evs (ids increasing) under key and wakes the
	// followers of key on every replica; an event whose id key already has
	// is skipped, so a retried append writes nothing twice.
	AppendTurnEvents(ctx context.Context, key string, evs []Event) error
	// TurnEvents returns key's events with ID > after, in order.
	TurnEvents(ctx context.Context, key string, after int64) ([]Event, error)
	// LastTurnEventID returns the highest id stored under key, 0 if none:
	// where a replica taking a turn over continues the numbering.
	LastTurnEventID(ctx context.Context, key string) (int64, error)
	// PruneTurnEvents deletes the events stored before before, returning
	// how many: the log is for following running turns, and a settled
	// turn's outcome is in the turns table.
	PruneTurnEvents(ctx context.Context, before time.Time) (int64, error)
}

// ReplicaPresence tells a dead replica from a slow one sooner than a lease
// can: each replica holds its presence in the store for as long as its
// process lives and stays connected, and the store ends it as soon as
// either goes (with PostgreSQL, a session-level advisory lock the server
// releases when the connection drops). A paused process keeps its
// connection, so its presence, and is never taken for dead; the lease
// stays the fallback for a replica that lives but stops renewing. Only a
// store shared by several replicas needs one.
//
// Error contract: every error is internal. Methods honour ctx.
type ReplicaPresence interface {
	// HoldPresence holds name's presence until ctx ends, taking it again
	// whenever it is lost; held is told each change (true: held, false:
	// lost). It returns ctx.Err().
	HoldPresence(ctx context.Context, name string, held func(bool)) error
	// GoneReplicas names the replicas holding pending turns that once held
	// a presence and do not now: dead, or cut off from the store.
	GoneReplicas(ctx context.Context) ([]string, error)
	// ClaimTurnsOf leases to owner, until until, at most n pending turns
	// leased to one of gone whose presence is still gone, oldest first, as
	// ClaimStaleTurns does; a replica that came back keeps its turns.
	ClaimTurnsOf(ctx context.Context, owner string, gone []string, until time.Time, n int) ([]*Turn, error)
}

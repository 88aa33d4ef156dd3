package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/clinical-intake/intake-web/bff"
)

var _ bff.ReplicaPresence = (*DB)(nil)

// presenceSpace is the first key of every replica's advisory lock, the
// second being hashtext(name): "iwpr" in ASCII. Two names with the same
// hash only make one look alive while it is dead: the lease takes over.
const presenceSpace int32 = 0x69777072

// PresenceApplicationName is the application_name of the presence
// connection, for pg_stat_activity (and for tests that cut it).
const PresenceApplicationName = "intake-web presence"

// presenceHeld is SQL true when the replica named by the expression nameSQL
// holds its lock in this database.
func presenceHeld(nameSQL string) string {
	return `EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted
		AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND l.classid = ` + fmt.Sprint(presenceSpace) + `::oid AND l.objid = hashtext(` + nameSQL + `)::oid AND l.objsubid = 2)`
}

// HoldPresence holds name's advisory lock on a connection of its own (not
// the pool's: the lock belongs to one session) until ctx ends, and takes it
// again whenever the connection is lost. The server releases the lock the
// moment the connection closes (the process died) and, through the short
// TCP keepalives set on it, within about 5 s of the replica's machine
// vanishing; a stopped process's kernel answers keepalives, so a pause
// keeps it.
func (db *DB) HoldPresence(ctx context.Context, name string, held func(bool)) error {
	cfg := db.pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = PresenceApplicationName
	cfg.RuntimeParams["tcp_keepalives_idle"] = "2"
	cfg.RuntimeParams["tcp_keepalives_interval"] = "1"
	cfg.RuntimeParams["tcp_keepalives_count"] = "3"
	var (
		wasHeld  bool
		lastWarn time.Time
		delay    = presenceRetryMin
	)
	hold := func(h bool) {
		wasHeld = wasHeld || h
		held(h)
	}
	for {
		wasHeld = false
		err := db.holdOnce(ctx, cfg, name, hold)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// A loss is said once; failing to take it again (the database
		// down, or the old session not yet closed) once a minute.
		if wasHeld {
			delay = presenceRetryMin
			db.logger.LogAttrs(ctx, slog.LevelWarn, "replica presence lost; taking it again",
				slog.String("replica", name), slog.Any("err", err))
			lastWarn = time.Now()
		} else if time.Since(lastWarn) >= time.Minute {
			db.logger.LogAttrs(ctx, slog.LevelWarn, "replica presence not taken; still trying",
				slog.String("replica", name), slog.Any("err", err))
			lastWarn = time.Now()
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return ctx.Err()
		}
		delay = min(2*delay, presenceRetryMax)
	}
}

// The waits between attempts to take the presence lock again: doubling,
// and at most well under the 2 s the services wait before taking a gone
// replica's turns (intakes' PresenceGrace), so a replica whose connection came
// back holds its presence again before the others would take its turns.
const (
	presenceRetryMin = 200 * time.Millisecond
	presenceRetryMax = time.Second
)

// errPresenceTaken: another session holds this name's lock (a replica of
// the same name, or this one's previous connection not yet closed).
var errPresenceTaken = errors.New("the presence lock is held by another session")

func (db *DB) holdOnce(ctx context.Context, cfg *pgx.ConnConfig, name string, held func(bool)) error {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = conn.Close(cctx) // the server releases the lock
	}()
	var got bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1, hashtext($2))`, presenceSpace, name).Scan(&got); err != nil {
		return err
	}
	if !got {
		return errPresenceTaken
	}
	if _, err := conn.Exec(ctx, `INSERT INTO replica_presence (name) VALUES ($1) ON CONFLICT (name) DO NOTHING`, name); err != nil {
		return err
	}
	// Each run of a replica has a name of its own: forget the runs gone
	// for a day whose turns were all taken over.
	if _, err := conn.Exec(ctx, `DELETE FROM replica_presence p WHERE p.since < now() - interval '1 day'
		AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.lease_owner = p.name AND t.status IN ('queued', 'streaming'))
		AND NOT `+presenceHeld("p.name")); err != nil {
		return err
	}
	held(true)
	defer held(false)
	// Waiting on the socket notices a closed connection at once; the
	// ping every second notices a silent one.
	for {
		wctx, cancel := context.WithTimeout(ctx, time.Second)
		err := conn.PgConn().WaitForNotification(wctx)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) && !pgconn.Timeout(err) {
			return err
		}
		pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		err = conn.Ping(pctx)
		cancel()
		if err != nil {
			return err
		}
	}
}

// GoneReplicas names the replicas with pending turns whose presence row
// exists and whose lock no session holds.
func (db *DB) GoneReplicas(ctx context.Context) ([]string, error) {
	rows, err := db.pool.Query(ctx, `SELECT p.name FROM replica_presence p
		WHERE EXISTS (SELECT 1 FROM turns t WHERE t.lease_owner = p.name AND t.status IN ('queued', 'streaming'))
		AND NOT `+presenceHeld("p.name")+` ORDER BY p.name`)
	if err != nil {
		return nil, fmt.Errorf("postgres: gone replicas: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("postgres: gone replicas: %w", err)
	}
	return names, nil
}

// ClaimTurnsOf leases to owner the pending turns of the replicas in gone
// whose lock is still free, in the statement that claims them: a replica
// that came back between GoneReplicas and here keeps its turns.
func (db *DB) ClaimTurnsOf(ctx context.Context, owner string, gone []string, until time.Time, n int) ([]*bff.Turn, error) {
	if n <= 0 || len(gone) == 0 {
		return nil, nil
	}
	ts, err := db.queryTurns(ctx, `UPDATE turns SET lease_owner = $1, lease_until = $2
		WHERE (intake_id, idx) IN (SELECT intake_id, idx FROM turns
			WHERE status IN ('queued', 'streaming') AND lease_owner = ANY($3) AND lease_owner <> $1
			AND EXISTS (SELECT 1 FROM replica_presence p WHERE p.name = turns.lease_owner)
			AND NOT `+presenceHeld("turns.lease_owner")+`
			ORDER BY created_at, seq LIMIT $4
			FOR UPDATE SKIP LOCKED)
		RETURNING `+turnColumns, owner, until, gone, n)
	if err != nil {
		return nil, fmt.Errorf("postgres: claim the turns of gone replicas: %w", err)
	}
	sortTurns(ts)
	return ts, nil
}

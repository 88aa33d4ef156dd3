package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clinical-intake/intake-web/bff"
)

// The LISTEN/NOTIFY channels. A turn's events are rows of turn_events; the
// notification only says "key has events up to lastID" ("<lastID> <key>"),
// and a follower reads them from the table.
const (
	ChannelTurnEvents    = "intake_turn_events"
	ChannelIntakeChanged = "intake_changed"
)

// ListenApplicationName is the application_name of Listen's connection, by
// which an operator (or a test) finds it in pg_stat_activity.
const ListenApplicationName = "intake-web listen"

// MaxNotifyPayload is PostgreSQL's limit on a notification's payload:
// NotifyIntakeChanged refuses a payload this long or longer.
const MaxNotifyPayload = 8000

// Listen's reconnection backoff.
const (
	listenMinBackoff = 100 * time.Millisecond
	listenMaxBackoff = 10 * time.Second
)

// AppendTurnEvents stores evs under key, skipping ids key already has, and
// in the same statement NOTIFYs ChannelTurnEvents with key and the highest
// id it inserted (nothing inserted, no notification): the notification goes
// out at commit, when the rows are there to read. Every error is internal.
func (db *DB) AppendTurnEvents(ctx context.Context, key string, evs []bff.Event) error {
	if len(evs) == 0 {
		return nil
	}
	if len(key)+21 >= MaxNotifyPayload {
		return fmt.Errorf("postgres: append turn events: key of %d bytes is too long to notify", len(key))
	}
	ids := make([]int64, len(evs))
	names := make([]string, len(evs))
	data := make([][]byte, len(evs))
	for i, e := range evs {
		ids[i], names[i], data[i] = e.ID, e.Name, e.Data
		if data[i] == nil {
			data[i] = []byte{} // a nil element would be NULL
		}
	}
	if _, err := db.pool.Exec(ctx, `WITH ins AS (
			INSERT INTO turn_events (key, id, name, data)
			SELECT $1, u.id, u.name, u.data
			FROM unnest($2::bigint[], $3::text[], $4::bytea[]) AS u (id, name, data)
			ON CONFLICT (key, id) DO NOTHING
			RETURNING id)
		SELECT pg_notify('`+ChannelTurnEvents+`', max(id)::text || ' ' || $1)
		FROM ins HAVING count(*) > 0`, key, ids, names, data); err != nil {
		return fmt.Errorf("postgres: append turn events: %w", err)
	}
	return nil
}

// TurnEvents returns key's events with ID > after, in order. Every error is
// internal.
func (db *DB) TurnEvents(ctx context.Context, key string, after int64) ([]bff.Event, error) {
	rows, err := db.pool.Query(ctx, `SELECT id, name, data FROM turn_events
		WHERE key = $1 AND id > $2 ORDER BY id`, key, after)
	if err != nil {
		return nil, fmt.Errorf("postgres: turn events: %w", err)
	}
	evs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (bff.Event, error) {
		var e bff.Event
		err := r.Scan(&e.ID, &e.Name, &e.Data)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: turn events: %w", err)
	}
	return evs, nil
}

// LastTurnEventID returns the highest id stored under key, 0 if none. Every
// error is internal.
func (db *DB) LastTurnEventID(ctx context.Context, key string) (int64, error) {
	var id int64
	if err := db.pool.QueryRow(ctx, `SELECT COALESCE(MAX(id), 0) FROM turn_events WHERE key = $1`, key).Scan(&id); err != nil {
		return 0, fmt.Errorf("postgres: last turn event id: %w", err)
	}
	return id, nil
}

// NotifyIntakeChanged sends payload (text, e.g. JSON) on
// ChannelIntakeChanged to every replica's Listen, at once (outside any
// transaction). An error (internal) when payload is MaxNotifyPayload bytes
// or longer, or the database refuses it.
func (db *DB) NotifyIntakeChanged(ctx context.Context, payload []byte) error {
	if len(payload) >= MaxNotifyPayload {
		return fmt.Errorf("postgres: notify intake changed: payload of %d bytes (limit %d)", len(payload), MaxNotifyPayload)
	}
	if _, err := db.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, ChannelIntakeChanged, string(payload)); err != nil {
		return fmt.Errorf("postgres: notify intake changed: %w", err)
	}
	return nil
}

// PruneTurnEvents deletes the events stored before before (the
// turn_events_at index finds them). Every error is internal.
func (db *DB) PruneTurnEvents(ctx context.Context, before time.Time) (int64, error) {
	tag, err := db.pool.Exec(ctx, `DELETE FROM turn_events WHERE at < $1`, before)
	if err != nil {
		return 0, fmt.Errorf("postgres: prune turn events: %w", err)
	}
	return tag.RowsAffected(), nil
}

// Notifications are Listen's callbacks, called one at a time on Listen's
// goroutine (they must not block for long: notifications queue meanwhile).
// A nil callback is skipped.
type Notifications struct {
	// TurnEvents: key has events up to lastID in the event log.
	TurnEvents func(key string, lastID int64)
	// IntakeChanged: a NotifyIntakeChanged payload.
	IntakeChanged func(payload []byte)
	// Reconnected: the connection came back after a loss, and notifications
	// sent meanwhile are lost: catch up from the tables.
	Reconnected func()
}

// Listen LISTENs on ChannelTurnEvents and ChannelIntakeChanged on a
// connection of its own (not the pool's) and calls n's callbacks, until ctx
// ends; then it returns ctx.Err(). When the connection drops it reconnects,
// with a backoff from 100 ms doubling to 10 s, logging each failure, and
// calls n.Reconnected after each new connection listens.
func (db *DB) Listen(ctx context.Context, n Notifications) error {
	cfg := db.pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = ListenApplicationName
	backoff, connected := listenMinBackoff, false
	for {
		err := listenOnce(ctx, cfg, n, func() {
			if connected && n.Reconnected != nil {
				n.Reconnected()
			}
			connected, backoff = true, listenMinBackoff
		})
		if ctx.Err() != nil {
			return ctx.Err()
		}
		db.logger.LogAttrs(ctx, slog.LevelWarn, "listen connection lost; reconnecting",
			slog.Any("err", err), slog.Duration("backoff", backoff))
		timer := time.NewTimer(backoff)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		}
		backoff = min(2*backoff, listenMaxBackoff)
	}
}

// listenOnce connects, listens, calls listening, and dispatches
// notifications until the connection fails or ctx ends.
func listenOnce(ctx context.Context, cfg *pgx.ConnConfig, n Notifications, listening func()) error {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	for _, ch := range []string{ChannelTurnEvents, ChannelIntakeChanged} {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
			return err
		}
	}
	listening()
	for {
		msg, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		switch msg.Channel {
		case ChannelTurnEvents:
			id, key, ok := strings.Cut(msg.Payload, " ")
			last, err := strconv.ParseInt(id, 10, 64)
			if ok && err == nil && n.TurnEvents != nil {
				n.TurnEvents(key, last)
			}
		case ChannelIntakeChanged:
			if n.IntakeChanged != nil {
				n.IntakeChanged([]byte(msg.Payload))
			}
		}
	}
}

package catalog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DDLChannel is the NOTIFY channel the ddl_command_end event trigger
// installed by InstallDDLTrigger signals on; the payload is the command tag.
const DDLChannel = "atrium_ddl"

// WatchOptions configures Watch.
type WatchOptions struct {
	// Sync is used for every sync Watch runs (Wait is forced on, so a
	// manual sync running at the same time delays Watch instead of
	// stopping it).
	Sync SyncOptions
	// Interval between full syncs when no DDL is notified (default 5m);
	// the fallback when the event trigger cannot be installed or a
	// notification was missed while disconnected.
	Interval time.Duration
	// Debounce is how long Watch waits after a notification for more DDL
	// before syncing, so a migration of 100 statements costs one sync
	// (default 2s).
	Debounce time.Duration
	// OnSync, when set, is called after every sync with its result.
	OnSync func(SyncStats, error)
}

// InstallDDLTrigger creates (or replaces) the event trigger that NOTIFYs
// DDLChannel at ddl_command_end in the database behind src. It needs
// superuser, as every event trigger does.
func InstallDDLTrigger(ctx context.Context, src *pgxpool.Pool) error {
	_, err := src.Exec(ctx, `
CREATE SCHEMA IF NOT EXISTS atrium;
CREATE OR REPLACE FUNCTION atrium.notify_ddl() RETURNS event_trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('`+DDLChannel+`', tg_tag);
END $$;
COMMENT ON FUNCTION atrium.notify_ddl() IS 'Tells atrium catalog watch that the schema changed (NOTIFY `+DDLChannel+`).';
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'atrium_ddl_notify') THEN
        CREATE EVENT TRIGGER atrium_ddl_notify ON ddl_command_end EXECUTE FUNCTION atrium.notify_ddl();
    END IF;
END $$;`)
	if err != nil {
		return fmt.Errorf("catalog: install ddl_command_end event trigger: %w", err)
	}
	return nil
}

// Watch keeps the catalog in cat current until ctx ends: it syncs once,
// then again after DDL is notified (debounced) and every Interval. It
// installs the event trigger when it can and otherwise logs why it relies
// on the interval alone. A failed sync is logged and retried at the next
// trigger; Watch returns only when ctx ends (with ctx.Err()) or when the
// options are unusable.
func Watch(ctx context.Context, cat *pgxpool.Pool, opts WatchOptions) error {
	if opts.Interval <= 0 {
		opts.Interval = 5 * time.Minute
	}
	if opts.Debounce <= 0 {
		opts.Debounce = 2 * time.Second
	}
	opts.Sync.defaults()
	opts.Sync.Wait = true
	src := opts.Sync.Source
	if src == nil {
		src = cat
	}
	log := opts.Sync.Logger
	if err := InstallDDLTrigger(ctx, src); err != nil {
		log.Warn("DDL notifications unavailable; relying on periodic sync", "interval", opts.Interval, "err", err)
	}

	notes := make(chan string, 1)
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		listen(wctx, src, notes, log.Warn)
	}()
	defer func() {
		stop()
		wg.Wait()
	}()

	run := func(reason string) {
		log.Info("catalog watch: syncing", "reason", reason)
		st, err := Sync(ctx, cat, opts.Sync)
		if err != nil && ctx.Err() == nil {
			log.Error("catalog watch: sync failed; will retry", "err", err)
		}
		if opts.OnSync != nil && ctx.Err() == nil {
			opts.OnSync(st, err)
		}
	}
	run("start")
	ticker := time.NewTicker(opts.Interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ticker.C:
			run("interval")
		case tag := <-notes:
			// Let a burst of DDL finish before syncing.
			t := time.NewTimer(opts.Debounce)
		drain:
			for {
				select {
				case <-notes:
					t.Reset(opts.Debounce)
				case <-t.C:
					break drain
				case <-ctx.Done():
					t.Stop()
					return ctx.Err()
				}
			}
			run("ddl: " + tag)
			ticker.Reset(opts.Interval)
		}
	}
}

// listen forwards DDL notifications to out until ctx ends, reconnecting with
// backoff when the listening connection fails.
func listen(ctx context.Context, src *pgxpool.Pool, out chan<- string, warn func(string, ...any)) {
	backoff := time.Second
	for ctx.Err() == nil {
		err := listenOnce(ctx, src, out)
		if ctx.Err() != nil {
			return
		}
		warn("catalog watch: lost the DDL notification connection; reconnecting", "err", err, "in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, time.Minute)
	}
}

func listenOnce(ctx context.Context, src *pgxpool.Pool, out chan<- string) error {
	conn, err := src.Acquire(ctx)
	if err != nil {
		return err
	}
	// The connection has LISTEN state; never return it to the pool.
	defer func() {
		c := conn.Hijack()
		c.Close(context.WithoutCancel(ctx)) //nolint:errcheck
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+DDLChannel); err != nil {
		return err
	}
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			var pe *pgconn.PgError
			if errors.As(err, &pe) {
				return fmt.Errorf("listen: %w", err)
			}
			return err
		}
		select {
		case out <- n.Payload:
		default: // a sync is already due
		}
	}
}

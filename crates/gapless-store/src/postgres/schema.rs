//! Creating and recognising a ledger schema in PostgreSQL, migrations, and
//! naming it in SQL (schema names, quoted identifiers).
//!
//! # Schema (version 12)
//!
//! All objects live in one PostgreSQL schema (`gapless` unless the URL says
//! `?schema=NAME`), created when missing:
//!
//! ```sql
//! CREATE TABLE gapless_version (          -- one row per applied migration
//!     version    integer PRIMARY KEY,
//!     applied_at timestamptz NOT NULL DEFAULT now()
//! );
//! CREATE TABLE assets (
//!     id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
//!     name         text NOT NULL UNIQUE,
//!     key_span     text,                  -- ISO 8601 duration, NULL: none declared
//!     tz           text,                  -- IANA name, NULL: never declared
//!     event_count  bigint NOT NULL DEFAULT 0,
//!     max_len_us   bigint NOT NULL DEFAULT 0, -- longest event, for range seeks
//!     min_start_us bigint,                -- hull of all events (plan choice)
//!     max_end_us   bigint,
//!     last_received_us bigint,            -- version 3: when its last event was stored
//!     last_n       integer NOT NULL DEFAULT 0 -- version 8: the `n` of its last event
//! );
//! CREATE SEQUENCE events_seq;             -- the sequence numbers
//! CREATE TABLE events (                   -- version 11: eight columns (row.rs)
//!     seq         bigint NOT NULL,        -- from events_seq, under the asset's lock
//!     asset_id    bigint NOT NULL,
//!     start_us    bigint NOT NULL,
//!     end_us      bigint NOT NULL,
//!     received_at bigint NOT NULL,
//!     n           integer NOT NULL,       -- its number among its asset's events, 1, 2, ...,
//!                                         -- negated for a retraction
//!     id          text,                   -- the producer's idempotency key
//!     detail      bytea                   -- produced_at and extra (row.rs), NULL: neither
//! );
//! -- version 8: the three ways to events, each index as small as it can be:
//! -- pages in sequence order walk groups of 64 numbers (abs(n) >> 6), sorted on the way
//! CREATE INDEX events_asset_n ON events (asset_id, (abs(n) >> 6));
//! -- range seeks find the events that start in groups of 2^32 us (about 72 minutes)
//! CREATE INDEX events_asset_start ON events (asset_id, (start_us >> 32));
//! -- idempotency by an 8-byte hash of the id seeded with the asset, the id
//! -- compared on the row: ids are unique per asset because appends read them
//! -- under the asset's lock
//! CREATE INDEX events_id_hash ON events (hashtextextended(id, asset_id)) WHERE id IS NOT NULL;
//! CREATE TABLE coverage_runs (
//!     asset_id bigint NOT NULL, start_us bigint NOT NULL, end_us bigint NOT NULL,
//!     PRIMARY KEY (asset_id, start_us)
//! );
//! -- version 2: rules (SPEC §7); columns as in the SQLite backend
//! CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL); -- ledger_id
//! CREATE TABLE rules (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
//!     name text NOT NULL UNIQUE, assets text NOT NULL, every text NOT NULL,
//!     tz text NOT NULL, policy text NOT NULL, from_us bigint NOT NULL, until_us bigint,
//!     deadline text, target text, key_format text NOT NULL,
//!     created_us bigint NOT NULL, deadlines_us bigint NOT NULL);
//! CREATE TABLE rule_assets (asset_id bigint, rule_id bigint, PRIMARY KEY (asset_id, rule_id));
//! CREATE TABLE rule_windows (rule_id bigint, start_us bigint, end_us bigint NOT NULL,
//!     complete boolean NOT NULL, generation bigint NOT NULL, late boolean NOT NULL,
//!     PRIMARY KEY (rule_id, start_us));
//! CREATE TABLE firing_clock (last bigint NOT NULL); -- one row: firing numbers, drawn last
//! CREATE TABLE firings (seq bigint PRIMARY KEY, rule_id bigint NOT NULL, kind smallint NOT NULL,
//!     start_us bigint NOT NULL, end_us bigint NOT NULL, key text NOT NULL,
//!     generation bigint NOT NULL, covered_ratio double precision NOT NULL,
//!     recorded_us bigint NOT NULL, target text, state smallint NOT NULL,
//!     attempts bigint NOT NULL DEFAULT 0, last_error text, next_try_us bigint,
//!     lease_owner text, lease_until_us bigint);
//! CREATE INDEX firings_rule ON firings (rule_id, seq);
//! CREATE INDEX firings_pending ON firings (next_try_us) WHERE state = 1;
//! -- version 3: retractions are few: the buckets' seek, not a walk of the range;
//! -- and assets.last_received_us (from the events' received_at)
//! CREATE INDEX events_retracted ON events (asset_id, start_us) WHERE n < 0;
//! -- version 4: the listings' pages seek names in byte order, as SQLite
//! -- compares them, whatever the database's collation
//! CREATE INDEX assets_name_bytes ON assets (name COLLATE "C");
//! CREATE INDEX rules_name_bytes ON rules (name COLLATE "C");
//! -- version 5: up to when an asset's event detail was pruned (NULL: never)
//! ALTER TABLE assets ADD COLUMN pruned_before_us bigint;
//! -- version 7: the overview's inputs (overview.rs), kept by every append that
//! -- changes the asset's coverage runs, filled from them when migrated
//! ALTER TABLE assets ADD COLUMN first_start_us bigint,  -- its first run (NULL: none)
//!     ADD COLUMN first_end_us bigint,
//!     ADD COLUMN last_end_us bigint,                     -- the end of its last run
//!     ADD COLUMN recent_runs text DEFAULT '[]';          -- JSON [[start, end], ...]: its
//!     -- runs ending within a week before last_end_us (NULL: more than RECENT_RUNS)
//! -- version 9: the recent runs as bytes, each (start, end) as two big-endian
//! -- 8-byte integers (int8send), refilled from the coverage runs
//! ALTER TABLE assets ALTER COLUMN recent_runs TYPE bytea, ALTER COLUMN recent_runs
//!     SET DEFAULT ''::bytea;
//! -- version 10: a row of rule_windows is a run of a rule's windows with one
//! -- record, [start_us, end_us); a run that grows is changed in place
//! ALTER TABLE rule_windows SET (fillfactor = 50);
//! -- version 11: events in eight columns, so that a row with a NULL keeps
//! -- its null bitmap in the header's padding (row.rs); rewritten as version 8
//! -- version 12: meta 'windows_version', moved by each deadline pass that
//! -- writes window states (known.rs)
//! ```
//!
//! Version 6 made events smaller: the columns in an order that wastes no
//! alignment padding, and the idempotency index on a 4-byte hash of the id
//! instead of the id's text (a text id as long as a UUID made that index the
//! largest of the three). The rows are rewritten in `(asset_id, seq)` order.
//!
//! Version 8 made the indexes of events smaller still. The two that led
//! with an exact key (`(asset_id, seq)`, `(asset_id, start_us)`) hold a
//! group of values instead, so that B-tree deduplication keeps one key per
//! group with the row addresses after it: about 6 bytes an event instead of
//! 36. Sequence numbers are drawn for the whole ledger, so one asset's are
//! far apart and would rarely share a group: each event also gets its number
//! among its asset's events, `n` (an `integer` that fits in the row's
//! alignment padding), drawn from `assets.last_n` under the asset's lock, so
//! sequence order and `n` order are the same within an asset. A page of
//! events continues after its last event's `n` (the page's cursor). A
//! range seek reads the groups of 2^32 microseconds its range touches and
//! checks each row: an asset whose events are much shorter than that reads
//! more rows than it returns for a range of less than a few hours. The
//! idempotency index drops its `asset_id` column for an 8-byte hash seeded
//! with it. The rows are rewritten in `(asset_id, seq)` order, numbered.
//!
//! Version 9 keeps the recent runs of version 7 as bytes, which a page of
//! assets reads without parsing JSON. Like version 7, its migration fills
//! every asset's overview inputs from its coverage runs (`overview::fill`,
//! once, after the last migration, in the migrations' transaction).
//!
//! Version 10 keeps a rule's window records as runs (`rule/records.rs`):
//! a rule that keeps up has one row whose end moves, instead of a row and
//! an index entry more for every window. Half of each page is left free, so
//! that the run's new version goes on its page without a new index entry
//! (a HOT update). Its migration joins the rows of a version 9 ledger (one
//! a window) into runs. A build before it would read a run as one window:
//! the version keeps it from opening such a ledger.
//!
//! Version 11 makes each row of `events` eight bytes smaller (`row.rs`): a
//! row with a NULL keeps a bitmap of its columns after its header, which
//! with ten columns took the header from 24 bytes to 32. The kind is the
//! sign of `n`, and `produced_at` and `extra`, which few events carry, are
//! one column of bytes. The rows are rewritten in `(asset_id, seq)` order
//! and the four indexes made again (the sequence one on `abs(n)`, the
//! retractions' on `n < 0`).
//!
//! Instants are microseconds since the Unix epoch, as in the SQLite backend.
//! `coverage_runs` holds the sorted, disjoint, non-adjacent covered runs of
//! each asset, kept up to date in the transaction of every append.
//!
//! # Migrations
//!
//! Opening takes a transaction-scoped advisory lock keyed on the schema name,
//! so any number of processes may start at once: the first creates or
//! migrates the schema, the others wait and then find it current.

use super::client::Client;

use super::error::{open_error, open_failed, Refusal};
use crate::Result;

/// The schema version this build writes and understands.
pub(crate) const SCHEMA_VERSION: i32 = 12;

/// The tables of a current ledger.
const TABLES: [&str; 10] = [
    "gapless_version",
    "assets",
    "events",
    "coverage_runs",
    "meta",
    "rules",
    "rule_assets",
    "rule_windows",
    "firing_clock",
    "firings",
];

/// Migration `i` brings a schema from version `i` to `i + 1`.
const MIGRATIONS: [&str; 12] = [
    "
CREATE TABLE gapless_version (
    version    integer PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE assets (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name         text NOT NULL UNIQUE,
    key_span     text,
    tz           text,
    event_count  bigint NOT NULL DEFAULT 0,
    max_len_us   bigint NOT NULL DEFAULT 0,
    min_start_us bigint,
    max_end_us   bigint
);
CREATE SEQUENCE events_seq AS bigint;
CREATE TABLE events (
    seq         bigint NOT NULL,
    asset_id    bigint NOT NULL,
    id          text,
    start_us    bigint NOT NULL,
    end_us      bigint NOT NULL,
    kind        smallint NOT NULL CHECK (kind IN (0, 1)),
    extra       text,
    produced_at bigint,
    received_at bigint NOT NULL,
    CHECK (start_us < end_us),
    PRIMARY KEY (asset_id, seq),
    UNIQUE (asset_id, id)
);
CREATE INDEX events_asset_start ON events (asset_id, start_us);
CREATE TABLE coverage_runs (
    asset_id bigint NOT NULL,
    start_us bigint NOT NULL,
    end_us   bigint NOT NULL,
    PRIMARY KEY (asset_id, start_us),
    CHECK (start_us < end_us)
);
",
    "
CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL);
INSERT INTO meta (key, value) VALUES ('ledger_id', replace(gen_random_uuid()::text, '-', ''));
CREATE TABLE rules (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name         text NOT NULL UNIQUE,
    assets       text NOT NULL,
    every        text NOT NULL,
    tz           text NOT NULL,
    policy       text NOT NULL,
    from_us      bigint NOT NULL,
    until_us     bigint,
    deadline     text,
    target       text,
    key_format   text NOT NULL,
    created_us   bigint NOT NULL,
    deadlines_us bigint NOT NULL
);
CREATE TABLE rule_assets (
    asset_id bigint NOT NULL,
    rule_id  bigint NOT NULL,
    PRIMARY KEY (asset_id, rule_id)
);
CREATE TABLE rule_windows (
    rule_id    bigint NOT NULL,
    start_us   bigint NOT NULL,
    end_us     bigint NOT NULL,
    complete   boolean NOT NULL,
    generation bigint NOT NULL,
    late       boolean NOT NULL,
    PRIMARY KEY (rule_id, start_us)
);
CREATE TABLE firing_clock (last bigint NOT NULL);
INSERT INTO firing_clock (last) VALUES (0);
CREATE TABLE firings (
    seq            bigint PRIMARY KEY,
    rule_id        bigint NOT NULL,
    kind           smallint NOT NULL CHECK (kind IN (0, 1, 2)),
    start_us       bigint NOT NULL,
    end_us         bigint NOT NULL,
    key            text NOT NULL,
    generation     bigint NOT NULL,
    covered_ratio  double precision NOT NULL,
    recorded_us    bigint NOT NULL,
    target         text,
    state          smallint NOT NULL CHECK (state IN (0, 1, 2, 3)),
    attempts       bigint NOT NULL DEFAULT 0,
    last_error     text,
    next_try_us    bigint,
    lease_owner    text,
    lease_until_us bigint
);
CREATE INDEX firings_rule ON firings (rule_id, seq);
CREATE INDEX firings_pending ON firings (next_try_us) WHERE state = 1;
",
    "
CREATE INDEX IF NOT EXISTS events_retracted ON events (asset_id, start_us) WHERE kind = 1;
ALTER TABLE assets ADD COLUMN IF NOT EXISTS last_received_us bigint;
UPDATE assets SET last_received_us =
    (SELECT max(received_at) FROM events e WHERE e.asset_id = assets.id);
",
    "
CREATE INDEX IF NOT EXISTS assets_name_bytes ON assets (name COLLATE \"C\");
CREATE INDEX IF NOT EXISTS rules_name_bytes ON rules (name COLLATE \"C\");
",
    "
ALTER TABLE assets ADD COLUMN IF NOT EXISTS pruned_before_us bigint;
",
    "
CREATE TABLE events_v6 (
    seq         bigint NOT NULL,
    asset_id    bigint NOT NULL,
    start_us    bigint NOT NULL,
    end_us      bigint NOT NULL,
    received_at bigint NOT NULL,
    produced_at bigint,
    kind        smallint NOT NULL CONSTRAINT events_kind_check CHECK (kind IN (0, 1)),
    id          text,
    extra       text,
    CONSTRAINT events_check CHECK (start_us < end_us)
);
INSERT INTO events_v6 (seq, asset_id, start_us, end_us, received_at, produced_at, kind, id, extra)
    SELECT seq, asset_id, start_us, end_us, received_at, produced_at, kind, id, extra
    FROM events ORDER BY asset_id, seq;
DROP TABLE events;
ALTER TABLE events_v6 RENAME TO events;
ALTER TABLE events ADD CONSTRAINT events_pkey PRIMARY KEY (asset_id, seq);
CREATE INDEX events_asset_start ON events (asset_id, start_us);
CREATE INDEX events_retracted ON events (asset_id, start_us) WHERE kind = 1;
CREATE INDEX events_id_hash ON events (asset_id, hashtext(id)) WHERE id IS NOT NULL;
",
    // Filled by `overview::fill` in the same transaction (after version 9).
    "
ALTER TABLE assets ADD COLUMN IF NOT EXISTS first_start_us bigint,
    ADD COLUMN IF NOT EXISTS first_end_us bigint,
    ADD COLUMN IF NOT EXISTS last_end_us bigint,
    ADD COLUMN IF NOT EXISTS recent_runs text DEFAULT '[]';
",
    "
CREATE TABLE events_v8 (
    seq         bigint NOT NULL,
    asset_id    bigint NOT NULL,
    start_us    bigint NOT NULL,
    end_us      bigint NOT NULL,
    received_at bigint NOT NULL,
    produced_at bigint,
    n           integer NOT NULL,
    kind        smallint NOT NULL CONSTRAINT events_kind_check CHECK (kind IN (0, 1)),
    id          text,
    extra       text,
    CONSTRAINT events_check CHECK (start_us < end_us)
);
INSERT INTO events_v8 (seq, asset_id, start_us, end_us, received_at, produced_at, n, kind, id, extra)
    SELECT seq, asset_id, start_us, end_us, received_at, produced_at,
        row_number() OVER (PARTITION BY asset_id ORDER BY seq), kind, id, extra
    FROM events ORDER BY asset_id, seq;
DROP TABLE events;
ALTER TABLE events_v8 RENAME TO events;
CREATE INDEX events_asset_n ON events (asset_id, (n >> 6));
CREATE INDEX events_asset_start ON events (asset_id, (start_us >> 32));
CREATE INDEX events_retracted ON events (asset_id, start_us) WHERE kind = 1;
CREATE INDEX events_id_hash ON events (hashtextextended(id, asset_id)) WHERE id IS NOT NULL;
ALTER TABLE assets ADD COLUMN IF NOT EXISTS last_n integer NOT NULL DEFAULT 0;
UPDATE assets SET last_n = coalesce((SELECT max(n) FROM events e WHERE e.asset_id = assets.id), 0);
",
    // Refilled by `overview::fill` in the same transaction.
    "
ALTER TABLE assets ALTER COLUMN recent_runs DROP DEFAULT,
    ALTER COLUMN recent_runs TYPE bytea USING NULL,
    ALTER COLUMN recent_runs SET DEFAULT ''::bytea;
",
    // A window's row is a run of one: runs of windows that follow one
    // another with one record become one row.
    "
ALTER TABLE rule_windows SET (fillfactor = 50);
CREATE TEMP TABLE rule_runs ON COMMIT DROP AS
    SELECT rule_id, min(start_us) AS start_us, max(end_us) AS end_us, complete, generation, late
    FROM (SELECT *, count(*) FILTER (WHERE NOT joined)
            OVER (PARTITION BY rule_id ORDER BY start_us) AS run
          FROM (SELECT *, coalesce(lag(end_us) OVER w = start_us
                    AND lag(complete) OVER w = complete
                    AND lag(generation) OVER w = generation
                    AND lag(late) OVER w = late, false) AS joined
                FROM rule_windows
                WHERE complete OR generation <> 0 OR late
                WINDOW w AS (PARTITION BY rule_id ORDER BY start_us)) j) r
    GROUP BY rule_id, run, complete, generation, late;
TRUNCATE rule_windows;
INSERT INTO rule_windows (rule_id, start_us, end_us, complete, generation, late)
    SELECT rule_id, start_us, end_us, complete, generation, late FROM rule_runs
    ORDER BY rule_id, start_us;
",
    // The detail's flag byte: 1 produced_at, 2 extra (row.rs).
    "
CREATE TABLE events_v11 (
    seq         bigint NOT NULL,
    asset_id    bigint NOT NULL,
    start_us    bigint NOT NULL,
    end_us      bigint NOT NULL,
    received_at bigint NOT NULL,
    n           integer NOT NULL CONSTRAINT events_n_check CHECK (n <> 0),
    id          text,
    detail      bytea,
    CONSTRAINT events_check CHECK (start_us < end_us)
);
INSERT INTO events_v11 (seq, asset_id, start_us, end_us, received_at, n, id, detail)
    SELECT seq, asset_id, start_us, end_us, received_at, CASE kind WHEN 1 THEN -n ELSE n END, id,
        CASE WHEN produced_at IS NOT NULL OR extra IS NOT NULL THEN
            set_byte(decode('00', 'hex'), 0,
                (produced_at IS NOT NULL)::int | ((extra IS NOT NULL)::int << 1))
            || coalesce(int8send(produced_at), '') || coalesce(convert_to(extra, 'UTF8'), '')
        END
    FROM events ORDER BY asset_id, seq;
DROP TABLE events;
ALTER TABLE events_v11 RENAME TO events;
CREATE INDEX events_asset_n ON events (asset_id, (abs(n) >> 6));
CREATE INDEX events_asset_start ON events (asset_id, (start_us >> 32));
CREATE INDEX events_retracted ON events (asset_id, start_us) WHERE n < 0;
CREATE INDEX events_id_hash ON events (hashtextextended(id, asset_id)) WHERE id IS NOT NULL;
",
    // Deadline passes count the passes that wrote window states, so that
    // an append's connection can keep the states it read and wrote; a
    // build before this version would pass deadlines without counting.
    "
INSERT INTO meta (key, value) VALUES ('windows_version', '0') ON CONFLICT (key) DO NOTHING;
",
];

/// Create the schema `schema` and its tables when missing, migrate an older
/// one, refuse a newer one or a schema that holds other tables of the same
/// names.
///
/// With `create` false, a schema that does not exist is
/// [`crate::StoreError::Missing`] and nothing is created.
pub(crate) fn migrate(
    client: &mut Client,
    location: &str,
    schema: &str,
    create: bool,
) -> Result<()> {
    let fail = |e: tokio_postgres::Error| open_failed(location, e);
    let quoted = quote_ident(schema);
    // Asset names, ids and `extra` are any UTF-8: a database in another
    // encoding would refuse or change some of them.
    let encoding: String = client
        .query_one("SELECT current_setting('server_encoding')", &[])
        .map_err(fail)?
        .get(0);
    if encoding != "UTF8" {
        return Err(open_error(
            location,
            format!(
                "the database uses encoding {encoding}; a gapless ledger needs a UTF8 database"
            ),
        ));
    }
    let mut tx = client.transaction();
    // One opener at a time per schema; released at commit or rollback.
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtext('gapless schema'), hashtext($1))",
        &[&schema],
    )
    .map_err(fail)?;
    let exists: bool = tx
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)",
            &[&schema],
        )
        .map_err(fail)?
        .get(0);
    if !exists {
        if !create {
            return Err(crate::StoreError::Missing {
                location: format!("{location} (schema {schema:?})"),
            });
        }
        tx.batch_execute(&format!("CREATE SCHEMA {quoted}"))
            .map_err(fail)?;
    }
    let present: Vec<String> = tx
        .query(
            "SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = $1 AND c.relname = ANY($2)",
            &[&schema, &&TABLES[..]],
        )
        .map_err(fail)?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let version = if present.iter().any(|t| t == "gapless_version") {
        let v: Option<i32> = tx
            .query_one(
                &format!("SELECT max(version) FROM {quoted}.gapless_version"),
                &[],
            )
            .map_err(fail)?
            .get(0);
        v.unwrap_or(0)
    } else if present.is_empty() {
        0
    } else {
        return Err(open_error(
            location,
            format!(
                "not a gapless ledger: schema {schema:?} holds tables of another application \
                 (choose another schema with ?schema=NAME)"
            ),
        ));
    };
    if version > SCHEMA_VERSION {
        return Err(open_error(
            location,
            format!(
                "the ledger has schema version {version}, newer than this gapless understands \
                 ({SCHEMA_VERSION}); upgrade gapless"
            ),
        ));
    }
    if version < SCHEMA_VERSION {
        tx.batch_execute(&format!("SET LOCAL search_path TO {quoted}"))
            .map_err(fail)?;
        for (from, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            tx.batch_execute(sql).map_err(fail)?;
            tx.execute(
                "INSERT INTO gapless_version (version) VALUES ($1)",
                &[&(from as i32 + 1)],
            )
            .map_err(fail)?;
        }
        if version < super::overview::FILLED_VERSION {
            super::overview::fill(&mut tx).map_err(fail)?;
        }
    } else {
        for table in TABLES {
            if !present.iter().any(|t| t == table) {
                return Err(open_error(
                    location,
                    format!("the ledger is damaged: table {table} is missing"),
                ));
            }
        }
    }
    tx.commit().map_err(fail)?;
    Ok(())
}

/// Check a schema name: what PostgreSQL can name (1 to 63 bytes, no NUL).
pub(crate) fn check_schema_name(schema: &str) -> Result<(), Refusal> {
    if schema.is_empty() || schema.len() > 63 || schema.contains('\0') {
        return Err(Refusal::new(format!(
            "invalid schema name {schema:?} (1 to 63 bytes)"
        )));
    }
    Ok(())
}

/// `name` as a quoted SQL identifier.
pub(crate) fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_quoted() {
        assert_eq!(quote_ident("a\"b"), "\"a\"\"b\"");
    }

    #[test]
    fn schema_names_are_checked() {
        assert!(check_schema_name("gapless").is_ok());
        assert!(check_schema_name("").is_err());
        assert!(check_schema_name(&"x".repeat(64)).is_err());
        assert!(check_schema_name("a\0b").is_err());
    }
}

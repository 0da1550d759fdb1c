/**
 * SQLite schema and migrations, tracked with PRAGMA user_version.
 * Migrations are append-only: never edit a released step, add a new one.
 */
export const MIGRATIONS: readonly string[] = [
  // 1: initial schema. AUTOINCREMENT (not plain rowid) so ids are never
  // reused, even after retention deletes the newest jobs (sqlite_sequence).
  `CREATE TABLE jobs (
     id           INTEGER PRIMARY KEY AUTOINCREMENT,
     owner_uid    INTEGER NOT NULL,
     owner_gid    INTEGER NOT NULL,
     owner_name   TEXT    NOT NULL,
     name         TEXT    NOT NULL,
     count        INTEGER NOT NULL,
     kind         TEXT,
     device_ids   TEXT,
     spec         TEXT    NOT NULL,
     state        TEXT    NOT NULL,
     devices      TEXT    NOT NULL DEFAULT '[]',
     submitted_at INTEGER NOT NULL,
     started_at   INTEGER,
     finished_at  INTEGER,
     exit_code    INTEGER,
     error        TEXT,
     stepd_pid    INTEGER
   );
   CREATE INDEX jobs_active ON jobs(state) WHERE state IN ('PENDING', 'RUNNING');
   CREATE INDEX jobs_expiry ON jobs(finished_at) WHERE finished_at IS NOT NULL;
   CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
   INSERT INTO meta(key, value) VALUES ('application', 'xlurm');`,
  // 2: stepd_pid goes: nothing read it back (a daemon finds supervisors
  // through their locks, never through pids). DROP COLUMN needs SQLite 3.35;
  // better-sqlite3 bundles a newer one.
  `ALTER TABLE jobs DROP COLUMN stepd_pid;`,
  // 3: host CPUs and memory (docs/behaviour.md §24): what the job asked for
  // (also in its spec, but summaries read these columns, not the spec's JSON),
  // and what its cgroup measured (NULL where it had none).
  `ALTER TABLE jobs ADD COLUMN cpus INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE jobs ADD COLUMN mem INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE jobs ADD COLUMN peak_memory INTEGER;
   ALTER TABLE jobs ADD COLUMN cpu_seconds REAL;`,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

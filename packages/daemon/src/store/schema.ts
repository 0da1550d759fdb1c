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
  // 4: accounting (docs/behaviour.md §26.1–§26.3). For usage statistics
  // (accounting/stats.ts): usage_daily, one row per user and UTC day of the
  // jobs that ended, kept by a trigger and outliving the jobs' retention;
  // jobs_stats, covering the partial days at a window's ends; and the two
  // per-user indexes the 95th percentile of the wait is read from. The
  // samples, with their own retention (`[accounting] retention`): a sample
  // row names the holder's owner itself, as the job may be gone long before.
  // metric_totals: what the Prometheus text needs without a scan of the
  // history (jobs per state) and the counters that outlive it (device
  // seconds per user, the job wait histogram), kept by triggers on the
  // jobs' transitions, seeded from the history there is.
  `CREATE INDEX jobs_stats ON jobs(finished_at, owner_uid, state, started_at, submitted_at, count,
     cpus, owner_name) WHERE finished_at IS NOT NULL;
   CREATE INDEX jobs_user_end ON jobs(owner_uid, finished_at) WHERE started_at IS NOT NULL AND finished_at IS NOT NULL;
   CREATE INDEX jobs_user_wait ON jobs(owner_uid, started_at - submitted_at, finished_at)
     WHERE started_at IS NOT NULL AND finished_at IS NOT NULL;
   CREATE TABLE usage_daily (
     day               INTEGER NOT NULL,
     uid               INTEGER NOT NULL,
     name              TEXT    NOT NULL,
     completed         INTEGER NOT NULL DEFAULT 0,
     failed            INTEGER NOT NULL DEFAULT 0,
     cancelled         INTEGER NOT NULL DEFAULT 0,
     timed_out         INTEGER NOT NULL DEFAULT 0,
     expired           INTEGER NOT NULL DEFAULT 0,
     out_of_memory     INTEGER NOT NULL DEFAULT 0,
     started           INTEGER NOT NULL DEFAULT 0,
     device_seconds    REAL    NOT NULL DEFAULT 0,
     cpu_seconds       REAL    NOT NULL DEFAULT 0,
     wait_seconds      REAL    NOT NULL DEFAULT 0,
     run_seconds       REAL    NOT NULL DEFAULT 0,
     PRIMARY KEY (day, uid)
   ) WITHOUT ROWID;
   CREATE TRIGGER jobs_usage_daily AFTER UPDATE OF state ON jobs
     WHEN OLD.finished_at IS NULL AND NEW.finished_at IS NOT NULL
   BEGIN
     INSERT INTO usage_daily (day, uid, name, completed, failed, cancelled, timed_out, expired, out_of_memory,
                              started, device_seconds, cpu_seconds, wait_seconds, run_seconds)
     VALUES (NEW.finished_at / 86400, NEW.owner_uid, NEW.owner_name,
             NEW.state = 'COMPLETED', NEW.state = 'FAILED', NEW.state = 'CANCELLED', NEW.state = 'TIMED_OUT',
             NEW.state = 'EXPIRED', NEW.state = 'OUT_OF_MEMORY', NEW.started_at IS NOT NULL,
             ifnull(max(0, NEW.finished_at - NEW.started_at) * NEW.count, 0),
             ifnull(max(0, NEW.finished_at - NEW.started_at) * NEW.cpus, 0),
             ifnull(NEW.started_at - NEW.submitted_at, 0), ifnull(max(0, NEW.finished_at - NEW.started_at), 0))
     ON CONFLICT (day, uid) DO UPDATE SET
       name = excluded.name, completed = completed + excluded.completed, failed = failed + excluded.failed,
       cancelled = cancelled + excluded.cancelled, timed_out = timed_out + excluded.timed_out,
       expired = expired + excluded.expired, out_of_memory = out_of_memory + excluded.out_of_memory,
       started = started + excluded.started, device_seconds = device_seconds + excluded.device_seconds,
       cpu_seconds = cpu_seconds + excluded.cpu_seconds, wait_seconds = wait_seconds + excluded.wait_seconds,
       run_seconds = run_seconds + excluded.run_seconds;
   END;
   INSERT INTO usage_daily (day, uid, name, completed, failed, cancelled, timed_out, expired, out_of_memory,
                            started, device_seconds, cpu_seconds, wait_seconds, run_seconds)
     SELECT finished_at / 86400, owner_uid, max(owner_name),
            total(state = 'COMPLETED'), total(state = 'FAILED'), total(state = 'CANCELLED'), total(state = 'TIMED_OUT'),
            total(state = 'EXPIRED'), total(state = 'OUT_OF_MEMORY'), count(started_at),
            total(max(0, finished_at - started_at) * count),
            total(max(0, finished_at - started_at) * cpus),
            total(started_at - submitted_at), total(max(0, finished_at - started_at))
       FROM jobs WHERE finished_at IS NOT NULL GROUP BY finished_at / 86400, owner_uid;
   CREATE TABLE device_samples (
     at          INTEGER NOT NULL,
     device      TEXT    NOT NULL,
     status      TEXT    NOT NULL,
     job         INTEGER,
     user        TEXT,
     utilization REAL,
     memory_used INTEGER
   );
   CREATE INDEX device_samples_at ON device_samples(at);
   CREATE TABLE host_samples (
     at              INTEGER NOT NULL,
     mem_available   INTEGER,
     load1           REAL,
     load5           REAL,
     load15          REAL,
     cpu_pressure    REAL,
     memory_pressure REAL,
     io_pressure     REAL,
     pending         INTEGER NOT NULL,
     running         INTEGER NOT NULL
   );
   CREATE INDEX host_samples_at ON host_samples(at);
   CREATE TABLE metric_totals (
     name  TEXT NOT NULL,
     label TEXT NOT NULL,
     value REAL NOT NULL,
     PRIMARY KEY (name, label)
   ) WITHOUT ROWID;
   CREATE TRIGGER jobs_metric_insert AFTER INSERT ON jobs BEGIN
     INSERT INTO metric_totals(name, label, value) VALUES ('jobs', NEW.state, 1)
       ON CONFLICT(name, label) DO UPDATE SET value = value + 1;
   END;
   CREATE TRIGGER jobs_metric_state AFTER UPDATE OF state ON jobs WHEN OLD.state <> NEW.state BEGIN
     UPDATE metric_totals SET value = value - 1 WHERE name = 'jobs' AND label = OLD.state;
     INSERT INTO metric_totals(name, label, value) VALUES ('jobs', NEW.state, 1)
       ON CONFLICT(name, label) DO UPDATE SET value = value + 1;
   END;
   CREATE TRIGGER jobs_metric_delete AFTER DELETE ON jobs BEGIN
     UPDATE metric_totals SET value = value - 1 WHERE name = 'jobs' AND label = OLD.state;
   END;
   INSERT INTO metric_totals(name, label, value) SELECT 'jobs', state, count(*) FROM jobs GROUP BY state;
   CREATE TABLE wait_bounds (le REAL PRIMARY KEY);
   INSERT INTO wait_bounds(le) VALUES (1), (5), (10), (30), (60), (300), (600), (1800), (3600), (14400), (43200), (86400), (259200);
   CREATE TRIGGER jobs_metric_start AFTER UPDATE OF state ON jobs
     WHEN OLD.state = 'PENDING' AND NEW.state = 'RUNNING' AND NEW.started_at IS NOT NULL
   BEGIN
     INSERT INTO metric_totals(name, label, value)
       SELECT 'wait_bucket', CAST(le AS TEXT), 1 FROM wait_bounds WHERE NEW.started_at - NEW.submitted_at <= le
       ON CONFLICT(name, label) DO UPDATE SET value = value + excluded.value;
     INSERT INTO metric_totals(name, label, value) VALUES ('wait_sum', '', NEW.started_at - NEW.submitted_at), ('wait_count', '', 1)
       ON CONFLICT(name, label) DO UPDATE SET value = value + excluded.value;
   END;
   CREATE TRIGGER jobs_metric_finish AFTER UPDATE OF state ON jobs
     WHEN OLD.state = 'RUNNING' AND NEW.finished_at IS NOT NULL AND NEW.started_at IS NOT NULL
   BEGIN
     INSERT INTO metric_totals(name, label, value) VALUES ('user_device_seconds', NEW.owner_name, max(0, NEW.finished_at - NEW.started_at) * NEW.count)
       ON CONFLICT(name, label) DO UPDATE SET value = value + excluded.value;
   END;
   INSERT INTO metric_totals(name, label, value)
     SELECT 'user_device_seconds', owner_name, total(max(0, finished_at - started_at) * count) FROM jobs
      WHERE started_at IS NOT NULL AND finished_at IS NOT NULL GROUP BY owner_name;
   INSERT INTO metric_totals(name, label, value)
     SELECT 'wait_bucket', CAST(le AS TEXT), (SELECT count(*) FROM jobs WHERE started_at IS NOT NULL AND started_at - submitted_at <= le) FROM wait_bounds;
   INSERT INTO metric_totals(name, label, value)
     SELECT 'wait_sum', '', total(started_at - submitted_at) FROM jobs WHERE started_at IS NOT NULL;
   INSERT INTO metric_totals(name, label, value)
     SELECT 'wait_count', '', count(*) FROM jobs WHERE started_at IS NOT NULL;`,
  // Workflows (docs/behaviour.md §23.3, §23.5): which run of a retried job
  // this is, and since when it waits in the queue (released from a hold, or
  // back for a retry); NULL: since its submission.
  `ALTER TABLE jobs ADD COLUMN attempt INTEGER NOT NULL DEFAULT 1;
   ALTER TABLE jobs ADD COLUMN queued_at INTEGER;`,
  // Arrays (docs/behaviour.md §23.2): the array a task belongs to (its first
  // task's id; NULL for other jobs) and the rest of its membership as JSON
  // (index, count, min, max, throttle, parameter values).
  `ALTER TABLE jobs ADD COLUMN array_id INTEGER;
   ALTER TABLE jobs ADD COLUMN array_task TEXT;`,
  // Fairness (docs/behaviour.md §22.1, §22.2, §23.3): a job's admin priority
  // and its owner's latest `xlurm top` (a sequence number, 0: not moved;
  // nice is in the spec), and each user's fair-share usage: raw
  // device-seconds and the decayed value as of `at` (unix seconds).
  `ALTER TABLE jobs ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE jobs ADD COLUMN top INTEGER NOT NULL DEFAULT 0;
   CREATE TABLE usage (
     uid     INTEGER PRIMARY KEY,
     name    TEXT NOT NULL,
     usage   REAL NOT NULL,
     decayed REAL NOT NULL,
     at      REAL NOT NULL
   );`,
  // Accounting (docs/behaviour.md §26.1): how many of a day's started jobs
  // history retention has removed since, so the 95th percentile of the wait
  // knows how many jobs it ranks without counting them (accounting/stats.ts);
  // the per-user index that counted them goes.
  `ALTER TABLE usage_daily ADD COLUMN removed_started INTEGER NOT NULL DEFAULT 0;
   DROP INDEX jobs_user_end;
   CREATE TRIGGER jobs_usage_removed AFTER DELETE ON jobs
     WHEN OLD.finished_at IS NOT NULL AND OLD.started_at IS NOT NULL
   BEGIN
     UPDATE usage_daily SET removed_started = removed_started + 1 WHERE day = OLD.finished_at / 86400 AND uid = OLD.owner_uid;
   END;`,
  // Card slices (docs/behaviour.md §25.4, §26.1): a job's device weight,
  // written when it starts: the sum over its devices of its share of each
  // card's memory as the library reported it then (a slice of 8G of a 16G
  // card: 0.5). NULL for a whole-device job (and every row before this
  // step): its device count. Statistics, the daily rollup and the
  // Prometheus device seconds read it in place of the count, so the
  // triggers and the covering index are made again with it.
  `ALTER TABLE jobs ADD COLUMN device_weight REAL;
   DROP INDEX jobs_stats;
   CREATE INDEX jobs_stats ON jobs(finished_at, owner_uid, state, started_at, submitted_at, count,
     cpus, owner_name, device_weight) WHERE finished_at IS NOT NULL;
   DROP TRIGGER jobs_usage_daily;
   CREATE TRIGGER jobs_usage_daily AFTER UPDATE OF state ON jobs
     WHEN OLD.finished_at IS NULL AND NEW.finished_at IS NOT NULL
   BEGIN
     INSERT INTO usage_daily (day, uid, name, completed, failed, cancelled, timed_out, expired, out_of_memory,
                              started, device_seconds, cpu_seconds, wait_seconds, run_seconds)
     VALUES (NEW.finished_at / 86400, NEW.owner_uid, NEW.owner_name,
             NEW.state = 'COMPLETED', NEW.state = 'FAILED', NEW.state = 'CANCELLED', NEW.state = 'TIMED_OUT',
             NEW.state = 'EXPIRED', NEW.state = 'OUT_OF_MEMORY', NEW.started_at IS NOT NULL,
             ifnull(max(0, NEW.finished_at - NEW.started_at) * ifnull(NEW.device_weight, NEW.count), 0),
             ifnull(max(0, NEW.finished_at - NEW.started_at) * NEW.cpus, 0),
             ifnull(NEW.started_at - NEW.submitted_at, 0), ifnull(max(0, NEW.finished_at - NEW.started_at), 0))
     ON CONFLICT (day, uid) DO UPDATE SET
       name = excluded.name, completed = completed + excluded.completed, failed = failed + excluded.failed,
       cancelled = cancelled + excluded.cancelled, timed_out = timed_out + excluded.timed_out,
       expired = expired + excluded.expired, out_of_memory = out_of_memory + excluded.out_of_memory,
       started = started + excluded.started, device_seconds = device_seconds + excluded.device_seconds,
       cpu_seconds = cpu_seconds + excluded.cpu_seconds, wait_seconds = wait_seconds + excluded.wait_seconds,
       run_seconds = run_seconds + excluded.run_seconds;
   END;
   DROP TRIGGER jobs_metric_finish;
   CREATE TRIGGER jobs_metric_finish AFTER UPDATE OF state ON jobs
     WHEN OLD.state = 'RUNNING' AND NEW.finished_at IS NOT NULL AND NEW.started_at IS NOT NULL
   BEGIN
     INSERT INTO metric_totals(name, label, value)
       VALUES ('user_device_seconds', NEW.owner_name, max(0, NEW.finished_at - NEW.started_at) * ifnull(NEW.device_weight, NEW.count))
       ON CONFLICT(name, label) DO UPDATE SET value = value + excluded.value;
   END;`,
  // Bounded requests (docs/behaviour.md §28.2): an array's environment,
  // script and arguments are kept once, in job_texts (JSON {env, script,
  // command}), and its tasks refer to it by text_id; a task's spec then
  // leaves those keys out (a sweep task keeps its own substituted command).
  // Arrays stored before this step each kept a copy per task: they get
  // their first task's environment and script as the shared text (every
  // task of an array was given the same ones) and lose their copies;
  // their commands stay in their rows. The last task of a text to go
  // takes the text with it. The jobs-per-state total is kept for an
  // array's later tasks by one statement per array (Store.insertArray),
  // not by a trigger run per task: half the cost of inserting 10,000.
  `CREATE TABLE job_texts (
     id   INTEGER PRIMARY KEY,
     text TEXT NOT NULL
   );
   ALTER TABLE jobs ADD COLUMN text_id INTEGER;
   INSERT INTO job_texts (id, text)
     SELECT array_id, json_object('env', json_extract(spec, '$.env'), 'script', json_extract(spec, '$.script'))
       FROM jobs WHERE id IN (SELECT min(id) FROM jobs WHERE array_id IS NOT NULL GROUP BY array_id);
   UPDATE jobs SET text_id = array_id, spec = json_remove(spec, '$.env', '$.script') WHERE array_id IS NOT NULL;
   CREATE INDEX jobs_text ON jobs(text_id) WHERE text_id IS NOT NULL;
   DROP TRIGGER jobs_metric_insert;
   CREATE TRIGGER jobs_metric_insert AFTER INSERT ON jobs WHEN NEW.text_id IS NULL BEGIN
     INSERT INTO metric_totals(name, label, value) VALUES ('jobs', NEW.state, 1)
       ON CONFLICT(name, label) DO UPDATE SET value = value + 1;
   END;
   CREATE TRIGGER jobs_text_delete AFTER DELETE ON jobs
     WHEN OLD.text_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM jobs WHERE text_id = OLD.text_id)
   BEGIN
     DELETE FROM job_texts WHERE id = OLD.text_id;
   END;`,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

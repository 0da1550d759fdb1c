/**
 * A job database that is corrupt, foreign, truncated or from a newer xlurm
 * stops `xlurm daemon` with a clear message, and the file is left exactly as
 * it was: never a silent reset, never a conversion of someone else's file.
 */
import t from 'tap';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { Daemon, startDaemon, tempHome } from '../helpers/daemon';

const digest = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/** The files next to the database (a WAL or shm a refused start must not leave behind). */
const siblings = (db: string) => fs.readdirSync(path.dirname(db)).filter((f) => f.startsWith(path.basename(db))).sort();

/** A home whose xlurm.db is made by `make`; returns the daemon (not started) and the db path. */
function homeWith(t: Tap.Test, make: (db: string) => void): { d: Daemon; db: string } {
  const home = tempHome(t);
  fs.mkdirSync(home, { recursive: true, mode: 0o755 });
  const db = path.join(home, 'xlurm.db');
  make(db);
  return { d: new Daemon(t, home, {}), db };
}

/**
 * `xlurm daemon` refuses to start with `message`, and leaves the file as it
 * was. A WAL-mode file (a real xlurm database) may get SQLite's empty -wal
 * and -shm companions from the read-only check; any other file gets none.
 */
async function refused(t: Tap.Test, d: Daemon, db: string, message: RegExp, walMode = false): Promise<void> {
  const before = digest(db);
  const files = siblings(db);
  const r = await d.run('xlurm', ['daemon', '--backend', 'none'], { timeout: 30000 });
  t.equal(r.code, 1, 'xlurm daemon exits 1');
  t.match(r.stderr, message);
  t.equal(r.stderr.split('\n').filter(Boolean).length, 1, 'one line, no stack trace');
  t.equal(digest(db), before, 'the database file is unchanged');
  if (walMode) {
    const wal = `${db}-wal`;
    t.ok(!fs.existsSync(wal) || fs.statSync(wal).size === 0, 'nothing was written to a WAL');
  } else {
    t.same(siblings(db), files, 'no WAL or shm file was created next to it');
  }
  t.notOk(fs.existsSync(d.socket), 'nothing listens');
}

namespace Tap { export type Test = any }

t.test('a file that is not SQLite', async (t) => {
  const { d, db } = homeWith(t, (db) => fs.writeFileSync(db, Buffer.from('this is not a database at all\n'.repeat(300))));
  await refused(t, d, db, /^xlurm: cannot open job database \/\S+\/xlurm\.db: file is not a database; move it aside to start with an empty queue\n$/);
});

t.test('another program\'s SQLite database', async (t) => {
  for (const version of [0, 3]) {
    const { d, db } = homeWith(t, (db) => {
      const x = new Database(db);
      x.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes (text) VALUES (\'keep me\')');
      x.pragma(`user_version = ${version}`);
      x.close();
    });
    await refused(t, d, db, /^xlurm: job database \/\S+\/xlurm\.db is not an xlurm database; move it aside to start with an empty queue\n$/);
  }
});

t.test('a database from a newer xlurm', async (t) => {
  const { d, db } = homeWith(t, (db) => {
    const x = new Database(db);
    x.exec(`CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL); INSERT INTO meta VALUES ('application', 'xlurm')`);
    x.pragma('user_version = 99');
    x.close();
  });
  await refused(t, d, db, /^xlurm: job database \/\S+\/xlurm\.db has schema version 99, newer than this xlurm \(\d+\); install the newer xlurm\n$/);
});

t.test('a real job database, damaged', async (t) => {
  // Make one with history, through a real daemon.
  const src = await startDaemon(t);
  for (let i = 0; i < 30; i++) {
    const r = await src.request('submit', {
      command: ['echo', 'x'.repeat(200)], cwd: '/', env: { PATH: '/usr/bin:/bin' }, name: `job-${i}-${'n'.repeat(300)}`, count: 0,
    }) as { ok: boolean };
    t.ok(r.ok);
  }
  await src.waitState(30, 'COMPLETED');
  await src.stop();
  const good = fs.readFileSync(path.join(src.home, 'xlurm.db'));
  const pageSize = good.readUInt16BE(16) || 65536;
  t.ok(good.length >= 3 * pageSize, `the database has several pages (${good.length} bytes)`);

  t.test('a page overwritten with garbage', async (t) => {
    const { d, db } = homeWith(t, (db) => {
      const bad = Buffer.from(good);
      for (let i = pageSize + 8; i < 2 * pageSize; i++) bad[i] = (i * 7919) & 0xff;
      fs.writeFileSync(db, bad);
    });
    await refused(t, d, db, /^xlurm: cannot open job database \/\S+\/xlurm\.db: .*(malformed|integrity check failed).*; move it aside to start with an empty queue\n$/, true);
  });

  t.test('truncated in the middle', async (t) => {
    const { d, db } = homeWith(t, (db) => fs.writeFileSync(db, good.subarray(0, Math.floor(good.length / pageSize / 2) * pageSize + 100)));
    await refused(t, d, db, /^xlurm: cannot open job database \/\S+\/xlurm\.db: .*; move it aside to start with an empty queue\n$/, true);
  });

  t.test('the intact copy still starts and keeps its history', async (t) => {
    const { d } = homeWith(t, (db) => fs.writeFileSync(db, good));
    await d.start();
    t.teardown(() => d.stop());
    t.equal((await d.jobs()).length, 30);
  });
});

t.test('xlurm start with a damaged database says where to look', async (t) => {
  const { d, db } = homeWith(t, (db) => fs.writeFileSync(db, 'garbage'.repeat(1000)));
  const r = await d.run('xlurm', ['start', '--backend', 'none']);
  t.equal(r.code, 1);
  t.match(r.stderr, /^xlurm: daemon exited \(exit status: 1\); see \/\S+\/daemon\.log\n$/);
  t.match(fs.readFileSync(path.join(d.home, 'daemon.log'), 'utf8'), /xlurm: cannot open job database \S+: file is not a database; move it aside/);
  t.equal(fs.readFileSync(db, 'utf8'), 'garbage'.repeat(1000));
});

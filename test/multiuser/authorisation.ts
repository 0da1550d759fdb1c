// docs/behaviour.md §8 as root: what one account may see and do with another's jobs
// (details, environment, log, cancel) and what queue summaries reveal.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Daemon } from '../helpers/daemon';
import { MULTIUSER_SKIP, accounts, as, rawRequestAs, rootDaemon, untilExists, workDir, type Account } from '../helpers/multiuser';
import { waitFor } from '../helpers/wait';

const DENIED = 'xlurm: permission denied: job belongs to daemon (UID 1)\n';
// The core's keys and the later issues' (docs/behaviour.md §20.6), never a command, environment, script or directory.
const SUMMARY_KEYS = ['array', 'count', 'cpus', 'devices', 'finished_at', 'id', 'kind', 'mem', 'name', 'nice', 'owner', 'priority', 'reason', 'share', 'started_at', 'state', 'submitted_at'];

t.test('another user\'s jobs', { skip: MULTIUSER_SKIP }, async (t) => {
  const { nobody, daemon } = accounts();
  const d = await rootDaemon(t);
  // Secrets in every private part of a job: script, arguments, command, environment, directory.
  const base = workDir(t);
  const cwd = path.join(base, 'cwd-secret-d1r');
  fs.mkdirSync(cwd, { mode: 0o777 });
  fs.chmodSync(cwd, 0o777);
  const gate = path.join(base, 'gate');
  const script = path.join(cwd, 'job.sh');
  fs.writeFileSync(script, `#!/bin/bash\necho "script-secret-5cr $1"\n${untilExists(gate)}\n`, { mode: 0o644 });
  const secrets = ['cwd-secret-d1r', 'script-secret-5cr', 'arg-secret-4rg', 'env-secret-3nv', 'cmd-secret-c0m'];
  const env = { XLURM_SECRET: 'env-secret-3nv' };

  let r = await d.run('xbatch', ['-g', '0', '-n', 'public-name', script, 'arg-secret-4rg'], as(daemon, { cwd, env }));
  t.equal(r.code, 0, r.stderr);
  const scripted = Number(r.stdout.trim());
  const wrapped = await d.batch(`echo cmd-secret-c0m; ${untilExists(gate)}`, ['-g', '0', '-n', 'other-name'], as(daemon, { cwd, env }));
  await d.waitState(scripted, 'RUNNING');
  await d.waitState(wrapped, 'RUNNING');
  const mine = await d.batch('true', ['-g', '0'], as(nobody, { cwd: base }));
  await d.waitState(mine, 'COMPLETED');

  const noSecrets = (t: any, text: string, what: string) => {
    for (const s of secrets) t.notOk(text.includes(s), `${what} does not contain ${s}`);
  };

  t.test('queue summaries seen by nobody carry no command, environment, script or directory', async (t) => {
    for (const args of [['--json'], ['--all', '--json']]) {
      const q = await d.run('xqueue', args, as(nobody, { cwd: base }));
      t.equal(q.code, 0, q.stderr);
      noSecrets(t, q.stdout, `xqueue ${args.join(' ')}`);
      const rows = JSON.parse(q.stdout) as any[];
      const theirs = rows.filter((j) => j.owner.uid === daemon.uid);
      t.same(theirs.map((j) => j.id).sort(), [scripted, wrapped].sort(), `daemon's jobs are listed (${args.join(' ')})`);
      for (const row of theirs) t.same(Object.keys(row).sort(), SUMMARY_KEYS, 'only summary fields');
    }
    const table = await d.run('xqueue', ['--all'], as(nobody, { cwd: base }));
    t.equal(table.code, 0);
    noSecrets(t, table.stdout, 'the xqueue table');
    t.match(table.stdout, /public-name/, 'names are public');
    const raw = await rawRequestAs(nobody, d.socket, JSON.stringify({ v: 1, op: 'queue', args: { all: true } }) + '\n');
    t.equal(raw.ok, true);
    noSecrets(t, JSON.stringify(raw), 'the raw queue reply');
  });

  t.test('nobody cannot read daemon\'s job, its environment or log, or cancel it', async (t) => {
    for (const args of [[String(scripted)], [String(scripted), '--json'], [String(scripted), '--log'], ['--cancel', String(scripted)]]) {
      const q = await d.run('xqueue', args, as(nobody, { cwd: base }));
      t.equal(q.code, 1, `xqueue ${args.join(' ')}`);
      t.equal(q.stderr, DENIED);
      t.equal(q.stdout, '');
    }
    const c = await d.run('xcancel', [String(wrapped)], as(nobody, { cwd: base }));
    t.equal(c.code, 1);
    t.equal(c.stderr, DENIED);
    for (const op of ['get', 'log', 'follow', 'cancel']) {
      const reply = await rawRequestAs(nobody, d.socket, JSON.stringify({ v: 1, op, args: { id: scripted } }) + '\n');
      t.same(reply, { v: 1, ok: false, error: { code: 'PERMISSION_DENIED', message: 'permission denied: job belongs to daemon (UID 1)' } }, `raw ${op}`);
    }
    const unknown = await d.run('xqueue', ['999999'], as(nobody, { cwd: base }));
    t.equal(unknown.stderr, 'xlurm: job not found\n', 'lookup before authorisation');
    t.equal((await d.job(scripted)).state, 'RUNNING', 'still running');
    t.equal((await d.job(wrapped)).state, 'RUNNING', 'still running');
  });

  t.test('the owner and root can', async (t) => {
    for (const who of [daemon, { uid: 0, gid: 0, name: 'root' }]) {
      const detail = await d.run('xqueue', [String(scripted)], as(who, { cwd: base }));
      t.equal(detail.code, 0, detail.stderr);
      t.match(detail.stdout, /^Directory: .*cwd-secret-d1r$/m);
      const json = JSON.parse((await d.run('xqueue', [String(scripted), '--json'], as(who, { cwd: base }))).stdout);
      t.equal(json.spec.env.XLURM_SECRET, 'env-secret-3nv', `${who.name} sees the environment`);
      t.match(json.spec.script, /script-secret-5cr/);
      await d.waitState(wrapped, 'RUNNING');
      const log = await waitLog(d, wrapped, who, base);
      t.match(log, /cmd-secret-c0m/, `${who.name} reads the log`);
    }
    const c = await d.run('xcancel', [String(wrapped)]);
    t.equal(c.stdout, `Cancellation requested for job ${wrapped}\n`, 'root cancels');
    await d.waitState(wrapped, 'CANCELLED');
    const own = await d.run('xcancel', [String(scripted)], as(daemon, { cwd: base }));
    t.equal(own.code, 0, own.stderr);
    await d.waitState(scripted, 'CANCELLED');
  });
});

/** The log of job `id` as `who` sees it, once it has some bytes. */
function waitLog(d: Daemon, id: number, who: Account, cwd: string): Promise<string> {
  return waitFor(async () => {
    const r = await d.run('xqueue', [String(id), '--log'], as(who, { cwd }));
    return r.stdout.length ? r.stdout : undefined;
  }, { what: `log of job ${id}` });
}

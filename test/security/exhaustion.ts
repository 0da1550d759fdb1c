// Extensions 28.2, class "resource exhaustion by one user" (request bounds): one user's requests
// cannot fill the store, the daemon's memory or other users' time. The attack that was
// reproduced (a 1 MB environment on an array of 500, four times over: 4 GB of copies, then no
// restart could load the queue) now costs about one copy per array and every restart loads; an
// array over max_array_tasks, a request over max_request_bytes and pending jobs over the
// default pending_jobs are refused to that user with their words while another user is served.
// (Connection slots are in connections.ts.)
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runProcess, type Daemon } from '../helpers/daemon';
import { MULTIUSER_SKIP, accounts, as, rootDaemon, workDir, type Account } from '../helpers/multiuser';
import { waitFor } from '../helpers/wait';
import type { Tap } from '../helpers/tap';

interface Reply { ok: boolean; result?: { id: number }; error?: { code: string; message: string } }

/**
 * A submission sent by a process of `who`, built there (a 1 MB frame does not fit in an
 * argument): `padBytes` of environment, `extra` fields (array, hold, ...), `scriptBytes` of script.
 */
async function submitAs(d: Daemon, who: Account, padBytes: number, extra: Record<string, unknown>, scriptBytes = 0): Promise<Reply> {
  const code = `const [sock, pad, extra, scr] = process.argv.slice(1);
const args = { command: ['true'], cwd: '/', env: { PATH: '/usr/bin:/bin', PAD: 'x'.repeat(Number(pad)) }, name: 'flood', count: 0,
  kind: null, time_limit: null, script: Number(scr) ? '#' + 'y'.repeat(Number(scr) - 1) : null, ...JSON.parse(extra) };
const s = require('net').connect(sock); let b = '';
s.on('connect', () => s.write(JSON.stringify({ v: 1, op: 'submit', args }) + '\\n'));
s.on('data', (c) => { b += c; if (b.includes('\\n')) s.destroy(); });
s.on('close', () => process.stdout.write(b.split('\\n')[0]));
s.on('error', (e) => process.stdout.write(JSON.stringify({ ok: false, error: { code: e.code, message: e.message } })));`;
  const r = await runProcess(process.execPath, ['-e', code, d.socket, String(padBytes), JSON.stringify(extra), String(scriptBytes)],
    { uid: who.uid, gid: who.gid, cwd: '/', env: { PATH: '/usr/bin:/bin' } });
  return JSON.parse(r.stdout || '{"ok":false,"error":{"code":"none","message":"no reply"}}') as Reply;
}

const storeBytes = (d: Daemon) => ['xlurm.db', 'xlurm.db-wal'].reduce((n, f) => {
  const p = path.join(d.home, f);
  return n + (fs.existsSync(p) ? fs.statSync(p).size : 0);
}, 0);

const MB = 1024 * 1024;

/** Cancel whole arrays as root (`xcancel A`), so the teardown has no task left to cancel one by one. */
async function cancelArrays(t: Tap, d: Daemon, ids: number[]): Promise<void> {
  for (const id of ids) {
    const r = await d.run('xcancel', [String(id)]);
    t.equal(r.code, 0, r.stderr);
  }
  await waitFor(async () => ((await d.jobs(false)).length === 0 ? true : undefined), { timeout: 60000, what: 'the arrays cancelled' });
}

t.test('the reproduced flood: four arrays of 500 tasks with a 1 MB environment cost about four copies, and every restart loads them', { skip: MULTIUSER_SKIP }, async (t) => {
  const { nobody, daemon } = accounts();
  const d = await rootDaemon(t);
  const before = storeBytes(d);
  const arrays: number[] = [];
  for (let k = 0; k < 4; k++) {
    const r = await submitAs(d, nobody, MB, { array: '0-499', hold: true });
    t.equal(r.ok, true, JSON.stringify(r.error));
    arrays.push(r.result!.id);
  }
  await d.stop();
  const grown = storeBytes(d) - before;
  t.ok(grown < 32 * MB, `2,000 tasks with a 1 MB environment grew the store by ${(grown / MB).toFixed(1)} MB (a copy per task: 2,000 MB)`);
  await d.start();
  t.equal((await d.jobs(false)).length, 2000, 'the restart loads the whole queue');
  // Another user is served at once and their job runs.
  const mine = await d.run('xbatch', ['-g', '0', '--wrap', 'echo served'], as(daemon, { cwd: workDir(t) }));
  t.equal(mine.code, 0, mine.stderr);
  await d.waitState(Number(mine.stdout.trim()), 'COMPLETED', 30000);
  await cancelArrays(t, d, arrays);
});

t.test('one user\'s requests over the bounds are refused to them, with the words; nothing stored; another user is served', { skip: MULTIUSER_SKIP }, async (t) => {
  const { nobody, daemon } = accounts();
  const d = await rootDaemon(t);
  const many = await submitAs(d, nobody, 0, { array: '0-10000' });
  t.same(many.error, { code: 'INVALID_REQUEST', message: 'an array may have at most 10000 tasks (limit max_array_tasks)' });
  const sweep = await submitAs(d, nobody, 0, { params: [{ name: 'a', values: Array.from({ length: 200 }, String) }, { name: 'b', values: Array.from({ length: 51 }, String) }] });
  t.same(sweep.error, { code: 'INVALID_REQUEST', message: 'an array may have at most 10000 tasks (limit max_array_tasks)' }, 'a sweep');
  const big = await submitAs(d, nobody, 2 * MB, {}, Math.round(1.2 * MB));
  t.same(big.error, { code: 'INVALID_REQUEST', message: 'request too large: 3.2M (limit max_request_bytes 3M)' }, 'environment and script together');
  t.same(await d.jobs(), [], 'nothing stored');
  // pending_jobs = 10000 by default: a whole array up to it, then not one job more for that user.
  const full = await submitAs(d, nobody, 0, { array: '0-9999', hold: true });
  t.equal(full.ok, true, JSON.stringify(full.error));
  const over = await submitAs(d, nobody, 0, { hold: true });
  t.same(over.error, { code: 'USER_LIMIT', message: 'nobody already has 10000 pending jobs (limit 10000)' });
  const other = await submitAs(d, daemon, 0, { hold: true });
  t.equal(other.ok, true, 'another user is not held by it');
  t.equal((await d.jobs(false)).length, 10001);
  await cancelArrays(t, d, [full.result!.id, other.result!.id]);
});

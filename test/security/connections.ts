// Extensions 28.3, class "resource exhaustion by one user" (connections): one user holding many
// idle `follow` streams is held to their share of the daemon's connection slots. Beyond it that
// user's requests answer BUSY, another user's and root's are still served (root has the last
// slots to itself), `xlurm status` as root says who holds them, and a client that goes away
// frees its slots at once, even streams that never wrote a byte.
import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runProcess, type Daemon } from '../helpers/daemon';
import { MULTIUSER_SKIP, accounts, as, rootDaemon, workDir, type Account } from '../helpers/multiuser';
import { waitFor } from '../helpers/wait';
import type { Tap } from '../helpers/tap';

/** One raw `status` request sent by `who` (a process of that uid): the reply frame. */
async function statusAs(d: Daemon, who: Account): Promise<{ ok: boolean; error?: { code: string; message: string } }> {
  const code = `const s = require('net').connect(process.argv[1]); let b = '';
s.on('connect', () => s.write(JSON.stringify({ v: 1, op: 'status', args: {} }) + '\\n'));
let err; s.on('data', (c) => { b += c; }); s.on('error', (e) => { err = e; });
s.on('close', () => process.stdout.write(b ? b.split('\\n')[0] : JSON.stringify({ ok: false, error: { code: err ? err.code : 'closed', message: String(err) } })));`;
  const r = await runProcess(process.execPath, ['-e', code, d.socket], { uid: who.uid, gid: who.gid, cwd: '/', env: { PATH: '/usr/bin:/bin' } });
  return JSON.parse(r.stdout || '{"ok":false,"error":{"code":"none","message":"no reply"}}');
}

/**
 * A process of `who` holding `n` follow streams of job `id` (held: the stream never writes after
 * its first frame); resolves once every stream got its first frame.
 */
async function holdStreams(t: Tap, d: Daemon, who: Account, id: number, n: number): Promise<ChildProcess> {
  const code = `const net = require('net'); const n = Number(process.argv[2]); let ready = 0;
for (let i = 0; i < n; i++) {
  const s = net.connect(process.argv[1]); let first = true;
  s.on('connect', () => s.write(JSON.stringify({ v: 1, op: 'follow', args: { id: Number(process.argv[3]), offset: 0 } }) + '\\n'));
  s.on('data', (c) => { if (first) { first = false; if (!String(c).includes('"ok":true')) { console.log('refused ' + c); process.exit(1); } if (++ready === n) console.log('ready'); } });
  s.on('error', () => undefined);
}
setInterval(() => undefined, 1 << 30);`;
  const child = spawn(process.execPath, ['-e', code, d.socket, String(n), String(id)], { uid: who.uid, gid: who.gid, cwd: '/', stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(() => { child.kill('SIGKILL'); });
  let out = '';
  child.stdout!.on('data', (b: Buffer) => { out += b.toString(); });
  await waitFor(() => out.includes('ready') || out.includes('refused') || child.exitCode !== null, { timeout: 20000, what: `${n} follow streams of ${who.name}` });
  if (!out.includes('ready')) throw new Error(`the streams were not all opened: ${out}`);
  return child;
}

function configFile(t: Tap, text: string): string {
  const dir = fs.mkdtempSync('/tmp/xl-conn-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'xlurm.toml');
  fs.writeFileSync(file, text);
  return file;
}

/** A held job of `who` (it stays PENDING: its follow streams are idle). */
async function heldJob(t: Tap, d: Daemon, who: Account): Promise<number> {
  const r = await d.run('xbatch', ['-g', '0', '--hold', '--wrap', 'true'], as(who, { cwd: workDir(t) }));
  t.equal(r.code, 0, r.stderr);
  return Number(r.stdout.trim());
}

t.test('one user\'s streams up to their share: that user gets BUSY, another user and root are served; slots freed when the client goes', { skip: MULTIUSER_SKIP }, async (t) => {
  const { nobody, daemon } = accounts();
  const d = await rootDaemon(t, { args: ['--config', configFile(t, '[daemon]\nmax_connections_per_user = 4\n')] });
  const id = await heldJob(t, d, nobody);
  const holder = await holdStreams(t, d, nobody, id, 4);

  const refused = await statusAs(d, nobody);
  t.equal(refused.ok, false);
  t.equal(refused.error?.code, 'BUSY', 'the user beyond their share: BUSY');
  t.equal(refused.error?.message, 'you have 4 connections open to the scheduler (limit max_connections_per_user 4); close some and retry');
  t.equal((await statusAs(d, daemon)).ok, true, 'another user is served');
  const st = await d.request('status', {}) as { ok: boolean; result: { connections?: Array<{ user: string; count: number }> } };
  t.equal(st.ok, true, 'root is served');
  t.same(st.result.connections, [{ user: 'nobody', count: 4 }, { user: 'root', count: 1 }], 'root sees who holds the slots, largest first');
  const text = await d.run('xlurm', ['status']);
  t.match(text.stdout, /^connections: nobody 4, root 1$/m, 'xlurm status as root prints the line');
  const asUser = await d.run('xlurm', ['status', '--json'], as(daemon));
  t.notOk('connections' in JSON.parse(asUser.stdout), 'another user is not shown who holds connections');

  // The client goes away (killed: it never closes its streams itself): its slots are free at once.
  holder.kill('SIGKILL');
  const back = await waitFor(async () => { const r = await statusAs(d, nobody); return r.ok ? r : undefined; }, { timeout: 5000, what: 'nobody served again' });
  t.equal(back.ok, true, 'the user is served again once their client went away');
  const after = await d.request('status', {}) as { result: { connections?: Array<{ user: string; count: number }> } };
  t.same(after.result.connections, [{ user: 'root', count: 1 }], 'the idle streams\' slots were freed');
});

t.test('the last slots are root\'s: users that fill the rest get BUSY, root is still served', { skip: MULTIUSER_SKIP }, async (t) => {
  const { nobody, daemon } = accounts();
  const d = await rootDaemon(t, { args: ['--config', configFile(t, '[daemon]\nmax_connections = 16\nmax_connections_per_user = 8\n')] });
  const id = await heldJob(t, d, nobody);
  await holdStreams(t, d, nobody, id, 8);
  const other = await statusAs(d, daemon);
  t.equal(other.error?.code, 'BUSY', 'every slot but root\'s is taken');
  t.equal(other.error?.message, 'the scheduler is at its connection limit; retry shortly');
  const st = await d.request('status', {}) as { ok: boolean; result: { connections?: Array<{ user: string; count: number }> } };
  t.equal(st.ok, true, 'root still gets a slot');
  t.same(st.result.connections, [{ user: 'nobody', count: 8 }, { user: 'root', count: 1 }]);
  const cancel = await d.run('xcancel', [String(id)]);
  t.equal(cancel.code, 0, `root's xcancel is served: ${cancel.stderr}`);
});

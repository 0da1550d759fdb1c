/**
 * The user guide's array, Slurm-script and webhook recipes (docs/user-guide.md), each run as
 * written: the lines between the recipe's marker and the end of its code block, through bash,
 * with the real CLIs on PATH.
 */
import t from 'tap';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { runProcess, startDaemon, type Daemon } from '../helpers/daemon';
import { CLI_BIN, ROOT } from '../helpers/env';
import { waitFor } from '../helpers/wait';
import type { Scope } from '../helpers/tap';

function tempDir(t: Scope): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-recipe-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function recipe(name: string): string {
  const guide = fs.readFileSync(path.join(ROOT, 'docs', 'user-guide.md'), 'utf8');
  const m = new RegExp(`<!-- recipe: ${name} [^>]*-->\\n\`\`\`sh\\n([\\s\\S]*?)\`\`\``).exec(guide);
  if (!m) throw new Error(`recipe ${name} is not in the user guide`);
  return m[1]!;
}

function runRecipe(d: Daemon, text: string, cwd: string, env: Record<string, string> = {}) {
  return runProcess('bash', ['-c', `set -e\n${text}`], { cwd, env: { ...d.env, ...env, PATH: `${CLI_BIN}:${process.env.PATH}` } });
}

t.test('the sweep recipe: six combinations, at most 4 at once, --dry-run first', async (t) => {
  const d = await startDaemon(t, { maxRunning: 8 });
  const dir = tempDir(t);
  const r = await runRecipe(d, recipe('sweep'), dir);
  t.equal(r.code, 0, r.stderr);
  const lines = r.stdout.split('\n');
  t.equal(lines[0], "0  sweep[0]  lr=0.1 bs=32  bash -c 'echo \"lr=0.1 bs=32\" > result-0.1-32.txt'");
  t.equal(lines[6], 'would submit 6 tasks, at most 4 running at once; nothing submitted');
  const results = lines.slice(7).filter(Boolean).sort();
  t.same(results, ['lr=0.001 bs=32', 'lr=0.001 bs=64', 'lr=0.01 bs=32', 'lr=0.01 bs=64', 'lr=0.1 bs=32', 'lr=0.1 bs=64']);
  const jobs = (await d.jobs()).filter((j) => j.array !== null);
  t.equal(jobs.length, 6, 'the dry run submitted nothing');
  t.same(jobs.map((j) => j.name), [0, 1, 2, 3, 4, 5].map((i) => `sweep[${i}]`));
});

t.test('the Slurm array script runs unchanged', async (t) => {
  const d = await startDaemon(t, { maxRunning: 8 });
  const dir = tempDir(t);
  const r = await runRecipe(d, recipe('slurm-array'), dir);
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stdout, 'shard 0 of 4\nshard 1 of 4\nshard 2 of 4\nshard 3 of 4\n');
});

t.test('the webhook recipe posts the name and state', async (t) => {
  const d = await startDaemon(t, { maxRunning: 8 });
  const dir = tempDir(t);
  const posts: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (b: Buffer) => { body += b.toString(); });
    req.on('end', () => { posts.push(`${req.method} ${body}`); res.end('ok'); });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as { port: number }).port;
  const r = await runRecipe(d, recipe('webhook'), dir, { WEBHOOK: `http://127.0.0.1:${port}/hook` });
  t.equal(r.code, 0, r.stderr);
  const got = await waitFor(() => posts[0], { timeout: 20000 });
  t.equal(got, 'POST nightly COMPLETED');
  const id = (await d.jobs()).find((j) => j.name === 'nightly')!.id as number;
  const log = await waitFor(async () => {
    const l = (await d.run('xqueue', [String(id), '--log'])).stdout;
    return l.endsWith('ok') ? l : undefined;
  });
  t.equal(log, 'training done\n[xlurm] notify:\nok', 'curl -fsS prints the reply after the line');
});

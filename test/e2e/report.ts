// `xlurm report --html` end to end (docs/behaviour.md §26.4): the real daemon's data drawn into
// one self-contained file, rendered in headless Chromium and the screenshot checked, and the
// file checked to load nothing from the network.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startDaemon } from '../helpers/daemon';
import { fakeLibrary } from '../helpers/fixtures';
import { CHROMIUM_SKIP, networkUrls, screenshot } from '../helpers/chromium';
import { peerSkip } from '../helpers/tap';
import { countColour, decodePng, distinctColours } from '../helpers/png';
import { ROOT } from '../helpers/env';

const me = os.userInfo().username;
const gpus = (n: number) => Array.from({ length: n }, (_, i) => `device ${i} GPU-7e57c0de-0000-4000-8000-00000000000${i} "Fake H100 80GB"`);

/** What a self-contained page must not contain: anything that would fetch from elsewhere. */
export function externalReferences(html: string): string[] {
  const found: string[] = [];
  for (const re of [/<script\b/gi, /\s(?:src|href|xlink:href|action|poster|srcset)\s*=\s*["']?(?!#|data:)/gi, /@import/gi, /url\(\s*["']?(?!#|data:)/gi, /https?:\/\//gi, /<(?:link|iframe|object|embed|img|video|audio|source)\b/gi]) {
    for (const m of html.matchAll(re)) found.push(html.slice(Math.max(0, m.index! - 20), m.index! + 60));
  }
  return found;
}

const render = () => require(path.join(ROOT, 'packages', 'cli', 'dist', 'report', 'render.js')) as typeof import('../../packages/cli/src/report/render');
const statsOf = () => require(path.join(ROOT, 'packages', 'cli', 'dist', 'report', 'stats.js')) as typeof import('../../packages/cli/src/report/stats');

t.test('a report of the real daemon: the jobs, every section, self-contained, and rendered by Chromium', async (t) => {
  const fake = fakeLibrary(t, 'nvidia', gpus(2));
  const d = await startDaemon(t, { backend: 'nvidia', env: fake.env });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-report-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));

  const one = await d.batch('sleep 1', ['-g', '1', '-n', 'one-device']);
  const two = await d.batch('sleep 1', ['-g', '2', '-n', 'two-devices']);
  const cpu = await d.batch('true', ['-g', '0', '-n', 'cpu-only']);
  const bad = await d.batch('exit 3', ['-g', '1', '-n', 'fails']);
  for (const id of [one, two, cpu]) await d.waitState(id, 'COMPLETED');
  await d.waitState(bad, 'FAILED');

  const file = path.join(dir, 'report.html');
  const r = await d.run('xlurm', ['report', '--days', '2', '--html', file]);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, new RegExp(`^Report written to ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(4 jobs, \\d+ KiB\\)\\n$`));
  const html = fs.readFileSync(file, 'utf8');
  t.match(html, /^<!DOCTYPE html>/);
  for (const h of ['Device timeline', 'Queue length', 'Wait to start by size class', 'Utilisation per day', 'Usage by user']) t.ok(html.includes(`<h2>${h}</h2>`), `section ${h}`);
  t.ok(html.includes('every user (administrator view)'), 'root sees the host');
  t.match(html, />nv:0</);
  t.match(html, />nv:1</);
  t.match(html, new RegExp(`${me}: jobs? `), 'the timeline names the user holding a device');
  t.match(html, /CPU only: 1 jobs/);
  t.match(html, /1 device: 2 jobs/);
  t.match(html, /2–3 devices: 1 jobs/);
  // The stats row: 3 completed, 1 failed; success 3 of the 4 that started.
  t.match(html, new RegExp(`${me}</td><td class="n">3</td><td class="n">1</td><td class="n">0</td>`));
  t.match(html, /75 %/);
  t.same(externalReferences(html), [], 'no script, no external reference of any kind');

  const usage = await d.run('xlurm', ['report']);
  t.equal(usage.code, 2);
  t.match(usage.stderr, /the following required arguments were not provided:\n {2}--html <FILE>/);
  const zero = await d.run('xlurm', ['report', '--days', '0', '--html', file]);
  t.equal(zero.code, 2);
  const unwritable = await d.run('xlurm', ['report', '--html', path.join(dir, 'missing', 'r.html')]);
  t.equal(unwritable.code, 1);
  t.match(unwritable.stderr, /^xlurm: cannot write .*missing\/r\.html: No such file or directory \(os error 2\)\n$/);

  t.test('Chromium renders it: not blank, the user\'s colour, nothing fetched', { skip: peerSkip(CHROMIUM_SKIP) }, async (t) => {
    const shot = await screenshot(file, 1200, 1400);
    const img = decodePng(shot.png);
    t.equal(img.width, 1200);
    t.ok(distinctColours(img) > 50, `many colours drawn (${distinctColours(img)})`);
    t.ok(countColour(img, render().PALETTE[0]!) > 100, 'the user\'s colour is on the page');
    t.same(networkUrls(shot.netlog), [], 'no request beyond the browser\'s own');
  });
});

t.test('a month of four users on eight devices: the plots in Chromium, the size bound', async (t) => {
  const data = synthetic(30, 8, ['alice', 'bob', 'carol', 'dave']);
  const html = await render().renderReport(data, statsOf().statsFromReport(data), { viewer: 'root', hostname: 'gpu-test' });
  t.ok(Buffer.byteLength(html) < 2 * 1024 * 1024, `under 2 MB (${Math.round(Buffer.byteLength(html) / 1024)} KiB)`);
  t.same(externalReferences(html), []);
  for (const u of ['alice', 'bob', 'carol', 'dave']) t.ok(html.includes(`${u}: jobs`), `${u} on the timeline`);
  t.match(html, /<path class="pending" d="M/, 'the queue length is a path');
  t.match(html, /<path class="sampled" d="M/, 'the sampled utilisation is drawn');

  t.test('in Chromium', { skip: peerSkip(CHROMIUM_SKIP) }, async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-report-'));
    t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'month.html');
    fs.writeFileSync(file, html);
    if (process.env.XLURM_TEST_KEEP_SHOT) fs.copyFileSync(file, process.env.XLURM_TEST_KEEP_SHOT.replace(/\.png$/, '.html'));
    const shot = await screenshot(file, 1200, 1500);
    if (process.env.XLURM_TEST_KEEP_SHOT) fs.writeFileSync(process.env.XLURM_TEST_KEEP_SHOT, shot.png);
    const img = decodePng(shot.png);
    const palette = render().PALETTE;
    for (let i = 0; i < 4; i++) {
      // The legend's swatch is 144 pixels: far more means the plots carry the colour.
      t.ok(countColour(img, palette[i]!) > 2000, `user ${i}'s colour fills part of the plots (${countColour(img, palette[i]!)} pixels)`);
    }
    t.same(networkUrls(shot.netlog), []);
  });

  t.test('the network check sees a page that does fetch (so its silence means something)', { skip: peerSkip(CHROMIUM_SKIP) }, async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-report-'));
    t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'fetches.html');
    const page = '<!DOCTYPE html><html><body><img src="http://192.0.2.1/x.png"></body></html>';
    fs.writeFileSync(file, page);
    t.notSame(externalReferences(page), []);
    const shot = await screenshot(file, 400, 300);
    t.same(networkUrls(shot.netlog), ['http://192.0.2.1/x.png']);
  });
});

/** A busy month: jobs of 0-8 devices arriving at random, placed on the devices that free first. */
function synthetic(days: number, nDev: number, users: string[]) {
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  const until = 1764590400;
  const since = until - days * 86400;
  const devices = Array.from({ length: nDev }, (_, i) => ({ kind: 'nvidia' as const, id: i, name: 'Fake H100', visible: `GPU-${i}`, npu: null, chip: null }));
  const free = new Array<number>(nDev).fill(since);
  const jobs = [];
  for (let t = since, id = 1; t < until; id++) {
    t += Math.floor(rnd() * 1500) + 60;
    const count = [0, 1, 1, 1, 2, 2, 4, 8][Math.floor(rnd() * 8)]!;
    const order = [...free.keys()].sort((a, b) => free[a]! - free[b]!).slice(0, count);
    const start = Math.max(t, ...order.map((x) => free[x]!)) + 1;
    const end = start + Math.floor(Math.exp(rnd() * 8)) + 60;
    for (const x of order) free[x] = end;
    const user = users[Math.floor(rnd() * users.length)]!;
    const started = start <= until ? start : null;
    const finished = end <= until ? end : null;
    jobs.push({
      id, user, uid: 1000 + users.indexOf(user), name: `job-${id}`, count,
      state: (finished ? 'COMPLETED' : started ? 'RUNNING' : 'PENDING') as 'COMPLETED' | 'RUNNING' | 'PENDING',
      devices: started ? order : [], submitted_at: t, started_at: started, finished_at: finished,
    });
  }
  const samples = [];
  for (let day = Math.floor(since / 86400) * 86400; day < until; day += 86400) {
    for (let i = 0; i < nDev; i++) samples.push({ day, device: i, samples: 2880, utilization: 0.3 + rnd() * 0.5, memory_used: 1e10 });
  }
  return { since, until, host: true, devices, jobs, samples };
}

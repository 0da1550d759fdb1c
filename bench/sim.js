#!/usr/bin/env node
// @ts-check
'use strict';
/**
 * The scheduling simulator (docs/behaviour.md §21.8): a workload replayed
 * through the daemon's own scheduling pass (packages/daemon/dist/scheduler/
 * schedule.js) in virtual time, without processes, once per policy.
 *
 *   node bench/sim.js [--trace FILE.csv] [--jobs N] [--load F] [--seed S]
 *                     [--devices N] [--policies greedy,reserve:8,reserve:2] [--csv-out FILE]
 *
 * A trace is CSV with the header `submit_s,devices,run_s,time_limit_s,user`
 * (an empty time limit: none). Without one, a generator shaped like
 * published GPU-cluster traces (Philly, Helios, PAI: most jobs ask for one
 * device, a tail for a whole 8-device host; run times heavy-tailed) makes N
 * jobs with Poisson arrivals at the offered load F (device-seconds asked /
 * device-seconds available over the arrival span), seeded.
 *
 * The loop: events are arrivals and completions; after each batch of events
 * at one instant the pass runs with the state the daemon would give it (free
 * devices, each running job's devices held until start + time limit, the
 * virtual time as `now`) and its decisions start at that instant. A job runs
 * min(run, time limit) seconds (the limit kills it). Devices come back at the
 * completion itself (the daemon's re-probe of a released device is not
 * modelled: `settling` counts as free in `reserve` anyway).
 */
const fs = require('node:fs');
const path = require('node:path');

const DAEMON_DIST = path.join(__dirname, '..', 'packages', 'daemon', 'dist');

/** @typedef {{ id: number, submit: number, count: number, run: number, limit: number | null, user: string }} SimJob */
/** @typedef {{ name: string, mode: 'greedy' | 'reserve', reserveMinDevices?: number }} Policy */
/**
 * @typedef {{ policy: string, jobs: number, waits: Map<number, number>, starts: Map<number, number>, order: number[],
 *   byClass: Map<number, { n: number, mean: number, p95: number, max: number }>, utilisation: number, makespan: number,
 *   wallMs: number, passes: number }} SimResult
 */

/** mulberry32: a small seeded PRNG (reproducible workloads). @param {number} seed */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The generator's workload: sizes 1/2/4/8 devices at 70/15/10/5 %; run
 * times log-normal (median 10 min, σ 1.6, so a mean of ~36 min and a tail of
 * days), at least 10 s and at most 3 days; time limits = run × a factor
 * uniform in [1, 3], rounded up to the minute (what users ask for is
 * generous, as in the published traces); Poisson arrivals whose mean rate
 * gives the offered load `load` on `devices` devices; 20 users.
 * @param {{ jobs: number, load: number, seed: number, devices?: number }} o @returns {SimJob[]}
 */
function generate({ jobs, load, seed, devices = 8 }) {
  const r = rng(seed);
  const normal = () => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
  /** @type {SimJob[]} */
  const out = [];
  let work = 0;
  for (let i = 0; i < jobs; i++) {
    const u = r();
    const count = Math.min(devices, u < 0.70 ? 1 : u < 0.85 ? 2 : u < 0.95 ? 4 : 8);
    const run = Math.round(Math.min(3 * 86400, Math.max(10, 600 * Math.exp(1.6 * normal()))));
    const limit = Math.ceil((run * (1 + 2 * r())) / 60) * 60;
    out.push({ id: i + 1, submit: 0, count, run, limit, user: `u${Math.floor(r() * 20)}` });
    work += count * run;
  }
  // Mean inter-arrival time so that the work asked over the arrival span is `load` of the host's.
  const gap = work / (devices * load) / jobs;
  let t = 0;
  for (const j of out) {
    j.submit = Math.round(t);
    t += -Math.log(1 - r()) * gap;
  }
  return out;
}

/**
 * Two users (docs/behaviour.md §22.2): `flood` submits `flood` one-device jobs of
 * `run` seconds at t=0; `light` submits `few` such jobs, one every `every`
 * seconds from t=`every`. On `devices` devices the flood keeps the host busy
 * for flood × run / devices seconds.
 * @param {{ flood?: number, few?: number, run?: number, every?: number }} [o] @returns {SimJob[]}
 */
function twoUsers({ flood = 400, few = 10, run = 600, every = 1750 } = {}) {
  /** @type {SimJob[]} */
  const out = [];
  for (let i = 0; i < flood; i++) out.push({ id: 0, submit: 0, count: 1, run, limit: null, user: 'flood' });
  for (let i = 1; i <= few; i++) out.push({ id: 0, submit: i * every, count: 1, run, limit: null, user: 'light' });
  out.sort((a, b) => a.submit - b.submit);
  out.forEach((j, i) => { j.id = i + 1; });
  return out;
}

/** Mean wait per user of a replay. @param {SimJob[]} jobs @param {SimResult} r @returns {Map<string, number>} */
function meanWaitByUser(jobs, r) {
  /** @type {Map<string, number[]>} */
  const by = new Map();
  for (const j of jobs) {
    let l = by.get(j.user);
    if (!l) by.set(j.user, l = []);
    l.push(/** @type {number} */ (r.waits.get(j.id)));
  }
  return new Map([...by].map(([u, ws]) => [u, ws.reduce((a, b) => a + b, 0) / ws.length]));
}

/** A trace file: `submit_s,devices,run_s,time_limit_s,user` (header line required). @param {string} file @returns {SimJob[]} */
function readTrace(file) {
  const lines = fs.readFileSync(file, 'utf8').split(/\r?\n/).filter((l) => l.trim() && !l.startsWith('#'));
  const head = (lines.shift() ?? '').split(',').map((s) => s.trim());
  const col = (name) => {
    const i = head.indexOf(name);
    if (i < 0) throw new Error(`${file}: no column ${name} (header: submit_s,devices,run_s,time_limit_s,user)`);
    return i;
  };
  const [cs, cd, cr, ct, cu] = ['submit_s', 'devices', 'run_s', 'time_limit_s', 'user'].map(col);
  const jobs = lines.map((l, i) => {
    const f = l.split(',').map((s) => s.trim());
    const num = (c, what) => {
      const x = Number(f[c]);
      if (f[c] === '' || !Number.isFinite(x) || x < 0) throw new Error(`${file}:${i + 2}: bad ${what} '${f[c]}'`);
      return x;
    };
    return { id: 0, submit: num(cs, 'submit_s'), count: num(cd, 'devices'), run: num(cr, 'run_s'), limit: f[ct] === '' ? null : num(ct, 'time_limit_s'), user: f[cu] || 'user' };
  });
  // Ids in submission order (the daemon's ids are its submission order).
  jobs.sort((a, b) => a.submit - b.submit);
  jobs.forEach((j, i) => { j.id = i + 1; });
  return jobs;
}

/** A min-heap of [time, id] (completions). */
class Heap {
  constructor() { /** @type {number[]} */ this.t = []; /** @type {number[]} */ this.v = []; }
  get size() { return this.t.length; }
  peek() { return this.t[0]; }
  /** @param {number} t @param {number} v */
  push(t, v) {
    const T = this.t; const V = this.v;
    let i = T.length; T.push(t); V.push(v);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (T[p] <= t) break;
      T[i] = T[p]; V[i] = V[p]; i = p;
    }
    T[i] = t; V[i] = v;
  }
  pop() {
    const T = this.t; const V = this.v;
    const v = V[0]; const lt = /** @type {number} */ (T.pop()); const lv = /** @type {number} */ (V.pop());
    const n = T.length;
    if (n) {
      let i = 0;
      for (;;) {
        let c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && T[c + 1] < T[c]) c++;
        if (T[c] >= lt) break;
        T[i] = T[c]; V[i] = V[c]; i = c;
      }
      T[i] = lt; V[i] = lv;
    }
    return v;
  }
}

/** @param {number[]} xs sorted ascending @param {number} q */
function quantile(xs, q) {
  if (!xs.length) return NaN;
  return xs[Math.min(xs.length - 1, Math.ceil(q * xs.length) - 1)];
}

/**
 * Replay `jobs` under `policy` on a host of `devices` NVIDIA devices.
 * @param {SimJob[]} jobs in id order @param {Policy} policy @param {{ devices?: number, maxRunning?: number, wholeSeconds?: boolean }} [o]
 * @returns {SimResult}
 */
function simulate(jobs, policy, { devices = 8, maxRunning = 32, wholeSeconds = false, fairShare = 0 } = {}) {
  // fairShare (a half-life in seconds; 0: off): per-user device-seconds, decayed, charged at
  // every event instant from the running jobs as the daemon charges them before each pass
  // (accounting/usage.ts), and the pending jobs handed over as an array the order step sorts.
  /** @type {Map<string, number>} */
  const usage = new Map();
  let usageAt = 0;
  /** @type {Map<number, number>} */
  const charged = new Map();
  // The daemon's clock reads whole seconds (its `now` and started_at): the self-check's replay mirrors that.
  const clock = wholeSeconds ? Math.floor : (/** @type {number} */ x) => x;
  const { schedule } = require(path.join(DAEMON_DIST, 'scheduler', 'schedule.js'));
  const inventory = Array.from({ length: devices }, (_, id) => ({ kind: 'nvidia', id, name: 'Simulated GPU', visible: `GPU-${id}`, npu: null, chip: null }));
  const key = (d) => `${d.kind}:${d.id}`;
  const free = new Set(inventory.map(key));
  /** @type {Map<string, { job: number, owner: string, end: number | null }>} */
  const holds = new Map();
  // The pending queue as the daemon keeps it (pending-jobs.ts): buckets by
  // count, largest first, each in id (= arrival) order; walked lazily.
  /** @type {Map<number, Map<number, any>>} */
  const buckets = new Map();
  /** @type {number[]} */
  let bucketKeys = [];
  let cpuOnly = 0;
  function* ordered() { for (const k of bucketKeys) yield* /** @type {Map<number, any>} */ (buckets.get(k)).values(); }
  const byId = new Map(jobs.map((j) => [j.id, j]));
  /** @type {Map<number, any[]>} */
  const held = new Map();
  const completions = new Heap();
  const starts = new Map();
  const waits = new Map();
  const startOrder = [];
  let running = 0;
  let next = 0;
  let passes = 0;
  let busy = 0; // device-seconds used
  let lastEnd = 0;
  const t0 = process.hrtime.bigint();
  while (next < jobs.length || completions.size) {
    const now = Math.min(next < jobs.length ? jobs[next].submit : Infinity, completions.size ? /** @type {number} */ (completions.peek()) : Infinity);
    while (completions.size && completions.peek() === now) {
      const id = completions.pop();
      for (const d of /** @type {any[]} */ (held.get(id))) { free.add(key(d)); holds.delete(key(d)); }
      held.delete(id);
      running--;
    }
    while (next < jobs.length && jobs[next].submit === now) {
      const j = jobs[next++];
      // One literal per job, the daemon's shape (pending-jobs.ts pendingJob).
      const p = { id: j.id, owner: j.user, count: j.count, kind: null, timeLimit: j.limit, deviceIds: undefined, excludeIds: undefined, groupAffinity: undefined };
      let b = buckets.get(-j.count);
      if (!b) {
        buckets.set(-j.count, b = new Map());
        bucketKeys = [...buckets.keys()].sort((x, y) => x - y);
      }
      b.set(j.id, p);
      if (j.count === 0) cpuOnly++;
    }
    if (fairShare) {
      const f = Math.pow(2, -(now - usageAt) / fairShare);
      for (const [u, x] of usage) usage.set(u, x * f);
      usageAt = now;
      for (const [id, from] of charged) {
        const j = /** @type {SimJob} */ (byId.get(id));
        usage.set(j.user, (usage.get(j.user) ?? 0) + j.count * (Math.min(now, from + j.run) - from));
        if (now >= from + j.run) charged.delete(id); else charged.set(id, now);
      }
    }
    if (running >= maxRunning) continue;
    /** @type {any} */
    const input = { pending: fairShare ? [...ordered()] : ordered(), cpuOnlyPending: cpuOnly, running, maxRunning, inventory, free };
    if (fairShare) input.usage = usage;
    if (policy.mode === 'reserve') {
      input.mode = 'reserve';
      input.reserveMinDevices = policy.reserveMinDevices ?? 2;
      input.holds = holds;
      input.now = clock(now);
    }
    const pass = schedule(input);
    passes++;
    for (const d of pass.decisions) {
      const j = /** @type {SimJob} */ (byId.get(d.id));
      const b = /** @type {Map<number, any>} */ (buckets.get(-j.count));
      b.delete(j.id);
      if (b.size === 0) { buckets.delete(-j.count); bucketKeys = bucketKeys.filter((k) => k !== -j.count); }
      if (j.count === 0) cpuOnly--;
      const dur = j.limit === null ? j.run : Math.min(j.run, j.limit);
      const end = now + dur;
      for (const dev of d.devices) {
        free.delete(key(dev));
        holds.set(key(dev), { job: j.id, owner: j.user, end: j.limit === null ? null : clock(now) + j.limit });
      }
      held.set(j.id, d.devices);
      running++;
      completions.push(end, j.id);
      starts.set(j.id, now);
      if (fairShare) charged.set(j.id, now);
      waits.set(j.id, now - j.submit);
      startOrder.push(j.id);
      busy += dur * d.devices.length;
      if (end > lastEnd) lastEnd = end;
    }
  }
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  if (starts.size !== jobs.length) {
    const never = jobs.filter((j) => !starts.has(j.id)).slice(0, 5).map((j) => `${j.id} (${j.count} devices)`);
    throw new Error(`${jobs.length - starts.size} job(s) never started, e.g. ${never.join(', ')}: more devices than the host has?`);
  }
  /** @type {Map<number, number[]>} */
  const classes = new Map();
  for (const j of jobs) {
    let c = classes.get(j.count);
    if (!c) classes.set(j.count, c = []);
    c.push(/** @type {number} */ (waits.get(j.id)));
  }
  const byClass = new Map();
  for (const [n, ws] of [...classes].sort((a, b) => a[0] - b[0])) {
    ws.sort((a, b) => a - b);
    byClass.set(n, { n: ws.length, mean: ws.reduce((s, x) => s + x, 0) / ws.length, p95: quantile(ws, 0.95), max: ws[ws.length - 1] });
  }
  const first = jobs.length ? jobs[0].submit : 0;
  const makespan = lastEnd - first;
  return {
    policy: policy.name, jobs: jobs.length, waits, starts, order: startOrder, byClass,
    utilisation: makespan > 0 ? busy / (devices * makespan) : 0, makespan, wallMs, passes,
  };
}

/** `greedy`, `reserve:8` (reserve with reserve_min_devices 8). @param {string} s @returns {Policy} */
function parsePolicy(s) {
  if (s === 'greedy') return { name: 'greedy', mode: 'greedy' };
  const m = /^reserve(?::(\d+))?$/.exec(s);
  if (!m) throw new Error(`unknown policy '${s}' (greedy, reserve, reserve:N)`);
  const n = m[1] ? Number(m[1]) : 2;
  return { name: `reserve (min ${n})`, mode: 'reserve', reserveMinDevices: n };
}

/** Duration for people: `42 s`, `3.5 min`, `2.1 h`. @param {number} s */
function dur(s) {
  if (!Number.isFinite(s)) return '–';
  if (s < 120) return `${s.toFixed(0)} s`;
  if (s < 7200) return `${(s / 60).toFixed(1)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

/** The side-by-side table (plain text, or Markdown). @param {SimResult[]} results @param {boolean} [markdown] */
function table(results, markdown = false) {
  const sizes = [...new Set(results.flatMap((r) => [...r.byClass.keys()]))].sort((a, b) => a - b);
  const largest = sizes[sizes.length - 1];
  /** @type {string[][]} */
  const rows = [];
  for (const n of sizes) {
    const c = (r) => r.byClass.get(n);
    rows.push([`wait mean, ${n}-device jobs (${c(results[0])?.n ?? 0})`, ...results.map((r) => dur(c(r)?.mean ?? NaN))]);
    rows.push([`wait p95, ${n}-device jobs`, ...results.map((r) => dur(c(r)?.p95 ?? NaN))]);
  }
  rows.push([`worst wait, ${largest}-device jobs`, ...results.map((r) => dur(r.byClass.get(largest)?.max ?? NaN))]);
  rows.push(['device utilisation', ...results.map((r) => `${(100 * r.utilisation).toFixed(1)} %`)]);
  rows.push(['makespan', ...results.map((r) => dur(r.makespan))]);
  rows.push(['replay time (wall)', ...results.map((r) => `${(r.wallMs / 1000).toFixed(2)} s`)]);
  const head = ['', ...results.map((r) => r.policy)];
  if (markdown) {
    return [`| ${head.join(' | ')} |`, `|${head.map(() => ' --- ').join('|')}|`, ...rows.map((c) => `| ${c.join(' | ')} |`)].join('\n') + '\n';
  }
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((c) => c[i].length)));
  const line = (c) => c.map((s, i) => (i ? s.padStart(widths[i]) : s.padEnd(widths[i]))).join('  ').trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n') + '\n';
}

/**
 * The comparison of `reserve` against `greedy`: worst wait of the
 * largest jobs (≤ 1/3 of greedy's) and mean wait of 1-device jobs (grows ≤ 25 %).
 * @param {SimResult} greedy @param {SimResult} reserve
 */
function compare(greedy, reserve) {
  const largest = Math.max(...greedy.byClass.keys());
  const worst = /** @type {number} */ (reserve.byClass.get(largest)?.max) / /** @type {number} */ (greedy.byClass.get(largest)?.max);
  const small = /** @type {number} */ (reserve.byClass.get(1)?.mean) / /** @type {number} */ (greedy.byClass.get(1)?.mean);
  return { largest, worst, small };
}

function main() {
  const argv = process.argv.slice(2);
  const opt = (name, dflt) => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1] : dflt; };
  const devices = Number(opt('--devices', '8'));
  const seed = Number(opt('--seed', '1'));
  const load = Number(opt('--load', '0.8'));
  const n = Number(opt('--jobs', '100000'));
  const trace = opt('--trace', undefined);
  if (argv.includes('--two-users')) {
    // Fair share on (half-life 7 days) and off, greedy, on `devices` devices.
    const jobs = twoUsers();
    process.stdout.write(`# xlurm scheduling simulator: two users on ${devices} devices: flood submits 400 jobs of 10 min at t=0, light 10 of 10 min, one every 29 min 10 s\n`);
    for (const [name, hl] of [['fair share on', 7 * 86400], ['fair share off', 0]]) {
      const w = meanWaitByUser(jobs, simulate(jobs, parsePolicy('greedy'), { devices, fairShare: /** @type {number} */ (hl) }));
      process.stdout.write(`${name}: mean wait flood ${dur(/** @type {number} */ (w.get('flood')))}, light ${dur(/** @type {number} */ (w.get('light')))}\n`);
    }
    return 0;
  }
  if (argv.includes('--sharing')) {
    // Card sharing (docs/behaviour.md §25): 70 % of the jobs need at most a quarter of a card (bench/sim-share.js).
    const { compare } = require('./sim-share');
    const rows = compare({ jobs: Number(opt('--jobs', '2000')), load: Number(opt('--load', '0.9')), seed: Number(opt('--seed', '19')), devices });
    process.stdout.write(`# xlurm scheduling simulator: card sharing on ${devices} cards of 80G; 70 % of the jobs need 4-20G and 25 % compute\n`);
    for (const r of rows) {
      process.stdout.write(`sharing ${r.sharing}: mean wait ${dur(r.mean_wait_s)} (small ${dur(r.mean_wait_small_s)}, whole-card ${dur(r.mean_wait_whole_s)}), device-hours used ${r.device_hours.toFixed(1)}, makespan ${dur(r.makespan_h * 3600)}\n`);
    }
    return 0;
  }
  const policies = String(opt('--policies', 'greedy,reserve:8,reserve:4')).split(',').map(parsePolicy);
  const jobs = trace ? readTrace(trace) : generate({ jobs: n, load, seed, devices });
  const csvOut = opt('--csv-out', undefined);
  if (csvOut) fs.writeFileSync(csvOut, 'submit_s,devices,run_s,time_limit_s,user\n' + jobs.map((j) => `${j.submit},${j.count},${j.run},${j.limit ?? ''},${j.user}`).join('\n') + '\n');
  const what = trace ? `trace ${trace}` : `generator, seed ${seed}, offered load ${load}`;
  process.stdout.write(`# xlurm scheduling simulator: ${jobs.length} jobs (${what}), ${devices} devices, max_running 32\n`);
  const results = policies.map((p) => simulate(jobs, p, { devices }));
  process.stdout.write(table(results, argv.includes('--markdown')));
  const greedy = results.find((r) => r.policy === 'greedy');
  for (const r of results) {
    if (!greedy || r === greedy) continue;
    const c = compare(greedy, r);
    process.stdout.write(`${r.policy} vs greedy: worst wait of ${c.largest}-device jobs ${c.worst.toFixed(3)}× (target ≤ 0.333), mean wait of 1-device jobs ${c.small.toFixed(3)}× (target ≤ 1.25)\n`);
  }
  return 0;
}

/**
 * The self-check: a short trace (integer seconds, runs of 1–3 s, time limits
 * a second or two longer) replayed through a real daemon on 4 fake NVML GPUs
 * and through the simulator; each job's wait (its own start stamp minus the
 * moment it was submitted) must agree with the simulated one within
 * `tolerance` seconds. The replay starts 0.1 s after a whole second so the
 * daemon's clock (whole seconds) reads the trace's instants; the simulation
 * reads whole seconds too (wholeSeconds).
 * @param {Policy} policy @param {{ tolerance?: number, log?: (m: string) => void }} [o]
 */
async function selfCheck(policy, { tolerance = 0.5, log = () => undefined } = {}) {
  const { startDaemon, FakeNvml, tempDir } = require('./lib/xlurm');
  const r = rng(42);
  /** @type {SimJob[]} */
  const jobs = [];
  let t = 0;
  for (let i = 0; i < 24; i++) {
    const u = r();
    const count = u < 0.6 ? 1 : u < 0.8 ? 2 : u < 0.9 ? 3 : 4;
    const run = 1 + Math.floor(r() * 3);
    // Runs of whole seconds + 0.3 and one submission a second: a completion and a submission
    // rarely fall on the same instant (a race in the real daemon, a tie in the simulation).
    jobs.push({ id: i + 1, submit: t, count, run: run + 0.3, limit: run + 1 + Math.floor(r() * 2), user: 'root' });
    t += 1;
  }
  const devices = 4;
  const expected = simulate(jobs, policy, { devices, wholeSeconds: true });
  const fake = new FakeNvml();
  fake.write(devices);
  const dir = tempDir('xlb-simcheck');
  const cfg = path.join(dir, 'xlurm.toml');
  fs.writeFileSync(cfg, policy.mode === 'reserve' ? `[scheduler]\nmode = "reserve"\nreserve_min_devices = ${policy.reserveMinDevices ?? 2}\n` : '[scheduler]\nmode = "greedy"\n');
  const d = await startDaemon({ backend: 'nvidia', env: fake.env, args: ['--config', cfg] });
  try {
    const sleep = (ms) => new Promise((res) => setTimeout(res, Math.max(0, ms)));
    await sleep(1000 - (Date.now() % 1000) + 50);
    const t0 = Date.now();
    /** @type {Map<number, number>} */
    const submitted = new Map();
    /** @type {Map<number, number>} */
    const ids = new Map();
    for (const j of jobs) {
      await sleep(t0 + j.submit * 1000 - Date.now());
      submitted.set(j.id, Date.now() / 1000);
      ids.set(j.id, await d.submit(['sh', '-c', `date +%s.%N > ${dir}/${j.id}; exec sleep ${j.run}`], { count: j.count, time_limit: j.limit }));
    }
    const { poll } = require('./lib/xlurm');
    await poll(() => jobs.every((j) => fs.existsSync(path.join(dir, String(j.id))) && fs.readFileSync(path.join(dir, String(j.id)), 'utf8').trim()),
      { timeoutMs: 120000, intervalMs: 50, what: 'every job started' });
    const rows = jobs.map((j) => {
      const real = Number(fs.readFileSync(path.join(dir, String(j.id)), 'utf8')) - /** @type {number} */ (submitted.get(j.id));
      const sim = /** @type {number} */ (expected.waits.get(j.id));
      return { id: j.id, count: j.count, sim, real, diff: Math.abs(real - sim) };
    });
    const worst = Math.max(...rows.map((x) => x.diff));
    for (const x of rows) log(`job ${x.id} (${x.count} devices): simulated wait ${x.sim.toFixed(2)} s, real ${x.real.toFixed(2)} s`);
    return { policy: policy.name, jobs: jobs.length, worst, tolerance, ok: worst <= tolerance, rows };
  } finally {
    await d.stop();
  }
}

module.exports = { generate, readTrace, simulate, parsePolicy, table, compare, rng, selfCheck, twoUsers, meanWaitByUser };

if (require.main === module && process.argv.includes('--check')) {
  (async () => {
    let bad = 0;
    for (const p of String(process.argv[process.argv.indexOf('--policies') + 1] ?? '').includes(',') ? String(process.argv[process.argv.indexOf('--policies') + 1]).split(',').map(parsePolicy) : [parsePolicy('greedy'), parsePolicy('reserve:2')]) {
      const c = await selfCheck(p, { log: (m) => process.stderr.write(`${m}\n`) });
      process.stdout.write(`self-check ${c.policy}: ${c.jobs} jobs through the real daemon (4 fake GPUs): worst |real - simulated| wait ${c.worst.toFixed(3)} s (tolerance ${c.tolerance} s): ${c.ok ? 'agrees' : 'DISAGREES'}\n`);
      if (!c.ok) bad++;
    }
    process.exitCode = bad ? 1 : 0;
  })().catch((e) => { process.stderr.write(`${e?.stack ?? e}\n`); process.exitCode = 1; });
} else if (require.main === module) {
  try { process.exitCode = main(); } catch (e) { process.stderr.write(`${/** @type {Error} */ (e).message}\n`); process.exitCode = 1; }
}

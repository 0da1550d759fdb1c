#!/usr/bin/env node
// @ts-check
'use strict';
/**
 * Card sharing in the simulator (docs/behaviour.md §25.2): a workload where
 * 70 % of the jobs need at most a quarter of a card (4-20G of 80G, 25 %
 * compute) and the rest a whole card, replayed through the daemon's own
 * schedule() in virtual time twice: sharing off (every job holds a whole
 * card) and on (the small jobs ask for --share MEM,25%). Reports each run's
 * mean wait (all jobs, small ones, whole ones), the makespan and the
 * device-hours used (a slice counts its share of the card's memory).
 *
 *   node bench/sim-share.js [--jobs N] [--load F] [--seed S] [--devices N] [--json]
 *
 * Offered load F is measured with sharing off (every job a whole card).
 */
const path = require('node:path');
const { rng } = require('./sim');

const DAEMON_DIST = path.join(__dirname, '..', 'packages', 'daemon', 'dist');
const G = 1024 ** 3;
const CARD = 80 * G;

/** @typedef {{ id: number, submit: number, run: number, mem: number, small: boolean }} ShareJob */

/** @param {{ jobs: number, load: number, seed: number, devices: number }} o @returns {ShareJob[]} */
function workload({ jobs, load, seed, devices }) {
  const r = rng(seed);
  const normal = () => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
  /** @type {ShareJob[]} */
  const out = [];
  let work = 0;
  for (let i = 0; i < jobs; i++) {
    const small = r() < 0.7;
    const run = Math.round(Math.min(86400, Math.max(10, 600 * Math.exp(1.2 * normal()))));
    const mem = small ? (4 + Math.floor(r() * 5) * 4) * G : CARD;
    out.push({ id: i + 1, submit: 0, run, mem, small });
    work += run;
  }
  const gap = work / (devices * load) / jobs;
  let t = 0;
  for (const j of out) { j.submit = Math.round(t); t += -Math.log(1 - r()) * gap; }
  return out;
}

/** A tiny binary heap of (time, id). */
class Heap {
  constructor() { /** @type {Array<[number, number]>} */ this.a = []; }
  get size() { return this.a.length; }
  peek() { return this.a[0][0]; }
  /** @param {number} t @param {number} v */
  push(t, v) {
    const a = this.a; a.push([t, v]);
    for (let i = a.length - 1; i > 0;) { const p = (i - 1) >> 1; if (a[p][0] <= a[i][0]) break; [a[p], a[i]] = [a[i], a[p]]; i = p; }
  }
  pop() {
    const a = this.a; const top = a[0]; const last = /** @type {[number, number]} */ (a.pop());
    if (a.length) {
      a[0] = last;
      for (let i = 0; ;) {
        const l = 2 * i + 1, rr = l + 1; let m = i;
        if (l < a.length && a[l][0] < a[m][0]) m = l;
        if (rr < a.length && a[rr][0] < a[m][0]) m = rr;
        if (m === i) break;
        [a[m], a[i]] = [a[i], a[m]]; i = m;
      }
    }
    return top[1];
  }
}

/** @param {ShareJob[]} jobs @param {boolean} sharing @param {number} devices */
function simulate(jobs, sharing, devices) {
  const { schedule } = require(path.join(DAEMON_DIST, 'scheduler', 'schedule.js'));
  const inventory = Array.from({ length: devices }, (_, id) => ({ kind: 'nvidia', id, name: 'Simulated GPU', visible: `GPU-${id}`, npu: null, chip: null }));
  const key = (/** @type {{kind: string, id: number}} */ d) => `${d.kind}:${d.id}`;
  /** @type {Map<string, number>} */ const whole = new Map();          // card → job holding it whole
  /** @type {Map<string, Map<number, {mem: number, compute: number}>>} */ const slices = new Map();
  /** @type {Map<number, any>} */ const pending = new Map();
  const completions = new Heap();
  /** @type {Map<number, string>} */ const where = new Map();
  const waits = new Map();
  let next = 0; let running = 0; let deviceSeconds = 0; let makespan = 0;
  while (next < jobs.length || completions.size) {
    const now = Math.min(next < jobs.length ? jobs[next].submit : Infinity, completions.size ? completions.peek() : Infinity);
    while (completions.size && completions.peek() === now) {
      const id = completions.pop();
      const k = /** @type {string} */ (where.get(id));
      if (whole.get(k) === id) whole.delete(k);
      const s = slices.get(k);
      if (s) { s.delete(id); if (s.size === 0) slices.delete(k); }
      running--;
    }
    while (next < jobs.length && jobs[next].submit === now) {
      const j = jobs[next++];
      const p = { id: j.id, count: 1, kind: null, timeLimit: null };
      if (sharing && j.small) /** @type {any} */ (p).share = { mem: j.mem, compute: 25 };
      pending.set(j.id, p);
    }
    if (pending.size === 0) continue;
    const free = new Set(inventory.map(key).filter((k) => !whole.has(k) && !slices.has(k)));
    /** @type {any} */
    const input = { pending: [...pending.values()], running, maxRunning: 1e9, inventory, free };
    if (sharing) {
      input.slices = new Map(inventory.map(key).filter((k) => !whole.has(k)).map((k) => {
        let sliced = 0, compute = 0; const s = slices.get(k);
        for (const x of s?.values() ?? []) { sliced += x.mem; compute += x.compute; }
        return [k, { total: CARD, free: CARD - sliced, sliced, compute, slices: s?.size ?? 0 }];
      }));
    }
    const pass = schedule(input);
    for (const d of pass.decisions) {
      const p = pending.get(d.id); pending.delete(d.id);
      const j = jobs[d.id - 1];
      const k = key(d.devices[0]);
      where.set(j.id, k);
      if (p.share) {
        let s = slices.get(k); if (!s) slices.set(k, s = new Map());
        s.set(j.id, p.share);
        deviceSeconds += j.run * (j.mem / CARD);
      } else {
        whole.set(k, j.id);
        deviceSeconds += j.run;
      }
      running++;
      completions.push(now + j.run, j.id);
      waits.set(j.id, now - j.submit);
      makespan = Math.max(makespan, now + j.run);
    }
  }
  const mean = (/** @type {ShareJob[]} */ js) => js.reduce((a, j) => a + waits.get(j.id), 0) / Math.max(1, js.length);
  return {
    sharing: sharing ? 'on' : 'off', jobs: jobs.length,
    mean_wait_s: mean(jobs), mean_wait_small_s: mean(jobs.filter((j) => j.small)), mean_wait_whole_s: mean(jobs.filter((j) => !j.small)),
    device_hours: deviceSeconds / 3600, makespan_h: makespan / 3600,
  };
}

/** @param {{ jobs?: number, load?: number, seed?: number, devices?: number }} [o] */
function compare({ jobs = 2000, load = 0.9, seed = 19, devices = 8 } = {}) {
  const w = workload({ jobs, load, seed, devices });
  return [simulate(w, false, devices), simulate(w, true, devices)];
}

module.exports = { workload, simulate, compare };

if (require.main === module) {
  const argv = process.argv.slice(2);
  const opt = (/** @type {string} */ n, /** @type {number} */ d) => { const i = argv.indexOf(n); return i >= 0 ? Number(argv[i + 1]) : d; };
  const rows = compare({ jobs: opt('--jobs', 2000), load: opt('--load', 0.9), seed: opt('--seed', 19), devices: opt('--devices', 8) });
  if (argv.includes('--json')) process.stdout.write(JSON.stringify(rows, null, 2) + '\n');
  else {
    process.stdout.write('sharing  jobs  mean wait  small jobs  whole-card jobs  device-hours used  makespan\n');
    for (const r of rows) {
      process.stdout.write(`${r.sharing.padEnd(8)} ${String(r.jobs).padStart(5)}  ${(r.mean_wait_s / 60).toFixed(1).padStart(7)} min  ${(r.mean_wait_small_s / 60).toFixed(1).padStart(6)} min  ${(r.mean_wait_whole_s / 60).toFixed(1).padStart(11)} min  ${r.device_hours.toFixed(1).padStart(17)}  ${r.makespan_h.toFixed(1).padStart(6)} h\n`);
    }
  }
}

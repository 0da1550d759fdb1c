#!/usr/bin/env node
// Event-loop cost of starting a supervisor: 1000 x spawnSupervisorAsync('/bin/true') (posix_spawn
// on the thread pool + pidfd watch, native/src/addon/spawn.cc) against 1000 x child_process.spawn
// with the options the runner used (four inherited fds, detached, empty env, cwd /), in a node
// holding ~100 MB of heap like a busy daemon. The figure that matters is the synchronous time of the call (the
// event loop is blocked for it); exits are awaited in batches of 20 so children do not pile up.
//   node native/bench/spawn-supervisor.js [count] [heapMiB]
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const n = require(path.join(__dirname, '..', 'build', 'Release', 'xlurm_native.node'));

const count = Number(process.argv[2] ?? 1000);
const heapMiB = Number(process.argv[3] ?? 100);

// Ballast: small live objects, so the heap is spread over many pages (as a real daemon's is).
const ballast = [];
while (process.memoryUsage().heapUsed < heapMiB * 1024 * 1024) {
  for (let i = 0; i < 10000; i++) ballast.push({ id: i, name: `job-${i}`, tags: [i, i + 1] });
}

const fd = fs.openSync('/dev/null', 'r+');
const fds = [fd, fd, fd, fd];

function stats(ms) {
  const s = [...ms].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  const sum = s.reduce((a, b) => a + b, 0);
  return { mean: sum / s.length, p50: q(0.5), p95: q(0.95), p99: q(0.99), max: s[s.length - 1], total: sum };
}

async function run(name, startOne) {
  const calls = [];
  const t0 = process.hrtime.bigint();
  let batch = [];
  for (let i = 0; i < count; i++) {
    const a = process.hrtime.bigint();
    const exit = startOne();
    calls.push(Number(process.hrtime.bigint() - a) / 1e6);
    batch.push(exit);
    if (batch.length === 20) { await Promise.all(batch); batch = []; }
  }
  await Promise.all(batch);
  const wall = Number(process.hrtime.bigint() - t0) / 1e6;
  const s = stats(calls);
  const f = (v) => v.toFixed(3).padStart(8);
  console.log(`${name.padEnd(22)} per call ms: mean ${f(s.mean)} p50 ${f(s.p50)} p95 ${f(s.p95)} p99 ${f(s.p99)} max ${f(s.max)}` +
    ` | blocked ${s.total.toFixed(0)} ms, wall ${wall.toFixed(0)} ms for ${count}`);
}

const viaAddon = () => new Promise((resolve, reject) => {
  n.spawnSupervisorAsync('/bin/true', fds, (err) => { if (err) reject(err); },
    (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}`))));
});
const viaChildProcess = () => new Promise((resolve, reject) => {
  const c = spawn('/bin/true', [], { stdio: fds, detached: true, env: {}, cwd: '/' });
  c.on('error', reject);
  c.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}`))));
});

// The addon's watches do not keep Node alive; this does, until the end.
const keepAlive = setInterval(() => {}, 1000);

(async () => {
  const m = process.memoryUsage();
  console.log(`node ${process.version}, heapUsed ${(m.heapUsed / 2 ** 20).toFixed(0)} MiB, rss ${(m.rss / 2 ** 20).toFixed(0)} MiB, ${count} spawns each`);
  // Warm-up, then alternate so that machine noise hits both alike.
  await run('warm-up (addon)', viaAddon);
  await run('warm-up (spawn)', viaChildProcess);
  for (let round = 1; round <= 2; round++) {
    await run(`spawnSupervisorAsync #${round}`, viaAddon);
    await run(`child_process #${round}`, viaChildProcess);
  }
  if (ballast.length === 0) console.log('');  // keep the ballast alive to the end
  clearInterval(keepAlive);
})().catch((e) => { console.error(e); process.exit(1); });

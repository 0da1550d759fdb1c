// @ts-check
'use strict';
/**
 * Device turnaround with the fake NVML (one GPU): job A holds the GPU, job B
 * waits for it. From the moment A is told to end until B's program runs on
 * the same GPU (B is `date +%s.%N`, which prints the wall clock at start).
 *  - end: A is `sh -c 'read x < FIFO'`; the clock starts when the byte is written;
 *  - cancel: A is `sleep 3600` (exits on SIGTERM); the clock starts at the cancel request.
 * Between the two: A's exit, the supervisor's result, the daemon's commit, the
 * re-probe of the released GPU, the pass, B's RUNNING commit and spawn.
 */
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { over, median } = require('../lib/stats');
const { FakeNvml, startDaemon, tempDir } = require('../lib/xlurm');

const wallMs = () => performance.timeOrigin + performance.now();

/** @param {import('../lib/xlurm').Daemon} d @param {number} id */
const started = (d, id) => Number(fs.readFileSync(path.join(d.home, 'jobs', `${id}.log`), 'utf8').trim()) * 1000;

/** @param {import('../run').Ctx} ctx */
async function run(ctx) {
  const fake = new FakeNvml();
  fake.write(1);
  const d = await startDaemon({ backend: 'nvidia', maxRunning: 32, env: fake.env });
  const dir = tempDir('xlb-dev');
  const n = ctx.quick ? 5 : 15;
  const ends = []; const cancels = [];
  try {
    for (let r = 0; r < ctx.reps; r++) {
      ctx.log(`device turnaround, rep ${r + 1}`);
      const e = []; const c = [];
      for (let i = 0; i < n; i++) {
        const fifo = path.join(dir, `f${r}-${i}`);
        execFileSync('mkfifo', [fifo]);
        const a = await d.submit(['sh', '-c', `read x < ${fifo}`], { count: 1 });
        await d.waitState(a, ['RUNNING']);
        const b = await d.submit(['date', '+%s.%N'], { count: 1 });
        const fd = fs.openSync(fifo, 'w'); // blocks until A's shell has the FIFO open
        const t0 = wallMs();
        fs.writeSync(fd, 'x\n');
        fs.closeSync(fd);
        const jb = await d.waitState(b, ['COMPLETED', 'FAILED']);
        if (jb.devices[0]?.id !== 0) throw new Error('B did not run on the GPU');
        e.push(started(d, b) - t0);

        const a2 = await d.submit(['sleep', '3600'], { count: 1 });
        await d.waitState(a2, ['RUNNING']);
        const b2 = await d.submit(['date', '+%s.%N'], { count: 1 });
        const t1 = wallMs();
        await d.call('cancel', { id: a2 });
        await d.waitState(b2, ['COMPLETED', 'FAILED']);
        c.push(started(d, b2) - t1);
      }
      ends.push(median(e)); cancels.push(median(c));
    }
  } finally { await d.stop(); }
  const target = { text: '≤ 50 ms', on: /** @type {const} */ ('value'), max: 50 };
  return [
    { measure: 'device turnaround: job ends → next starts', unit: 'ms', value: over(ends), target },
    { measure: 'device turnaround: cancel (SIGTERM) → next starts', unit: 'ms', value: over(cancels), target },
  ];
}

module.exports = { id: 'devices', title: 'device turnaround with the fake NVML', run };

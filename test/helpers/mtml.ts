/**
 * The fake MTML's GPUs for tests (test/fixtures/fake-mtml): MTML has no process query, so a GPU
 * is busy while a process holds one of its device nodes open. Here the nodes are plain files in a
 * scratch directory that the fake names, and `hold` keeps one open from a process outside xlurm.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Scope as Tap } from './tap';


export const mttUuid = (i: number): string => `5e1ec7ed-0000-4000-8000-00000000000${i}`;

export interface MtmlGpus {
  /** The node file of GPU `i` (`gpu` or `render`). */
  node(i: number, kind?: 'gpu' | 'render'): string;
  /** The state lines of GPU `i`: the device and its two nodes. */
  gpu(i: number): string[];
  /** GPUs 0..n-1. */
  gpus(n: number): string[];
  /** Keep `file` open from a process outside xlurm until it is killed (at teardown at the latest). */
  hold(file: string): Promise<ChildProcess>;
}

export function mtmlGpus(t: Tap, name = 'MTT S4000'): MtmlGpus {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-mtt-nodes-'));
  const holders: ChildProcess[] = [];
  t.teardown(() => {
    for (const c of holders) c.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const node = (i: number, kind: 'gpu' | 'render' = 'gpu') => {
    const p = path.join(dir, `${kind}.${i}`);
    if (!fs.existsSync(p)) fs.writeFileSync(p, '');
    return p;
  };
  const gpu = (i: number) => [`device ${i} ${mttUuid(i)} "${name}"`, `node ${i} gpu ${node(i)}`, `node ${i} render ${node(i, 'render')}`];
  return {
    node,
    gpu,
    gpus: (n) => Array.from({ length: n }, (_, i) => gpu(i)).flat(),
    async hold(file) {
      const fd = fs.openSync(file, 'r');
      const c = spawn('sleep', ['600'], { stdio: ['ignore', 'ignore', 'ignore', fd] });
      holders.push(c);
      try {
        await new Promise((resolve, reject) => c.once('spawn', resolve).once('error', reject));
      } finally {
        fs.closeSync(fd);
      }
      return c;
    },
  };
}

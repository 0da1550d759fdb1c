// slurm-config's generator (docs/behaviour.md §27.2) for every vendor: the node line, gres.conf
// with discovery's node files or the vendor's naming, the names from [cluster] gres, and the
// TaskProlog run with a stand-in scontrol, giving each vendor's variables as visibility.ts does.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { Device, DeviceKind } from '@xlurm/protocol';
import type { Backend } from '../../../packages/daemon/src/devices/backend';
import { derivedNode, slurmConfig } from '../../../packages/daemon/src/slurm-config';

const dev = (kind: DeviceKind, id: number, visible = String(id)): Device => ({ kind, id, name: `${kind} card`, visible, npu: null, chip: null });
const backend = (kind: DeviceKind, devices: Device[], nodes?: Map<number, string[]>): Backend =>
  ({ kind, devices, probe: async () => new Map(), close: () => undefined, ...(nodes ? { nodes } : {}) }) as Backend;

t.test('node line and gres.conf', async (t) => {
  const c = slurmConfig({
    hostname: 'n1', cpus: 64, memory: 500000, gres: { mthreads: 'musa' },
    backends: [backend('mthreads', [dev('mthreads', 0), dev('mthreads', 1)], new Map([[0, ['/dev/mtgpu.0', '/dev/dri/card0']]])), backend('hcu', [dev('hcu', 3)])],
  });
  t.equal(c.node_line, 'NodeName=n1 CPUs=64 RealMemory=500000 Gres=musa:2,hcu:1 State=UNKNOWN');
  t.same(c.gres_conf.split('\n').filter((l) => l.startsWith('NodeName')).map((l) => l.replace(/ {2}#.*/, '')), [
    'NodeName=n1 Name=musa File=/dev/mtgpu.0', 'NodeName=n1 Name=musa File=/dev/mtgpu.1', 'NodeName=n1 Name=hcu File=/dev/dri/renderD131',
  ], 'discovery\'s first node file, else the vendor\'s naming; [cluster] gres names win');
  t.equal(derivedNode(dev('ascend', 5)), '/dev/davinci5');
  t.equal(derivedNode(dev('nvidia', 2)), '/dev/nvidia2');
  t.equal(derivedNode(dev('ppu', 1)), '/dev/alixpu_ppu1');
  t.equal(slurmConfig({ hostname: 'n', cpus: 1, memory: 1, gres: {}, backends: [] }).node_line, 'NodeName=n CPUs=1 RealMemory=1 State=UNKNOWN');
});

t.test('the TaskProlog for each vendor', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-prolog-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const run = (backends: Backend[], gres: string) => {
    const c = slurmConfig({ hostname: 'n1', cpus: 1, memory: 1, gres: {}, backends });
    fs.writeFileSync(path.join(dir, 'prolog'), c.task_prolog);
    fs.writeFileSync(path.join(dir, 'scontrol'), `#!/bin/sh\necho '   Nodes=n1 CPU_IDs=0 Mem=0 GRES=${gres}'\n`, { mode: 0o755 });
    const r = spawnSync('/bin/sh', [path.join(dir, 'prolog')], { encoding: 'utf8', env: { PATH: `${dir}:/usr/bin:/bin`, SLURM_JOB_ID: '1' } });
    t.equal(r.status, 0, r.stderr);
    return r.stdout;
  };
  t.equal(run([backend('mthreads', [dev('mthreads', 0, 'MT-0'), dev('mthreads', 1, 'MT-1')])], 'mtgpu:1(IDX:1)'),
    'export MUSA_VISIBLE_DEVICES=1\nexport MTHREADS_VISIBLE_DEVICES=MT-1\n');
  t.equal(run([backend('metax', [dev('metax', 0), dev('metax', 1)])], 'mxgpu:2(IDX:0-1)'),
    'export CUDA_VISIBLE_DEVICES=0,1\nexport MACA_VISIBLE_DEVICES=0,1\n');
  t.equal(run([backend('ppu', [dev('ppu', 0, 'GPU-a'), dev('ppu', 1, 'GPU-b')])], 'ppu:1(IDX:1)'), 'export CUDA_VISIBLE_DEVICES=GPU-b\n');
  t.equal(run([backend('hcu', [dev('hcu', 4), dev('hcu', 7), dev('hcu', 9)])], 'hcu:2(IDX:1-2)'),
    'export CUDA_VISIBLE_DEVICES=0,1\nexport HIP_VISIBLE_DEVICES=0,1\nexport ROCR_VISIBLE_DEVICES=7,9\n', 'HCU: positions within the job, and ids');
  t.equal(run([backend('ascend', [dev('ascend', 0), dev('ascend', 1)])], 'gpu:1(IDX:0)'), '', 'nothing of its own allocated: no line');
  t.equal(run([backend('nvidia', [dev('nvidia', 0, "GPU-'quoted'")])], 'gpu:1(IDX:0)'), "export CUDA_VISIBLE_DEVICES=GPU-'quoted'\n", 'values are quoted for the shell');
});

// `xlurm slurm-config` (docs/behaviour.md §27.2) on the fake NVIDIA and Ascend libraries: the node
// line, gres.conf with each device's node file, and the TaskProlog, run once with the variables
// Slurm would set and once by a real private Slurm for real jobs; then the admin guide's "From one
// server to a cluster" followed as written: its client configuration against that Slurm.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { NO_VENDOR_LIBRARIES } from '../helpers/devices';
import { fakeLibrary } from '../helpers/fixtures';
import { nodeCommand, runProcess } from '../helpers/daemon';
import { CLI_BIN, ROOT, baseEnv } from '../helpers/env';
import { startSlurm } from '../helpers/slurm';

const nvUuid = (i: number) => `GPU-7e57c0de-0000-4000-8000-00000000000${i}`;
const nv = fakeLibrary(t, 'nvidia', [0, 1].map((i) => `device ${i} ${nvUuid(i)} "Fake H100 80GB"`));
// Logical ids 0-3 on cards 6 and 3 (discovery sorts them by id).
const asc = fakeLibrary(t, 'ascend', ['chip 3 0 2 Ascend 910B3', 'chip 3 1 3 Ascend 910B3', 'chip 6 0 0 Ascend 910B3', 'chip 6 1 1 Ascend 910B3']);

/** The admin guide's cluster section, and the first ```toml block under its client configuration. */
function guideClientConfig(): string {
  const guide = fs.readFileSync(path.join(ROOT, 'docs', 'admin-guide.md'), 'utf8');
  const section = guide.slice(guide.indexOf('## From one server to a cluster'));
  const client = section.slice(section.indexOf('### Client configuration'));
  const m = /```toml\n([\s\S]*?)```/.exec(client);
  if (!m) throw new Error('no toml block in the admin guide\'s client configuration');
  return m[1]!;
}

t.test('slurm-config from discovery, and its TaskProlog', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-slurmcfg-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const conf = path.join(dir, 'xlurm.toml');
  fs.writeFileSync(conf, guideClientConfig());
  const env = { ...baseEnv({ XLURM_HOME: path.join(dir, 'home'), XLURM_CONFIG: conf }), ...NO_VENDOR_LIBRARIES, ...nv.env, ...asc.env };
  const r = await runProcess(...nodeCommand([path.join(CLI_BIN, 'xlurm'), 'slurm-config', '--json']), { env, cwd: dir });
  t.equal(r.code, 0, r.stderr);
  const c = JSON.parse(r.stdout) as { node_line: string; gres_conf: string; task_prolog: string };
  t.same(Object.keys(c), ['node_line', 'gres_conf', 'task_prolog']);
  t.match(c.node_line, /^NodeName=\S+ CPUs=\d+ RealMemory=\d+ Gres=gpu:2,npu:4 State=UNKNOWN$/);
  const files = c.gres_conf.split('\n').filter((l) => l.startsWith('NodeName=')).map((l) => / Name=(\S+) File=(\S+)/.exec(l)!.slice(1).join(' '));
  t.equal(files.length, 6, c.gres_conf);
  t.match(files, [/^gpu \/dev\/nvidia\d+$/, /^gpu \/dev\/nvidia\d+$/, /^npu \S*davinci0$/, /^npu \S*davinci1$/, /^npu \S*davinci2$/, /^npu \S*davinci3$/], 'each device\'s node file, in Slurm\'s index order');
  const text = await runProcess(...nodeCommand([path.join(CLI_BIN, 'xlurm'), 'slurm-config']), { env, cwd: dir });
  t.equal(text.code, 0, text.stderr);
  t.match(text.stdout, /GresTypes=gpu,npu\n/);
  t.ok(text.stdout.includes(c.gres_conf) && text.stdout.includes(c.task_prolog), 'the text form holds the same three parts');

  // The TaskProlog with what Slurm would give it: SLURM_JOB_ID, and `scontrol show job -d` naming the indices.
  const prolog = path.join(dir, 'task-prolog');
  fs.writeFileSync(prolog, c.task_prolog, { mode: 0o755 });
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin);
  const fakeScontrol = (line: string) => fs.writeFileSync(path.join(bin, 'scontrol'), `#!/bin/sh\n[ "$*" = "show job -d 42" ] || exit 1\necho 'JobId=42 JobName=x'\necho '     Nodes=n1 CPU_IDs=0-1 Mem=0 ${line}'\n`, { mode: 0o755 });
  const runProlog = (extra: Record<string, string>) => spawnSync('/bin/sh', [prolog], {
    encoding: 'utf8', env: { PATH: `${bin}:/usr/bin:/bin`, SLURM_JOB_ID: '42', ...extra },
  });
  fakeScontrol('GRES=gpu:1(IDX:1),npu:2(IDX:1,3)');
  let p = runProlog({ CUDA_VISIBLE_DEVICES: '1' });
  t.equal(p.status, 0, p.stderr);
  t.equal(p.stdout, `export CUDA_VISIBLE_DEVICES=${nvUuid(1)}\nexport ASCEND_RT_VISIBLE_DEVICES=1,3\nexport ASCEND_DEVICE_ID=0\n`);
  fs.writeFileSync(path.join(bin, 'scontrol'), `#!/bin/sh\necho 'JobId=42'\necho '     Nodes=n1 CPU_IDs=0 Mem=0 GRES=npu:1(IDX:0)'\necho '     Nodes=n2 CPU_IDs=0 Mem=0 GRES=npu:2(IDX:2-3)'\n`, { mode: 0o755 });
  p = runProlog({ SLURMD_NODENAME: 'n2' });
  t.equal(p.stdout, 'export ASCEND_RT_VISIBLE_DEVICES=2,3\nexport ASCEND_DEVICE_ID=0\n', 'a job on several nodes: this node\'s line');
  fakeScontrol('GRES=npu:4(IDX:0-3)');
  p = runProlog({});
  t.equal(p.stdout, 'export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3\nexport ASCEND_DEVICE_ID=0\n', 'a range of indices; no GPU: nothing for it');
  fakeScontrol('GRES=');
  p = runProlog({ SLURM_JOB_GPUS: '0' });
  t.equal(p.stdout, `export CUDA_VISIBLE_DEVICES=${nvUuid(0)}\n`, 'a GRES named gpu: Slurm\'s SLURM_JOB_GPUS when scontrol names none');

  // A real Slurm running that TaskProlog, and the guide's client configuration against it.
  const s = await startSlurm(t, { taskProlog: c.task_prolog, cluster: guideClientConfig().replace(/^\[cluster\]\n(engine = "slurm"\n)?/, '') });
  if (!s) return;
  const show = 'echo "CUDA=${CUDA_VISIBLE_DEVICES:-} ASC=${ASCEND_RT_VISIBLE_DEVICES:-} ADI=${ASCEND_DEVICE_ID:-unset}"';
  const a = await s.run('xrun', ['--device', 'asc', '-g', '2', 'sh', '-c', show]);
  t.equal(a.code, 0, a.stderr);
  t.equal(a.stdout, 'CUDA= ASC=0,1 ADI=0\n', 'the Ascend variables for what Slurm allocated');
  const g = await s.run('xrun', ['--device', 'nv', '-g', '1', 'sh', '-c', show]);
  t.equal(g.code, 0, g.stderr);
  t.equal(g.stdout, `CUDA=${nvUuid(0)} ASC= ADI=unset\n`, 'the GPU as xlurm names it');
  const id = await s.run('xbatch', ['--device', 'asc', '-g', '1', '--wrap', show]);
  t.equal(id.code, 0, id.stderr);
  await s.waitState(Number(id.stdout), ['COMPLETED']);
  t.equal((await s.run('xqueue', [id.stdout.trim(), '--log'])).stdout, 'CUDA= ASC=0 ADI=0\n');
});

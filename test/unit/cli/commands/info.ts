import t from 'tap';
import { main } from '../../../../packages/cli/src/main';
import { capture, fakeDaemon, withHome } from '../fake-daemon';

const VIEWS = [
  { device: { kind: 'nvidia', id: 0, name: 'Mock NVIDIA', visible: 'GPU-test-uuid', npu: null, chip: null }, job: null, status: 'busy' },
  { device: { kind: 'nvidia', id: 1, name: 'Mock NVIDIA', visible: 'GPU-2', npu: null, chip: null }, job: null, status: 'unknown', monitoring_error: 'nvmlDeviceGetComputeRunningProcesses: timed out' },
];

t.test('xinfo table and --json', async (t) => {
  const d = await fakeDaemon(t, (c) => c.reply(VIEWS));
  let r = await withHome(d.home, () => capture(() => main('xinfo', [])));
  t.equal(r.stdout,
    'DEVICE       STATUS      JOB    NAME\n'
    + 'nv:0         busy        -      Mock NVIDIA\n'
    + 'nv:1         unknown     -      Mock NVIDIA\n'
    + '             error: nvmlDeviceGetComputeRunningProcesses: timed out\n');
  r = await withHome(d.home, () => capture(() => main('xlurm', ['info', '--json'])));
  t.equal(r.stdout, JSON.stringify(VIEWS, null, 2) + '\n');
  t.match(r.stdout, /^\[\n {2}\{\n {4}"device": \{\n {6}"kind": "nvidia",/);
  t.same(d.requests.map((q) => q.op), ['info', 'info']);
});

import t from 'tap';
import { main } from '../../../../packages/cli/src/main';
import { capture, fakeDaemon, withHome } from '../fake-daemon';

const VIEWS = [
  { device: { kind: 'nvidia', id: 0, name: 'Mock NVIDIA', visible: 'GPU-test-uuid', npu: null, chip: null }, job: null, status: 'busy' },
  { device: { kind: 'nvidia', id: 1, name: 'Mock NVIDIA', visible: 'GPU-2', npu: null, chip: null }, job: null, status: 'unknown', monitoring_error: 'nvmlDeviceGetComputeRunningProcesses: timed out' },
];

const TABLE = 'DEVICE       STATUS      JOB    NAME\n'
  + 'nv:0         busy        -      Mock NVIDIA\n'
  + 'nv:1         unknown     -      Mock NVIDIA\n'
  + '             error: nvmlDeviceGetComputeRunningProcesses: timed out\n';

t.test('xinfo table and --json', async (t) => {
  // The text table is followed by the daemon's device-isolation state from `status` (docs/behaviour.md,
  // Device isolation): `info`'s reply is the bare array of device views that --json prints, with no
  // room for a host-wide field, so the line costs a second request, made only for the text table.
  const why = 'off (disabled by [resources] device_isolation)';
  const d = await fakeDaemon(t, (c) => c.reply(c.req.op === 'status' ? { device_isolation: why } : VIEWS));
  let r = await withHome(d.home, () => capture(() => main('xinfo', [])));
  t.equal(r.stdout, TABLE);
  t.equal(r.stderr, `device isolation: ${why}\n`, 'isolation off: said on stderr; stdout stays the table');
  r = await withHome(d.home, () => capture(() => main('xlurm', ['info', '--json'])));
  t.equal(r.stdout, JSON.stringify(VIEWS, null, 2) + '\n');
  t.match(r.stdout, /^\[\n {2}\{\n {4}"device": \{\n {6}"kind": "nvidia",/);
  t.equal(r.stderr, '', 'not with --json');
  t.same(d.requests.map((q) => q.op), ['info', 'status', 'info'], '--json asks for the devices only');
});

t.test('xinfo says nothing more where isolation is on, or where there are no devices', async (t) => {
  let views: unknown[] = VIEWS;
  const d = await fakeDaemon(t, (c) => c.reply(c.req.op === 'status' ? { device_isolation: 'on' } : views));
  let r = await withHome(d.home, () => capture(() => main('xinfo', [])));
  t.same([r.stdout, r.stderr], [TABLE, '']);
  views = [];
  r = await withHome(d.home, () => capture(() => main('xinfo', [])));
  t.equal(r.stderr, '');
  t.same(d.requests.map((q) => q.op), ['info', 'status', 'info'], 'no devices: no status request');
});

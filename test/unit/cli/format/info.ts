import t from 'tap';
import type { DeviceView, PoolView } from '@xlurm/protocol';
import { INFO_HEADER, idRanges, infoTable, poolsText } from '../../../../packages/cli/src/format/info';

const view = (kind: DeviceView['device']['kind'], id: number, status: DeviceView['status'], job: number | null, name: string, err?: string): DeviceView => {
  const v: DeviceView = { device: { kind, id, name, visible: `v${id}`, npu: null, chip: null }, job, status, nodes: [] };
  if (err !== undefined) v.monitoring_error = err;
  return v;
};

t.test('xinfo table: fixed widths 12/11/6', async (t) => {
  t.equal(INFO_HEADER, 'DEVICE       STATUS      JOB    NAME');
  t.equal(infoTable([]), 'DEVICE       STATUS      JOB    NAME\n');
  t.equal(infoTable([
    view('nvidia', 0, 'idle', null, 'NVIDIA H100'),
    view('nvidia', 1, 'allocated', 123456, 'NVIDIA H100'),
    view('ascend', 12, 'busy', null, 'Ascend 910B'),
    view('hcu', 3, 'disabled', 7, 'HCU K100'),
    view('metax', 1234567890, 'unhealthy', 12345678, 'MetaX C500'),
  ]),
  'DEVICE       STATUS      JOB    NAME\n'
    + 'nv:0         idle        -      NVIDIA H100\n'
    + 'nv:1         allocated   123456 NVIDIA H100\n'
    + 'asc:12       busy        -      Ascend 910B\n'
    + 'hcu:3        disabled    7      HCU K100\n'
    + 'mx:1234567890 unhealthy   12345678 MetaX C500\n', 'longer values are not truncated');
});

t.test('unknown devices show their monitoring error below the row', async (t) => {
  t.equal(infoTable([view('nvidia', 0, 'unknown', null, 'NVIDIA H100', 'nvmlDeviceGetUUID: GPU is lost')]),
    'DEVICE       STATUS      JOB    NAME\n'
    + 'nv:0         unknown     -      NVIDIA H100\n'
    + '             error: nvmlDeviceGetUUID: GPU is lost\n');
  t.equal(infoTable([view('nvidia', 0, 'unknown', null, 'x')]), 'DEVICE       STATUS      JOB    NAME\nnv:0         unknown     -      x\n');
});

t.test('pools text: one row per pool, then its groups', async (t) => {
  process.env.TZ = 'UTC';
  const pool = (over: Partial<PoolView>): PoolView => ({
    kind: 'nvidia', label: 'nv', total: 8, free: 3, excluded: 1, unknown: 0,
    groups: [{ devices: [0, 1, 2, 3], free: [1, 2] }, { devices: [4, 5, 6, 7], free: [] }],
    largest_now: 2, largest_ever: 4, reservation: null, ...over,
  });
  t.equal(poolsText([
    pool({ reservation: { job: 9, devices: [2, 3], expected_start: Date.UTC(2024, 4, 1, 12) / 1000 } }),
    pool({ kind: 'ascend', label: 'asc', total: 2, free: 2, excluded: 0, groups: [], largest_now: 2, largest_ever: 2 }),
  ]),
  'POOL TOTAL FREE EXCLUDED UNKNOWN LARGEST-NOW LARGEST-EVER RESERVATION\n'
    + 'nv   8     3    1        0       2           4            job 9: nv:2,nv:3, expected start 2024-05-01 12:00:00 UTC+0\n'
    + 'asc  2     2    0        0       2           2            -\n'
    + 'nv groups: 0-3 (free: 1,2), 4-7 (free: -)\n'
    + 'asc groups: topology unknown\n');
  t.equal(poolsText([pool({ reservation: { job: 9, devices: [2], expected_start: null } })]).split('\n')[1],
    'nv   8     3    1        0       2           4            job 9: nv:2, expected start unknown');
});

t.test('id ranges', async (t) => {
  t.equal(idRanges([]), '-');
  t.equal(idRanges([5, 0, 1, 2, 7]), '0-2,5,7');
});

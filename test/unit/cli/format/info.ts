import t from 'tap';
import type { DeviceView } from '@xlurm/protocol';
import { INFO_HEADER, infoTable } from '../../../../packages/cli/src/format/info';

const view = (kind: DeviceView['device']['kind'], id: number, status: DeviceView['status'], job: number | null, name: string, err?: string): DeviceView => {
  const v: DeviceView = { device: { kind, id, name, visible: `v${id}`, npu: null, chip: null }, job, status };
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

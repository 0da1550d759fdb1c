// xinfo's table for a sliced card (docs/behaviour.md §25.2): status shared, its slices' jobs, one line of slices.
import t from 'tap';
import type { DeviceView } from '@xlurm/protocol';
import { infoTable } from '../../../../packages/cli/src/format/info';

const G = 1024 ** 3;
t.test('a shared card shows its slices; other rows are as before', async (t) => {
  const views: DeviceView[] = [
    { device: { kind: 'nvidia', id: 0, name: 'L4', visible: 'GPU-0', npu: null, chip: null }, job: null, status: 'shared', nodes: [],
      slices: [{ job: 3, mem: 8 * G, compute: 50 }, { job: 14, mem: 512 * 1024 ** 2, compute: 25 }] },
    { device: { kind: 'nvidia', id: 1, name: 'L4', visible: 'GPU-1', npu: null, chip: null }, job: 5, status: 'allocated', nodes: [] },
  ];
  t.equal(infoTable(views), [
    'DEVICE       STATUS      JOB    NAME',
    'nv:0         shared      3,14   L4',
    '             slices: job 3 8G 50%, job 14 512M 25%',
    'nv:1         allocated   5      L4',
    '',
  ].join('\n'));
});

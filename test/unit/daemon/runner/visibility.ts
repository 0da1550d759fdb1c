// Device visibility variables (runner/visibility.ts; docs/behaviour.md §6.4, §9.1): every
// variable in every job, -1 where no device of its vendor was allocated.
import t from 'tap';
import type { Device } from '@xlurm/protocol';
import { visibilityEnv } from '../../../../packages/daemon/src/runner/visibility';

const dev = (kind: Device['kind'], id: number, visible = `${kind}-${id}`): Device =>
  ({ kind, id, name: `${kind} ${id}`, visible, npu: null, chip: null });

const NONE = {
  CUDA_VISIBLE_DEVICES: '-1', ASCEND_RT_VISIBLE_DEVICES: '-1', MUSA_VISIBLE_DEVICES: '-1', MTHREADS_VISIBLE_DEVICES: '-1',
  MACA_VISIBLE_DEVICES: '-1', HIP_VISIBLE_DEVICES: '-1', ROCR_VISIBLE_DEVICES: '-1', ASCEND_DEVICE_ID: null,
};

t.test('a CPU-only job: every variable is -1, ASCEND_DEVICE_ID unset', async (t) => {
  t.same(visibilityEnv([]), NONE);
});

t.test('NVIDIA: CUDA_VISIBLE_DEVICES lists the UUIDs in allocation order', async (t) => {
  t.same(visibilityEnv([dev('nvidia', 2, 'GPU-b'), dev('nvidia', 0, 'GPU-a')]), { ...NONE, CUDA_VISIBLE_DEVICES: 'GPU-b,GPU-a' });
});

t.test('Ascend: logical ids, and ASCEND_DEVICE_ID 0', async (t) => {
  t.same(visibilityEnv([dev('ascend', 3, '3'), dev('ascend', 1, '1')]),
    { ...NONE, ASCEND_RT_VISIBLE_DEVICES: '3,1', ASCEND_DEVICE_ID: '0' });
});

t.test('Moore Threads: indices in MUSA_, UUIDs in MTHREADS_', async (t) => {
  t.same(visibilityEnv([dev('mthreads', 1, 'MT-1'), dev('mthreads', 4, 'MT-4')]),
    { ...NONE, MUSA_VISIBLE_DEVICES: '1,4', MTHREADS_VISIBLE_DEVICES: 'MT-1,MT-4' });
});

t.test('MetaX: indices in MACA_ and in CUDA_', async (t) => {
  t.same(visibilityEnv([dev('metax', 5), dev('metax', 2)]), { ...NONE, MACA_VISIBLE_DEVICES: '5,2', CUDA_VISIBLE_DEVICES: '5,2' });
});

t.test('PPU: UUIDs in CUDA_', async (t) => {
  t.same(visibilityEnv([dev('ppu', 0, 'PPU-x'), dev('ppu', 1, 'PPU-y')]), { ...NONE, CUDA_VISIBLE_DEVICES: 'PPU-x,PPU-y' });
});

t.test('HCU: ids in ROCR_, the renumbered 0..N-1 in HIP_ and CUDA_', async (t) => {
  t.same(visibilityEnv([dev('hcu', 6, '0xa'), dev('hcu', 3, '0xb')]),
    { ...NONE, ROCR_VISIBLE_DEVICES: '6,3', HIP_VISIBLE_DEVICES: '0,1', CUDA_VISIBLE_DEVICES: '0,1' });
});

t.test('CUDA_VISIBLE_DEVICES belongs to one vendor: MetaX, then PPU, then HCU, then NVIDIA', async (t) => {
  const nv = dev('nvidia', 0, 'GPU-a');
  t.equal(visibilityEnv([nv, dev('metax', 1), dev('ppu', 2, 'PPU-2'), dev('hcu', 3)]).CUDA_VISIBLE_DEVICES, '1');
  t.equal(visibilityEnv([nv, dev('ppu', 2, 'PPU-2'), dev('hcu', 3)]).CUDA_VISIBLE_DEVICES, 'PPU-2');
  t.equal(visibilityEnv([nv, dev('hcu', 3)]).CUDA_VISIBLE_DEVICES, '0');
  t.equal(visibilityEnv([nv]).CUDA_VISIBLE_DEVICES, 'GPU-a');
  const mixed = visibilityEnv([nv, dev('ascend', 1, '1'), dev('hcu', 3)]);
  t.same([mixed.ASCEND_RT_VISIBLE_DEVICES, mixed.ROCR_VISIBLE_DEVICES, mixed.ASCEND_DEVICE_ID], ['1', '3', '0'], 'the other vendors keep their own variables');
});

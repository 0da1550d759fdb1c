// Discovery for `--backend` (devices/discovery.ts; docs/behaviour.md §9.3): `none` opens
// nothing, a named vendor that fails stops start-up, `auto` logs why a vendor is skipped and
// goes on; an empty or inconsistent inventory is a failure and its library is released.
import t from 'tap';
import type { Device, DeviceKind } from '@xlurm/protocol';
import type { Backend, BackendFactory } from '../../../../packages/daemon/src/devices/backend';
import { DiscoveryError, FACTORIES, discover } from '../../../../packages/daemon/src/devices/discovery';

const dev = (kind: DeviceKind, id: number, visible = `${kind}-${id}`): Device => ({ kind, id, name: 'Fake', visible, npu: null, chip: null });

/** A backend over `devices`; `closed` counts close() calls. */
function backend(kind: DeviceKind, devices: Device[]): Backend & { closed: number } {
  return {
    kind, devices, closed: 0,
    probe: async (ids) => new Map(ids.map((id) => [id, { status: 'idle' as const }])),
    close() { this.closed++; },
  };
}

/** Install these factories for the test (and nothing else), restoring the table after it. */
function withFactories(t: { teardown(fn: () => void): void }, f: Partial<Record<DeviceKind, BackendFactory>>): void {
  const saved = { ...FACTORIES };
  for (const k of Object.keys(FACTORIES) as DeviceKind[]) delete FACTORIES[k];
  Object.assign(FACTORIES, f);
  t.teardown(() => {
    for (const k of Object.keys(FACTORIES) as DeviceKind[]) delete FACTORIES[k];
    Object.assign(FACTORIES, saved);
  });
}

t.test('none: no vendor is even asked', async (t) => {
  let asked = 0;
  withFactories(t, { nvidia: () => { asked++; return backend('nvidia', [dev('nvidia', 0)]); } });
  t.same(discover('none', {}, () => undefined), []);
  t.equal(asked, 0);
});

t.test('a named vendor: its backend, with the environment and log handed to the factory', async (t) => {
  const b = backend('ascend', [dev('ascend', 0), dev('ascend', 1)]);
  let got: { env: NodeJS.ProcessEnv; log: (m: string) => void } | undefined;
  withFactories(t, { ascend: (opts) => { got = opts; return b; }, nvidia: () => { throw new Error('not asked'); } });
  const env = { XLURM_DCMI_LIBRARY: '/x/libdcmi.so' };
  const log = () => undefined;
  const found = discover('ascend', env, log);
  t.equal(found.length, 1);
  t.equal(found[0], b);
  t.equal(got!.env, env);
  t.equal(got!.log, log);
});

t.test('a named vendor that fails stops start-up with the reason', async (t) => {
  withFactories(t, { nvidia: () => { throw new Error('cannot load library: libnvidia-ml.so.1: cannot open shared object file'); } });
  const logs: string[] = [];
  t.throws(() => discover('nvidia', {}, (m) => logs.push(m)),
    new DiscoveryError('nv discovery: cannot load library: libnvidia-ml.so.1: cannot open shared object file'));
  let thrown: unknown;
  try { discover('nvidia', {}, () => undefined); } catch (e) { thrown = e; }
  t.ok(thrown instanceof DiscoveryError, 'a DiscoveryError: start-up reports it and exits');
  t.throws(() => discover('metax', {}, () => undefined), { message: 'mx discovery: metax backend is not available in this build' });
  t.same(logs, [], 'nothing logged: the error is the message');
});

t.test('no devices, or duplicate ids or visible names: a failure, and the library is released', async (t) => {
  const empty = backend('nvidia', []);
  const dupId = backend('mthreads', [dev('mthreads', 0, 'a'), dev('mthreads', 0, 'b')]);
  const dupVisible = backend('metax', [dev('metax', 0, 'same'), dev('metax', 1, 'same')]);
  withFactories(t, { nvidia: () => empty, mthreads: () => dupId, metax: () => dupVisible });
  t.throws(() => discover('nvidia', {}, () => undefined), { message: 'nv discovery: no compute devices discovered' });
  t.throws(() => discover('mthreads', {}, () => undefined), { message: 'mtt discovery: duplicate device IDs in inventory' });
  t.throws(() => discover('metax', {}, () => undefined), { message: 'mx discovery: duplicate device IDs in inventory' });
  t.same([empty.closed, dupId.closed, dupVisible.closed], [1, 1, 1]);
});

t.test('auto: every vendor in priority order; failures are logged and skipped', async (t) => {
  const asked: DeviceKind[] = [];
  const ok = (kind: DeviceKind) => () => { asked.push(kind); return backend(kind, [dev(kind, 0)]); };
  withFactories(t, {
    hcu: ok('hcu'),
    nvidia: ok('nvidia'),
    ascend: () => { asked.push('ascend'); throw new Error('dcmi_init: device does not exist (-8008)'); },
    metax: () => { asked.push('metax'); return backend('metax', []); },
    ppu: ok('ppu'),
  });
  const logs: string[] = [];
  const found = discover('auto', {}, (m) => logs.push(m));
  t.same(found.map((b) => b.kind), ['nvidia', 'ppu', 'hcu']);
  t.same(asked, ['nvidia', 'ascend', 'metax', 'ppu', 'hcu'], 'mthreads has no factory: not asked, only logged');
  t.same(logs, [
    'asc discovery: dcmi_init: device does not exist (-8008)',
    'mtt discovery: mthreads backend is not available in this build',
    'mx discovery: no compute devices discovered',
  ]);
});

t.test('auto with nothing found is no error: a CPU-only daemon', async (t) => {
  withFactories(t, {});
  const logs: string[] = [];
  t.same(discover('auto', {}, (m) => logs.push(m)), []);
  t.equal(logs.length, 6, 'one line per vendor');
});

// Fair-share bookkeeping (docs/behaviour.md §22.2): charges as jobs run, the decay, the store across restarts.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import { UsageBook, chargeRate, decayFactor, type ChargedJob } from '../../../../packages/daemon/src/accounting/usage';
import { Store } from '../../../../packages/daemon/src/store/store';

const DAY = 86400;
const job = (id: number, uid: number, devices: number, started: number, cpus?: number): ChargedJob =>
  ({ id, owner: { uid, name: `u${uid}` }, devices: Array.from({ length: devices }), spec: cpus ? { cpus } : {}, started_at: started });

t.test('the decay halves usage every half-life', async (t) => {
  t.equal(decayFactor(0, DAY), 1);
  t.equal(decayFactor(DAY, DAY), 0.5);
  t.equal(decayFactor(3 * DAY, DAY), 0.125);
  t.equal(decayFactor(-5, DAY), 1, 'a clock set back decays nothing');
});

t.test('a device-second per device; a CPU-only job its CPUs (at least one) over the host\'s', async (t) => {
  t.equal(chargeRate(job(1, 1, 2, 0), 64), 2);
  t.equal(chargeRate(job(1, 1, 0, 0), 64), 1 / 64);
  t.equal(chargeRate(job(1, 1, 0, 0, 16), 64), 0.25);
});

t.test('charged as jobs run, decayed, ranked; every row written with its time', async (t) => {
  const b = new UsageBook(undefined, 8, DAY);
  b.load(1000);
  const a = job(1, 1000, 2, 1000);
  const c = job(2, 1001, 0, 1000, 8);
  b.accrue([a, c], 1100);
  t.same(b.shares(1100).map((r) => [r.user, r.usage, r.decayed, r.rank]), [['u1001', 100, 100, 1], ['u1000', 200, 200, 2]]);
  b.accrue([a, c], 1100 + DAY);
  const s = b.shares(1100 + DAY);
  t.equal(s[1]!.usage, 200 + 2 * DAY, 'raw usage grows with every second');
  t.equal(s[1]!.decayed, 100 + 2 * DAY, 'the old part halved; the new part added');
  b.finish(a, 1200 + DAY, [a, c]);
  t.equal(Math.round(b.forOrder().get('u1000')!), Math.round(b.shares(1200 + DAY)[1]!.decayed), 'the order reads the same values');
  b.accrue([c], 1300 + DAY);
  t.equal(b.shares(1300 + DAY).find((r) => r.uid === 1000)!.usage, 200 + 2 * DAY + 200, 'an ended job is charged no more');
});

t.test('usage survives a restart, and a job that runs across it is charged once', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-usage-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'x.db');
  let store = new Store(file);
  let b = new UsageBook(store, 4, DAY);
  b.load(0);
  const a = job(7, 1000, 1, 0);
  b.persist([a], 100);
  store.commit();
  store.close();
  store = new Store(file);
  b = new UsageBook(store, 4, DAY);
  b.load(100 + DAY);
  t.same(b.shares(100 + DAY).map((r) => [r.user, r.uid, r.usage, r.decayed]), [['u1000', 1000, 100, 50]], 'raw kept; decayed over the time it was down');
  b.accrue([a], 200 + DAY);
  t.equal(b.shares(200 + DAY)[0]!.usage, 100 + DAY + 100, 'charged from the last write, not from its start again');
  store.close();
});

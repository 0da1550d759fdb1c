// A slice's weight in fair-share usage (docs/behaviour.md §25.4): its share of the card's memory.
import t from 'tap';
import { chargeRate } from '../../../../packages/daemon/src/accounting/usage';
import { deviceRate, setCardMemory } from '../../../../packages/daemon/src/sharing/weight';

const G = 1024 ** 3;
t.test('a slice is charged its share of the card memory; unknown memory charges the whole device', async (t) => {
  setCardMemory((d) => ((d as { id: number }).id === 9 ? undefined : 16 * G));
  t.teardown(() => setCardMemory(() => undefined));
  t.equal(deviceRate([{ id: 0 }, { id: 1 }], null), 2, 'whole devices');
  t.equal(deviceRate([{ id: 0 }], { mem: 4 * G }), 0.25);
  t.equal(deviceRate([{ id: 0 }, { id: 9 }], { mem: 8 * G }), 1.5, 'a card whose memory is unknown counts whole');
  t.equal(deviceRate([{ id: 0 }], { mem: 32 * G }), 1, 'never more than the device');
  const job = { id: 1, owner: { uid: 1, name: 'a' }, devices: [{ id: 0 }], spec: { share: { mem: 8 * G } }, started_at: 0 };
  t.equal(chargeRate(job, 64), 0.5, 'fair share charges the slice by its weight');
});

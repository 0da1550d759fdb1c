// Packing slices of cards (docs/behaviour.md §25.2): room, compute sums, best fit, never sliced and whole at once.
import t from 'tap';
import type { Device } from '@xlurm/protocol';
import { deviceKey, type DeviceBlock } from '../../../../packages/daemon/src/scheduler/place';
import { schedule, type PendingJob } from '../../../../packages/daemon/src/scheduler/schedule';
import { SliceBook, roomOf, type CardRoom } from '../../../../packages/daemon/src/scheduler/sharing';

const G = 1024 ** 3;
const dev = (kind: Device['kind'], id: number): Device => ({ kind, id, name: `${kind} ${id}`, visible: `${kind}-${id}`, npu: id, chip: 0 });
const gpus = [dev('nvidia', 0), dev('nvidia', 1), dev('nvidia', 2)];
const card = (over: Partial<CardRoom> = {}): CardRoom => ({ total: 16 * G, free: 16 * G, sliced: 0, compute: 0, slices: 0, ...over });
const slice = (id: number, memG: number, compute = 100, more: Partial<PendingJob> = {}): PendingJob =>
  ({ id, count: 1, kind: null, timeLimit: null, share: { mem: memG * G, compute }, ...more });
const whole = (id: number, count = 1): PendingJob => ({ id, count, kind: null, timeLimit: null });

t.test('room is the least of the reported free memory and the total less the slices', async (t) => {
  t.equal(roomOf(card()), 16 * G);
  t.equal(roomOf(card({ sliced: 6 * G })), 10 * G);
  t.equal(roomOf(card({ free: 3 * G })), 3 * G, 'memory others use counts');
  t.equal(roomOf(card({ free: 12 * G, sliced: 6 * G })), 10 * G);
});

t.test('two slices packed on one card and a third on the next (best fit)', async (t) => {
  const slices = new Map(gpus.map((d) => [deviceKey(d), card()]));
  const p = schedule({ pending: [slice(1, 6, 40), slice(2, 6, 40), slice(3, 6, 40)], running: 0, maxRunning: 10, inventory: gpus, free: new Set(gpus.map(deviceKey)), slices });
  t.same(p.decisions.map((d) => [d.id, d.devices.map(deviceKey)]), [[1, ['nvidia:0']], [2, ['nvidia:0']], [3, ['nvidia:1']]]);
});

t.test('best fit prefers the card left with the least room; compute stays within 100', async (t) => {
  const book = new SliceBook(new Map([
    ['nvidia:0', card({ sliced: 4 * G, compute: 20, slices: 1 })],
    ['nvidia:1', card({ sliced: 10 * G, compute: 60, slices: 1 })],
  ]));
  t.same(book.place(slice(1, 4, 30), gpus)!.map(deviceKey), ['nvidia:1'], 'the fuller card');
  t.equal(book.place(slice(9, 1), gpus), null, 'compute 100 (the default) fits no card with a slice on it');
  t.same(book.place(slice(2, 1, 20), gpus)!.map(deviceKey), ['nvidia:0'], 'nvidia:1 at 90% cannot take 20% more');
  t.equal(book.place(slice(3, 20), gpus), null, 'no card has 20G');
  t.equal(book.card('nvidia:1')!.slices, 2);
});

t.test('a multi-device slice request gets a slice of each of N cards; -i and -x are kept', async (t) => {
  const cards = () => new Map(gpus.map((d) => [deviceKey(d), card()]));
  t.same(new SliceBook(cards()).place(slice(1, 4, 50, { count: 2 }), gpus)!.map(deviceKey), ['nvidia:0', 'nvidia:1']);
  t.same(new SliceBook(cards()).place(slice(1, 4, 50, { count: 1, deviceIds: [2] }), gpus)!.map(deviceKey), ['nvidia:2']);
  t.same(new SliceBook(cards()).place(slice(1, 4, 50, { excludeIds: [0] }), gpus)!.map(deviceKey), ['nvidia:1']);
});

t.test('a whole-device job waits while a card is sliced, and a slice never lands on a card taken whole', async (t) => {
  // nvidia:0 sliced (not free for whole jobs), nvidia:1 free, nvidia:2 held whole (no slice room offered).
  const slices = new Map([['nvidia:0', card({ sliced: 4 * G, compute: 50, slices: 1 })], ['nvidia:1', card()]]);
  const blocked = new Map<string, DeviceBlock>([['nvidia:0', { state: 'shared', jobs: [7] }], ['nvidia:2', { state: 'held', job: 8 }]]);
  const p = schedule({ pending: [whole(1, 2), whole(2), slice(3, 4, 50)], running: 2, maxRunning: 10, inventory: gpus, free: new Set(['nvidia:1']), blocked, slices });
  // The whole job 2 takes nvidia:1; the slice goes beside job 7 on nvidia:0.
  t.same(p.decisions.map((d) => [d.id, d.devices.map(deviceKey)]), [[2, ['nvidia:1']], [3, ['nvidia:0']]]);
  const r = p.reasonOf(whole(1, 2))!;
  t.equal(r.code, 'Resources');
  t.match(r.message, 'nv:0 shared by jobs 7,3 (slices)', 'its own slices and the one this pass placed');
  t.match(r.message, /nv:2 held by job 8/);
});

t.test('a slice waits while the card is held whole, with a reason that says so', async (t) => {
  const blocked = new Map<string, DeviceBlock>([['nvidia:0', { state: 'held', job: 5, owner: 'alice' }]]);
  const one = [gpus[0]!];
  const p = schedule({ pending: [slice(1, 4)], running: 1, maxRunning: 10, inventory: one, free: new Set(), blocked, slices: new Map() });
  t.same(p.decisions, []);
  const r = p.reasonOf(slice(1, 4))!;
  t.equal(r.code, 'Resources');
  t.match(r.message, 'nv:0 held by job 5 (alice)');
});

t.test('free memory taken by a foreign process blocks a slice; its reason names the room', async (t) => {
  const one = [gpus[0]!];
  const slices = new Map([['nvidia:0', card({ free: 3 * G })]]);
  const p = schedule({ pending: [slice(1, 4)], running: 0, maxRunning: 10, inventory: one, free: new Set(), slices });
  t.same(p.decisions, []);
  const r = p.reasonOf(slice(1, 4))!;
  t.equal(r.code, 'Resources');
  t.match(r.message, /^needs a slice of 4G, 100% on 1 nv device: nv:0 has 3G, 100% left \(memory in use by processes not started by xlurm counts\)$/);
  const fits = schedule({ pending: [slice(1, 2)], running: 0, maxRunning: 10, inventory: one, free: new Set(), slices });
  t.same(fits.decisions.map((d) => d.id), [1], 'a smaller slice fits the room a foreign process leaves');
});

t.test('without sharing no slice starts; a pass with slices does not stop early when no whole device is free', async (t) => {
  const p = schedule({ pending: [slice(1, 1)], running: 0, maxRunning: 10, inventory: gpus, free: new Set(gpus.map(deviceKey)) });
  t.same(p.decisions, []);
  t.same(p.reasonOf(slice(1, 1)), { code: 'DevicesUnavailable', message: 'sharing is not enabled on this host' }, 'sharing turned off by a reload');
  const slices = new Map([['nvidia:0', card({ sliced: 4 * G, compute: 10, slices: 1 })]]);
  const q = schedule({ pending: [whole(1), whole(2), slice(3, 1, 50)], running: 1, maxRunning: 10, inventory: gpus, free: new Set(), slices });
  t.same(q.decisions.map((d) => d.id), [3]);
});

t.test('placing 1,000 pending slice requests over 8 cards stays well within a pass budget', async (t) => {
  const cards8 = Array.from({ length: 8 }, (_, i) => dev('nvidia', i));
  const slices = new Map(cards8.map((d) => [deviceKey(d), card({ total: 80 * G, free: 80 * G })]));
  const pending = Array.from({ length: 1000 }, (_, i) => slice(i + 1, 1 + (i % 8), 10 + (i % 5) * 10));
  const p = schedule({ pending, running: 0, maxRunning: 1000, inventory: cards8, free: new Set(cards8.map(deviceKey)), slices });
  t.ok(p.decisions.length > 8);
  // Never over-committed: per card, memory ≤ total and compute ≤ 100.
  const mem = new Map<string, number>(), cpu = new Map<string, number>();
  for (const d of p.decisions) {
    const j = pending[d.id - 1]!;
    const k = deviceKey(d.devices[0]!);
    mem.set(k, (mem.get(k) ?? 0) + j.share!.mem);
    cpu.set(k, (cpu.get(k) ?? 0) + j.share!.compute);
  }
  for (const k of mem.keys()) { t.ok(mem.get(k)! <= 80 * G); t.ok(cpu.get(k)! <= 100); }
});

// Host CPUs and memory in the admit step (docs/behaviour.md §24.2): the sums within
// [resources] cpus/memory and MemAvailable beyond min_available, each shortage worded.
import t from 'tap';
import { explainHost, fitsHost, takeHost, type HostRoom } from '../../../../packages/daemon/src/scheduler/host-fit';
import { schedule, type PendingJob } from '../../../../packages/daemon/src/scheduler/schedule';
import { hostRoom } from '../../../../packages/daemon/src/resources/room';

const G = 1024 ** 3;
const job = (id: number, cpus: number, mem: number): PendingJob => ({ id, count: 0, kind: null, timeLimit: null, cpus, mem });
const room = (o: Partial<HostRoom> = {}): HostRoom => ({ cpus: 16, usedCpus: 0, memory: 20 * G, usedMem: 0, memAvailable: 100 * G, minAvailable: 8 * G, ...o });

t.test('fits while the sums stay within the host and MemAvailable keeps the floor', async (t) => {
  t.ok(fitsHost(job(1, 16, 20 * G), room()));
  t.notOk(fitsHost(job(1, 4, 0), room({ usedCpus: 14 })));
  t.same(explainHost(job(1, 4, 0), room({ usedCpus: 14 })), { code: 'Resources', message: 'needs 4 CPUs: 2 of 16 free' });
  t.same(explainHost(job(1, 0, 16 * G), room({ usedMem: 16 * G })), { code: 'Resources', message: 'needs 16G memory: 4G of 20G free' });
  t.same(explainHost(job(1, 0, 16 * G), room({ memAvailable: 17.5 * G })), { code: 'Resources', message: 'needs 16G memory: 9.5G available beyond the 8G floor' });
  t.ok(fitsHost(job(1, 0, 0), room({ usedCpus: 16, usedMem: 20 * G, memAvailable: 0 })), 'a job that asks for nothing always fits');
  t.ok(fitsHost(job(1, 0, 1 * G), room({ memAvailable: null })), 'MemAvailable unknown: only the sums');
  t.equal(explainHost(job(1, 1, 0), room()), null);
});

t.test('a pass counts its own starts', async (t) => {
  const h = room();
  takeHost(job(1, 4, 8 * G), h);
  t.same([h.usedCpus, h.usedMem, h.memAvailable], [4, 8 * G, 92 * G]);
  const pass = schedule({
    pending: [job(1, 0, 12 * G), job(2, 0, 12 * G), job(3, 2, 0)], running: 0, maxRunning: 10, inventory: [], free: new Set(),
    host: room(),
  });
  t.same(pass.decisions.map((d) => d.id), [1, 3], 'the second 12G job would pass the 20G the host gives jobs');
  t.same(pass.reasonOf(job(2, 0, 12 * G)), { code: 'Resources', message: 'needs 12G memory: 8G of 20G free' });
});

t.test('MemAvailable is read lazily: only when a job asking for memory is considered, once per pass', async (t) => {
  const settings = { cpuList: [0, 1, 2, 3], memory: 20 * G, minAvailable: 8 * G } as Parameters<typeof hostRoom>[0];
  let reads = 0;
  const meminfo = () => { reads++; return { total: 32 * G, available: 17.5 * G }; };
  const noMem = schedule({ pending: [job(1, 1, 0), job(2, 1, 0)], running: 0, maxRunning: 10, inventory: [], free: new Set(), host: hostRoom(settings, [], meminfo) });
  t.same(noMem.decisions.map((d) => d.id), [1, 2]);
  t.equal(noMem.reasonOf(job(3, 1, 0)), null);
  t.equal(reads, 0, 'no job asks for memory: /proc/meminfo is not read');
  const withMem = schedule({
    pending: [job(1, 0, 1 * G), job(2, 0, 16 * G), job(3, 0, 2 * G)], running: 0, maxRunning: 10, inventory: [], free: new Set(),
    host: hostRoom(settings, [], meminfo),
  });
  t.equal(reads, 1, 'read once for the whole pass');
  t.same(withMem.decisions.map((d) => d.id), [1, 3], 'a start takes its memory off what was read');
  t.same(withMem.reasonOf(job(2, 0, 16 * G)), { code: 'Resources', message: 'needs 16G memory: 6.5G available beyond the 8G floor' }, 'the reason words the value read, less this pass\'s starts');
  t.equal(reads, 1, 'the reasons read nothing more');
  const late = schedule({ pending: [job(1, 1, 0)], running: 0, maxRunning: 10, inventory: [], free: new Set(), host: hostRoom(settings, [], meminfo) });
  t.same(late.reasonOf(job(5, 0, 16 * G)), { code: 'Resources', message: 'needs 16G memory: 9.5G available beyond the 8G floor' }, 'a job the pass never reached still gets the right reason');
  t.equal(reads, 2);
  const unknown = schedule({ pending: [job(1, 0, 1 * G)], running: 0, maxRunning: 10, inventory: [], free: new Set(), host: hostRoom(settings, [], () => null) });
  t.same(unknown.decisions.map((d) => d.id), [1], 'MemAvailable unreadable: only the sums');
});

import t from 'tap';
import {
  BACKEND_NAMES, JOB_STATES, KINDS, KIND_LABEL, KIND_NAMES, TERMINAL_STATES, isTerminal, parseBackend, parseKind,
} from '../../../packages/protocol/src/kinds';

t.test('vendors in allocation priority order, each with its label', async (t) => {
  t.same(KINDS, ['nvidia', 'ascend', 'mthreads', 'metax', 'ppu', 'hcu']);
  t.same(KINDS.map((k) => KIND_LABEL[k]), ['nv', 'asc', 'mtt', 'mx', 'ppu', 'hcu']);
});

t.test('--device names: full names and labels; nothing else', async (t) => {
  for (const k of KINDS) {
    t.equal(parseKind(k), k, k);
    t.equal(parseKind(KIND_LABEL[k]), k, KIND_LABEL[k]);
  }
  t.same([...KIND_NAMES].sort(), [...new Set([...KINDS, ...Object.values(KIND_LABEL)])].sort(), 'every name accepted, and only those');
  for (const bad of ['', 'NV', 'gpu', 'auto', 'none', 'toString', '__proto__', 'constructor', 'hasOwnProperty']) {
    t.equal(parseKind(bad), undefined, `${JSON.stringify(bad)} is no kind`);
  }
});

t.test('--backend names: every kind name, auto and none; canonical names', async (t) => {
  t.same(BACKEND_NAMES, ['auto', ...KIND_NAMES, 'none']);
  t.equal(parseBackend('auto'), 'auto');
  t.equal(parseBackend('none'), 'none');
  t.equal(parseBackend('nv'), 'nvidia');
  t.equal(parseBackend('mx'), 'metax');
  t.equal(parseBackend('hcu'), 'hcu');
  t.equal(parseBackend('cuda'), undefined);
  t.equal(parseBackend('__proto__'), undefined);
});

t.test('job states in the order of a job\'s life; terminal ones', async (t) => {
  t.same(JOB_STATES, ['PENDING', 'RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT', 'EXPIRED', 'OUT_OF_MEMORY']);
  t.same(TERMINAL_STATES, ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT', 'EXPIRED', 'OUT_OF_MEMORY']);
  for (const s of JOB_STATES) t.equal(isTerminal(s), (TERMINAL_STATES as readonly string[]).includes(s), s);
});

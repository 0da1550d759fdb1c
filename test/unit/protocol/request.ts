// The one request check the CLI and the daemon share: messages, codes and their order.
import t from 'tap';
import type { Submission } from '@xlurm/protocol';
import { checkRequest, checkTimes, requestOf, type JobRequest } from '../../../packages/protocol/src/request';
import { latestTimeSeconds } from '../../../packages/protocol/src/begin-time';

const req = (r: Partial<JobRequest> = {}): JobRequest => ({ count: 1, kind: null, timeLimit: null, ...r });
const invalid = (message: string) => ({ code: 'INVALID_ARGUMENT', message });

t.test('a submission\'s request', async (t) => {
  const s: Submission = { command: ['true'], cwd: '/', env: {}, name: 'x', count: 2 };
  t.same(requestOf(s), { count: 2, kind: null, timeLimit: null }, 'absent keys: no ids, any vendor, no limit');
  t.same(requestOf({ ...s, device_ids: [3, 1], kind: 'ascend', time_limit: 60 }), { count: 2, kind: 'ascend', timeLimit: 60, deviceIds: [3, 1] });
  t.same(requestOf({ ...s, exclude_ids: [0] }), { count: 2, kind: null, timeLimit: null, excludeIds: [0] });
  t.same(requestOf({ ...s, exclude_ids: [] }).excludeIds, [], 'an empty list stays present (and is checked as given)');
});

t.test('valid requests pass', async (t) => {
  t.equal(checkRequest(req()), null);
  t.equal(checkRequest(req({ count: 0 })), null);
  t.equal(checkRequest(req({ count: 2, deviceIds: [1, 0] })), null);
  t.equal(checkRequest(req({ count: 0, deviceIds: [] })), null);
  t.equal(checkRequest(req({ excludeIds: [0, 1], timeLimit: 1 })), null);
});

t.test('each refusal, with the words both sides print', async (t) => {
  t.same(checkRequest(req({ timeLimit: 0 })), invalid('time-limit must be positive'));
  t.same(checkRequest(req({ deviceIds: [0], excludeIds: [1] })), invalid('-x cannot be combined with -i'));
  t.same(checkRequest(req({ deviceIds: [0], excludeIds: [] })), invalid('-x cannot be combined with -i'), 'even an empty -x list');
  t.same(checkRequest(req({ count: 2, deviceIds: [1, 1] })), invalid('device IDs must not contain duplicates'));
  t.same(checkRequest(req({ count: 3, deviceIds: [1, 2] })), invalid('-g count must match the number of -i device IDs'));
});

t.test('the first failing check wins, in the documented order', async (t) => {
  t.same(checkRequest(req({ timeLimit: 0, deviceIds: [1, 1], excludeIds: [2] })), invalid('time-limit must be positive'));
  t.same(checkRequest(req({ deviceIds: [1, 1], excludeIds: [2] })), invalid('-x cannot be combined with -i'));
  t.same(checkRequest(req({ count: 5, deviceIds: [1, 1] })), invalid('device IDs must not contain duplicates'));
});

// docs/behaviour.md §28.4: what the daemon can represent, one check for the CLI and the daemon.
t.test('checkTimes: durations up to 2^32-1 s inclusive, times up to 9999-12-31 local time', async (t) => {
  const latest = Math.floor(new Date(9999, 11, 31, 23, 59, 59).getTime() / 1000);
  t.equal(latestTimeSeconds(), latest);
  t.equal(checkTimes({ time_limit: 4294967295, queue_timeout: 4294967295, begin_at: latest }), null, 'the bounds themselves pass');
  t.equal(checkTimes({ time_limit: null, begin_at: null }), null);
  t.same(checkTimes({ time_limit: 4294967296 }), { code: 'INVALID_REQUEST', message: "invalid duration '4294967296': too long (at most 4294967295 seconds)" });
  t.same(checkTimes({ queue_timeout: 2 ** 53 }, { queue_timeout: '104249991374d' }),
    { code: 'INVALID_REQUEST', message: "invalid duration '104249991374d': too long (at most 4294967295 seconds)" }, 'the text as typed');
  t.same(checkTimes({ begin_at: latest + 1 }, { begin_at: 'now+3000000d' }), { code: 'INVALID_REQUEST', message: "invalid time 'now+3000000d': too far in the future" });
  t.same(checkTimes({ begin_at: Number.MAX_SAFE_INTEGER }), { code: 'INVALID_REQUEST', message: `invalid time '${Number.MAX_SAFE_INTEGER}': too far in the future` });
});

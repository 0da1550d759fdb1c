import t from 'tap';
import { DURATION_PATTERN, U32_MAX, durationSeconds } from '../../../packages/protocol/src/duration';

t.test('seconds, or an integer with one unit', async (t) => {
  t.equal(durationSeconds('90'), 90);
  t.equal(durationSeconds('90s'), 90);
  t.equal(durationSeconds('15m'), 900);
  t.equal(durationSeconds('2h'), 7200);
  t.equal(durationSeconds('7d'), 7 * 86400);
  t.equal(durationSeconds('0s'), 0, 'zero is a duration; callers that need a positive limit say so');
});

t.test('malformed text is null', async (t) => {
  for (const bad of ['', 'd', '7 d', '7D', '1.5h', '-1s', '7w', '7dd', ' 7d', '1e3']) t.equal(durationSeconds(bad), null, JSON.stringify(bad));
  t.equal(durationSeconds('9'.repeat(20) + 'd'), null, 'beyond a safe integer');
});

t.test('a required unit', async (t) => {
  t.equal(durationSeconds('90', { unitRequired: true }), null);
  t.equal(durationSeconds('90m', { unitRequired: true }), 5400);
});

t.test('the schema pattern is the same grammar', async (t) => {
  const re = new RegExp(DURATION_PATTERN);
  for (const s of ['90', '90s', '7d', '7x', '1.5h', '']) t.equal(re.test(s), durationSeconds(s) !== null, s);
  t.equal(U32_MAX, 2 ** 32 - 1);
});

import t from 'tap';
import { DURATION_PATTERN, U32_MAX, durationError, durationSeconds, formatDurationSecs, timeLimitSeconds } from '../../../packages/protocol/src/duration';

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

t.test('-t: the simple grammar and Slurm clock forms', async (t) => {
  t.equal(timeLimitSeconds('90'), 90);
  t.equal(timeLimitSeconds('2h'), 7200);
  t.equal(timeLimitSeconds('05:30'), 330, 'MM:SS');
  t.equal(timeLimitSeconds('90:00'), 5400, 'minutes beyond an hour, as Slurm writes them');
  t.equal(timeLimitSeconds('1:02:03'), 3723, 'HH:MM:SS');
  t.equal(timeLimitSeconds('2-03:04:05'), 2 * 86400 + 3 * 3600 + 4 * 60 + 5, 'D-HH:MM:SS');
  t.equal(timeLimitSeconds('0:00'), 0, 'zero parses; the request check refuses it');
  for (const bad of ['', '1:60', '1:00:60', '1:60:00', '1-24:00:00', '1-02:03', ':30', '1:2:3:4', '-1', '1.5h', '2x', '1-', '1:']) {
    t.equal(timeLimitSeconds(bad), null, JSON.stringify(bad));
  }
  t.equal(durationError('2x'), "invalid duration '2x': use seconds, or a number with s, m, h or d");
});

t.test('durations in messages use the largest exact unit', async (t) => {
  t.same([86400, 172800, 7200, 90, 120, 1, 0, 90061].map(formatDurationSecs), ['1d', '2d', '2h', '90s', '2m', '1s', '0s', '90061s']);
});

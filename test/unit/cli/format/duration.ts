import t from 'tap';
import { formatDuration, since } from '../../../../packages/cli/src/format/duration';

t.test('durations: HH:MM:SS, D-HH:MM:SS from one day', async (t) => {
  const cases: Array<[number, string]> = [
    [0, '00:00:00'], [59, '00:00:59'], [60, '00:01:00'], [3661, '01:01:01'], [86399, '23:59:59'],
    [86400, '1-00:00:00'], [183845, '2-03:04:05'], [100 * 86400 + 5, '100-00:00:05'], [-5, '00:00:00'], [12.9, '00:00:12'],
  ];
  for (const [secs, text] of cases) t.equal(formatDuration(secs), text, String(secs));
});

t.test('subtractions saturate at 0', async (t) => {
  t.equal(since(10, 3), 7);
  t.equal(since(3, 10), 0);
});

// cli/since.ts: `xlurm stats --since DATE` (docs/behaviour.md §26.1): local dates, now-DURATION.
import t from 'tap';
import { parseSince } from '../../../packages/cli/src/since';

t.test('forms', async (t) => {
  const now = Date.UTC(2026, 11, 1, 12, 0, 0);
  t.equal(parseSince('2026-11-01'), new Date(2026, 10, 1).getTime() / 1000, 'midnight, local time');
  t.equal(parseSince('2026-11-01T08:30'), new Date(2026, 10, 1, 8, 30).getTime() / 1000);
  t.equal(parseSince('2026-11-01T08:30:15'), new Date(2026, 10, 1, 8, 30, 15).getTime() / 1000);
  t.equal(parseSince('now-36h', now), now / 1000 - 36 * 3600);
  t.equal(parseSince('now-90', now), now / 1000 - 90);
  for (const bad of ['yesterday', '2026-02-30', '2026-13-01', '2026-11-01T25:00', 'now-', 'now-1w', '26-11-01', '']) {
    t.equal(parseSince(bad, now), null, bad);
  }
});

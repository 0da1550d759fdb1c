import t from 'tap';
import { beginTimeError, beginTimeSeconds } from '../../../packages/protocol/src/begin-time';

// A fixed "now" in the local zone: 2026-03-10 12:30:15.
const now = new Date(2026, 2, 10, 12, 30, 15).getTime();
const secs = (d: Date) => Math.floor(d.getTime() / 1000);

t.test('now and now+DURATION', async (t) => {
  t.equal(beginTimeSeconds('now', now), Math.floor(now / 1000));
  t.equal(beginTimeSeconds('now+90', now), Math.floor(now / 1000) + 90);
  t.equal(beginTimeSeconds('now+2h', now), Math.floor(now / 1000) + 7200);
  t.equal(beginTimeSeconds('now+1d', now), Math.floor(now / 1000) + 86400);
});

t.test('HH:MM is today, or tomorrow once past', async (t) => {
  t.equal(beginTimeSeconds('14:00', now), secs(new Date(2026, 2, 10, 14, 0, 0)));
  t.equal(beginTimeSeconds('09:05', now), secs(new Date(2026, 2, 11, 9, 5, 0)));
  t.equal(beginTimeSeconds('12:30', now), secs(new Date(2026, 2, 11, 12, 30, 0)), 'this minute has begun: tomorrow');
});

t.test('a local date and time', async (t) => {
  t.equal(beginTimeSeconds('2026-12-24T18:00', now), secs(new Date(2026, 11, 24, 18, 0, 0)));
  t.equal(beginTimeSeconds('2026-12-24T18:00:30', now), secs(new Date(2026, 11, 24, 18, 0, 30)));
});

t.test('anything else names no time', async (t) => {
  for (const bad of ['', 'tomorrow', 'now+', 'now+2x', 'now-1h', '24:00', '12:60', '1200', '2026-02-30T10:00', '2026-13-01T10:00',
    '2026-12-24 18:00', '2026-12-24T18:00:60', '2026-12-24']) {
    t.equal(beginTimeSeconds(bad, now), null, JSON.stringify(bad));
  }
  t.equal(beginTimeError('x'), "invalid time 'x': use now+DURATION, HH:MM or YYYY-MM-DDTHH:MM[:SS]");
});

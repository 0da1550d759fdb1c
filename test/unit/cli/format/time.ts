import t from 'tap';
import { formatLocal, formatOffset, formatShifted, formatUtc, offsetLabel } from '../../../../packages/cli/src/format/time';

const savedTz = process.env.TZ;
t.teardown(() => {
  if (savedTz === undefined) delete process.env.TZ;
  else process.env.TZ = savedTz;
});

t.test('offsets', async (t) => {
  t.equal(formatOffset(480), '+8');
  t.equal(formatOffset(-300), '-5');
  t.equal(formatOffset(330), '+5:30');
  t.equal(formatOffset(-210), '-3:30');
  t.equal(formatOffset(345), '+5:45');
  t.equal(formatOffset(0), '+0');
});

t.test('local zone labels follow TZ', async (t) => {
  const jan = new Date(Date.UTC(2024, 0, 15, 12));
  const jul = new Date(Date.UTC(2024, 6, 15, 12));
  process.env.TZ = 'Asia/Shanghai';
  t.equal(offsetLabel(jan), 'UTC+8');
  process.env.TZ = 'UTC';
  t.equal(offsetLabel(jan), 'UTC+0');
  process.env.TZ = 'Asia/Kolkata';
  t.equal(offsetLabel(jan), 'UTC+5:30');
  process.env.TZ = 'America/New_York';
  t.equal(offsetLabel(jan), 'UTC-5');
  t.equal(offsetLabel(jul), 'UTC-4', 'daylight saving time');
});

t.test('calendar texts', async (t) => {
  const secs = Date.UTC(2024, 1, 29, 23, 30, 5) / 1000;
  t.equal(formatUtc(new Date(secs * 1000)), '2024-02-29 23:30:05');
  t.equal(formatShifted(secs, 480), '2024-03-01 07:30:05');
  t.equal(formatShifted(secs, 480, false), '03-01 07:30:05');
  t.equal(formatShifted(secs, -300), '2024-02-29 18:30:05');
  t.equal(formatShifted(1e17, 0), '100000000000000000 Unix', 'out of range');
  process.env.TZ = 'Asia/Shanghai';
  t.same(formatLocal(secs), { text: '2024-03-01 07:30:05', label: 'UTC+8' });
  process.env.TZ = 'America/New_York';
  t.same(formatLocal(Date.UTC(2024, 6, 1, 12) / 1000), { text: '2024-07-01 08:00:00', label: 'UTC-4' });
});

// earliest-timer.ts: one timer for the earliest of many deadlines (Core's queue-wait expiry, the begin times).
import t from 'tap';
import { EarliestTimer } from '../../../packages/daemon/src/earliest-timer';
import { waitFor } from '../../helpers/wait';

const now = () => Math.floor(Date.now() / 1000);

t.test('an earlier deadline replaces a later one; a later one changes nothing; it fires once, disarmed, so it can be armed again', async (t) => {
  let fired = 0;
  const timer = new EarliestTimer(() => { fired++; });
  t.teardown(() => timer.stop());
  timer.arm(now() + 3600);
  timer.arm(now() - 1); // earlier: replaces the hour
  timer.arm(now() + 7200); // later than the one set: ignored
  await waitFor(() => fired === 1, { what: 'the earlier deadline' });
  timer.arm(now() - 1); // disarmed when it fired: a new deadline arms it
  await waitFor(() => fired === 2, { what: 'the next deadline' });
});

t.test('stop: nothing fires', async (t) => {
  let fired = 0;
  const timer = new EarliestTimer(() => { fired++; });
  timer.arm(now() - 1);
  timer.stop();
  let witnessed = false;
  const w = new EarliestTimer(() => { witnessed = true; });
  w.arm(now() - 1); // armed after, fires after the stopped one would have
  await waitFor(() => witnessed, { what: 'a timer armed later' });
  t.equal(fired, 0);
});

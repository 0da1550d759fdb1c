// --nice (cli/src/submit.ts, docs/behaviour.md §22.1): 0 to 10000, never negative.
import t from 'tap';
import { parseNice } from '../../../packages/cli/src/submit';

t.test('--nice: 0 to 10000; a negative value is refused, saying why', async (t) => {
  t.equal(parseNice('0'), 0);
  t.equal(parseNice('10000'), 10000);
  t.throws(() => parseNice('10001'), { name: 'UsageError', message: "invalid value '10001' for '--nice <NICE>': use 0 to 10000" });
  t.throws(() => parseNice('-5'), { name: 'UsageError', message: /cannot be negative/ });
});

// cli/watch.ts: the header line of `xqueue --watch` / `xinfo --watch` (the redraw itself is tested
// in a pseudo-terminal by test/e2e/watch.ts).
import t from 'tap';
import { CLEAR, SHOW_CURSOR, WATCH_INTERVAL_MS, watchHeader } from '../../../packages/cli/src/watch';

t.test('watch(1)-like header and terminal sequences', async (t) => {
  t.equal(WATCH_INTERVAL_MS, 2000);
  t.equal(CLEAR, '\x1b[H\x1b[2J');
  t.equal(SHOW_CURSOR, '\x1b[?25h');
  t.match(watchHeader('xqueue --all', 1764590400, 'gpu1'), /^Every 2\.0s: xqueue --all  gpu1: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d( UTC[+-]\S+)?$/);
});

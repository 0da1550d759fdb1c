// --share MEM[,COMPUTE[%]] (docs/behaviour.md §25.1): parsed once, refused with the same words by the CLI and the daemon.
import t from 'tap';
import { checkRequest, parseShare } from '../../../packages/protocol/src/request';

t.test('parseShare', async (t) => {
  t.same(parseShare('8G'), { mem: 8 * 1024 ** 3, compute: 100 });
  t.same(parseShare('512,25%'), { mem: 512 * 1024 ** 2, compute: 25 }, 'a bare number is MiB');
  t.same(parseShare('1.5G,50'), { mem: 1.5 * 1024 ** 3, compute: 50 });
  t.same(parseShare('8G,0'), { error: 'share compute must be between 1 and 100' });
  t.same(parseShare('8G,101%'), { error: 'share compute must be between 1 and 100' });
  t.same(parseShare('8G,x'), { error: 'share compute must be between 1 and 100' });
  t.same(parseShare('lots'), { error: "invalid size 'lots': use a number with K, M, G or T" });
  t.same(parseShare('0,50'), { error: "invalid size '0': use a number with K, M, G or T" });
});

t.test('checkRequest refuses a share of no device and a compute out of range', async (t) => {
  const base = { count: 1, kind: null, timeLimit: null };
  t.equal(checkRequest({ ...base, share: { mem: 1, compute: 100 } }), null);
  t.same(checkRequest({ ...base, count: 0, share: { mem: 1, compute: 100 } }), { code: 'INVALID_ARGUMENT', message: '--share needs at least one device (-g N or -i)' });
  t.same(checkRequest({ ...base, share: { mem: 1, compute: 0 } }), { code: 'INVALID_ARGUMENT', message: 'share compute must be between 1 and 100' });
});

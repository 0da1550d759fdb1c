import t from 'tap';
import { accountFor, groupsFor } from '../../../packages/daemon/src/accounts';
import { accountByUid, groupList } from '../../../native/ts/index';
import { skip } from '../../helpers/tap';

t.test('account and group lookups are cached for two seconds, misses never', async (t) => {
  const uid = process.getuid!();
  const me = accountByUid(uid);
  if (!me) { skip(t, 'this uid has no account'); return; }
  const t0 = 1_000_000;
  const a = accountFor(uid, t0);
  t.same(a, me);
  t.equal(accountFor(uid, t0 + 1999), a, 'the same object within the TTL');
  t.not(accountFor(uid, t0 + 2000), a, 'looked up again after it');
  t.equal(accountFor(3999999999, t0), null, 'no account: null');

  const g = groupsFor(me.name, me.gid, t0);
  t.same(g, groupList(me.name, me.gid));
  t.equal(groupsFor(me.name, me.gid, t0 + 1999), g, 'the same list within the TTL');
  t.not(groupsFor(me.name, me.gid, t0 + 2000), g, 'resolved again after it');
});

/**
 * Account lookups for submit, cached briefly. getpwuid(3) goes through NSS
 * on every call (tens of microseconds with `files`, a round trip with
 * sssd/LDAP) and a busy user submits thousands of jobs a second; an account
 * renamed or removed is seen within ACCOUNT_TTL_MS. Misses are not cached, so
 * an account created a moment ago is found at once.
 */
import { accountByUid, type Account } from '@xlurm/native';

const ACCOUNT_TTL_MS = 2000;
const cache = new Map<number, { account: Account; until: number }>();

export function accountFor(uid: number, now = Date.now()): Account | null {
  const hit = cache.get(uid);
  if (hit && hit.until > now) return hit.account;
  const account = accountByUid(uid);
  if (account) cache.set(uid, { account, until: now + ACCOUNT_TTL_MS });
  else cache.delete(uid);
  return account;
}

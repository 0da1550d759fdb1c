/**
 * Account and group lookups for submit and job start, cached briefly.
 * getpwuid(3) and getgrouplist(3) go through NSS on every call (tens of
 * microseconds with `files`, a network round trip with sssd/LDAP, on the
 * daemon's event loop) and a busy user submits and starts thousands of jobs a
 * second; an account renamed or removed, or a changed group membership, is
 * seen within ACCOUNT_TTL_MS. Misses are not cached, so an account created a
 * moment ago is found at once.
 */
import { accountByUid, groupList, type Account } from '@xlurm/native';

const ACCOUNT_TTL_MS = 2000;
const accounts = new Map<number, { account: Account; until: number }>();
const groups = new Map<string, { list: number[]; until: number }>();

export function accountFor(uid: number, now = Date.now()): Account | null {
  const hit = accounts.get(uid);
  if (hit && hit.until > now) return hit.account;
  const account = accountByUid(uid);
  if (account) accounts.set(uid, { account, until: now + ACCOUNT_TTL_MS });
  else accounts.delete(uid);
  return account;
}

/** getgrouplist(name, gid), cached like accounts; throws when it cannot be resolved. */
export function groupsFor(name: string, gid: number, now = Date.now()): number[] {
  const key = `${gid}:${name}`;
  const hit = groups.get(key);
  if (hit && hit.until > now) return hit.list;
  const list = groupList(name, gid);
  groups.set(key, { list, until: now + ACCOUNT_TTL_MS });
  return list;
}

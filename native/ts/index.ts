/**
 * Typed facade over the native addon (xlurm_native.node) and the path of the
 * xlurm-stepd supervisor. This is the only module that loads the .node file.
 * Arguments are validated here (TypeError) before C++ is reached.
 */
import * as path from 'node:path';
import * as fs from 'node:fs';

/** Peer credentials of a connected Unix socket, from SO_PEERCRED (socket(7)). */
export interface PeerCred { pid: number; uid: number; gid: number }

/** A passwd entry (getpwuid_r(3)). */
export interface Account { name: string; uid: number; gid: number; dir: string; shell: string }

/** The contract with C++: every export of xlurm_native.node. */
export interface XlurmNative {
  peerCred(fd: number): PeerCred;
  /** flock(fd, LOCK_EX|LOCK_NB); true when taken, false when held elsewhere (EWOULDBLOCK). */
  flockExclusive(fd: number): boolean;
  /** flock(fd, LOCK_UN). */
  flockUnlock(fd: number): void;
  /** getpwuid_r; null when the uid has no account. */
  accountByUid(uid: number): Account | null;
  /** getgrouplist(name, gid): the account's supplementary groups with gid included. */
  groupList(name: string, gid: number): number[];
  /** Set or clear FD_CLOEXEC on fd (fcntl(2)). */
  setCloexec(fd: number, on: boolean): void;
  /** getrlimit/setrlimit for RLIMIT_NOFILE: [soft, hard]. */
  getNofileLimit(): [number, number];
  setNofileLimit(soft: number, hard: number): void;
}

const here = path.resolve(__dirname, '..');
const candidates = [
  path.join(here, 'build', 'Release'),
  path.join(here, 'build', 'Debug'),
  path.join(here, 'build'),
];

function findBuilt(file: string): string {
  const tried: string[] = [];
  for (const dir of candidates) {
    const p = path.join(dir, file);
    tried.push(p);
    if (fs.existsSync(p)) return p;
  }
  throw new Error(`cannot find ${file}; run \`npm run build\` (tried ${tried.join(', ')})`);
}

let loaded: XlurmNative | undefined;

/** Load the addon once (lazily, so clients that do not need it pay nothing). */
export function native(): XlurmNative {
  if (!loaded) loaded = require(findBuilt('xlurm_native.node')) as XlurmNative;
  return loaded;
}

/** Absolute path of the xlurm-stepd supervisor executable. */
export function stepdPath(): string {
  return findBuilt('xlurm-stepd');
}

function checkFd(fd: number): void {
  if (!Number.isInteger(fd) || fd < 0) throw new TypeError(`invalid file descriptor: ${fd}`);
}
function checkLimit(v: number, what: string): void {
  if (v !== Infinity && (!Number.isInteger(v) || v < 0)) throw new TypeError(`invalid ${what}: ${v}`);
}
function checkId(id: number, what: string): void {
  if (!Number.isInteger(id) || id < 0 || id > 0xffffffff) throw new TypeError(`invalid ${what}: ${id}`);
}

export function peerCred(fd: number): PeerCred { checkFd(fd); return native().peerCred(fd); }
export function flockExclusive(fd: number): boolean { checkFd(fd); return native().flockExclusive(fd); }
export function flockUnlock(fd: number): void { checkFd(fd); native().flockUnlock(fd); }
export function accountByUid(uid: number): Account | null { checkId(uid, 'uid'); return native().accountByUid(uid); }
export function groupList(name: string, gid: number): number[] {
  if (typeof name !== 'string' || name === '') throw new TypeError('invalid account name');
  checkId(gid, 'gid');
  return native().groupList(name, gid);
}
export function setCloexec(fd: number, on: boolean): void { checkFd(fd); native().setCloexec(fd, on); }
/** RLIMIT_NOFILE as [soft, hard]; RLIM_INFINITY is reported as Number.MAX_SAFE_INTEGER. */
export function getNofileLimit(): [number, number] { return native().getNofileLimit(); }
/** Set RLIMIT_NOFILE; Number.MAX_SAFE_INTEGER (or Infinity) means RLIM_INFINITY. */
export function setNofileLimit(soft: number, hard: number): void {
  checkLimit(soft, 'soft limit');
  checkLimit(hard, 'hard limit');
  native().setNofileLimit(soft, hard);
}

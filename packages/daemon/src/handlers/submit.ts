import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Submission } from '@xlurm/protocol';
import { XlurmError, arraySubmissions, checkRequest, checkTimes, expandArray, requestOf } from '@xlurm/protocol';
import { checkPlaceable } from '../scheduler/place';
import { checkShare } from '../sharing/check';
import { accountFor } from '../accounts';
import { arrayTooLarge, requestBytes, requestTooLarge } from '../config/request-limits';
import { checkWorkflow } from '../workflow';
import type { Handler } from './types';

function invalid(msg: string): never { throw new XlurmError('INVALID_ARGUMENT', msg); }

/** Refuse what cannot reach the job intact (docs/behaviour.md §P.8: never silently altered). */
function checkRepresentable(s: Submission): void {
  for (const a of s.command) if (a.includes('\0')) invalid('command arguments must not contain NUL bytes');
  if (s.script?.includes('\0')) invalid('script must not contain NUL bytes');
  if (s.cwd.includes('\0')) invalid('working directory must not contain NUL bytes');
  for (const [k, v] of Object.entries(s.env)) {
    if (k === '' || k.includes('=') || k.includes('\0')) invalid(`invalid environment variable name: ${JSON.stringify(k)}`);
    if (v.includes('\0')) invalid(`environment variable ${k} contains a NUL byte`);
  }
}

export const submit = (({ core, caller }, spec) => {
  if (core.euid !== 0 && caller.uid !== core.euid) {
    throw new XlurmError('FOREIGN_USER', 'only a root daemon can run jobs for other users');
  }
  const account = accountFor(caller.uid);
  if (!account) throw new XlurmError('NO_ACCOUNT', `no local account for UID ${caller.uid}`);
  if (spec.command.length === 0 && typeof spec.script !== 'string') throw new XlurmError('EMPTY_COMMAND', 'empty command');
  // Bounded requests (docs/behaviour.md §28.2): measured before anything else is done with the text.
  const tooLarge = requestTooLarge(requestBytes(spec), core.cfg.maxRequestBytes ?? 0);
  if (tooLarge) throw new XlurmError('INVALID_REQUEST', tooLarge);
  const request = requestOf(spec);
  const bad = checkRequest(request); // the same check, and words, as the CLI's
  if (bad) throw new XlurmError(bad.code, bad.message);
  // Times the daemon cannot represent (docs/behaviour.md §28.4): refused before anything is stored.
  const badTime = checkTimes(spec);
  if (badTime) throw new XlurmError(badTime.code, badTime.message);
  checkRepresentable(spec);
  // Existence only: the job's own (already unprivileged) child enters it, so
  // the daemon never acts inside a user-controlled path with root rights.
  let isDir = false;
  try { isDir = path.isAbsolute(spec.cwd) && fs.statSync(spec.cwd).isDirectory(); } catch { isDir = false; }
  if (!isDir) throw new XlurmError('BAD_WORKING_DIRECTORY', 'working directory does not exist');

  const normalized: Submission = {
    command: spec.command, cwd: spec.cwd, env: spec.env, name: spec.name, count: spec.count,
    ...(spec.device_ids ? { device_ids: spec.device_ids } : {}),
    ...(spec.exclude_ids ? { exclude_ids: spec.exclude_ids } : {}),
    kind: spec.kind ?? null, time_limit: spec.time_limit ?? null, script: spec.script ?? null,
    ...(spec.queue_timeout != null ? { queue_timeout: spec.queue_timeout } : {}),
    ...(spec.immediate ? { immediate: true } : {}),
    ...(spec.group_affinity ? { group_affinity: spec.group_affinity } : {}),
    ...(spec.cpus !== undefined ? { cpus: spec.cpus } : {}),
    ...(spec.mem !== undefined ? { mem: spec.mem } : {}),
    ...(spec.notify !== undefined ? { notify: spec.notify } : {}),
    // Workflows (docs/behaviour.md §23.1, §23.3-§23.5).
    ...(spec.dependency != null ? { dependency: spec.dependency } : {}),
    ...(spec.begin_at != null ? { begin_at: spec.begin_at } : {}),
    ...(spec.hold ? { hold: true } : {}),
    ...(spec.retry ? { retry: spec.retry } : {}),
    // Fairness (docs/behaviour.md §22.1).
    ...(spec.nice ? { nice: spec.nice } : {}),
    // Card sharing (docs/behaviour.md §25.1).
    ...(spec.share ? { share: spec.share } : {}),
  };
  const unplaceable = checkPlaceable(request, core.devices.inventory, (d) => core.devices.isEnabled(d), core.topology());
  if (unplaceable) throw new XlurmError(unplaceable.code, unplaceable.message);
  const unshared = checkShare(request, core.cfg.sharing, core.devices.inventory, (d) => core.devices.memoryTotal?.(d));
  if (unshared) throw new XlurmError(unshared.code, unshared.message);
  if (spec.notify?.includes('\0')) invalid('notify command must not contain NUL bytes');
  const flow = checkWorkflow(spec, (id) => core.current(id) !== undefined);
  if (flow) invalid(flow);
  const owner = { uid: caller.uid, gid: caller.gid, name: account.name };
  // An array (docs/behaviour.md §23.2): expanded here by protocol's one definition (xbatch --dry-run prints the same).
  const plan = expandArray(spec);
  if (plan && 'code' in plan) throw new XlurmError(plan.code, plan.message);
  const tooMany = plan ? arrayTooLarge(plan.tasks.length, core.cfg.maxArrayTasks ?? 0) : null;
  if (tooMany) throw new XlurmError('INVALID_REQUEST', tooMany); // §28.2: nothing stored
  if (plan) {
    const { specs, members } = arraySubmissions(normalized, plan);
    return core.submitArray(owner, specs, members);
  }
  // Acknowledged only once committed (group commit with the other submits of this turn).
  return core.submit(owner, normalized);
}) satisfies Handler<'submit'>;

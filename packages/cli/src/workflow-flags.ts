/**
 * The workflow options of xrun and xbatch (docs/behaviour.md §23.1, §23.4,
 * §23.5): `-d/--dependency`, `--begin`, `--retry`, and xbatch's `--hold`.
 * The list and the time are parsed by protocol's one definition, so the CLI
 * and the daemon refuse them with the same words.
 */
import type { Options } from 'yargs';
import type { Submission } from '@xlurm/protocol';
import { beginTimeError, beginTimeSeconds, checkTimes, parseDependency } from '@xlurm/protocol';
import { flag, parseUnsigned, present, single } from './argv';
import { UsageError } from './errors';

export const WORKFLOW_OPTIONS: Readonly<Record<string, Options>> = {
  dependency: {
    alias: 'd', type: 'string',
    describe: 'Start only once these hold: afterok:ID[:ID...] (ended COMPLETED), afterany:ID... (ended), afternotok:ID... (ended otherwise), after:ID... (started), singleton (no other job of yours with this name running or queued before it); joined by , (all must hold)',
  },
  begin: { type: 'string', describe: 'Do not start before this time: now+DURATION, HH:MM (today, or tomorrow if past) or YYYY-MM-DDTHH:MM[:SS], local time' },
  retry: { type: 'string', describe: 'How many times to run it again when it ends FAILED: 0 to 10 (the same job id; the log goes on) [default: 0]' },
};

/** xbatch only. */
export const HOLD_OPTION: Readonly<Record<string, Options>> = {
  hold: { type: 'boolean', describe: 'Queue the job held: it starts only after `xlurm release ID`' },
};

export interface WorkflowFlags {
  dependency?: string;
  beginAt?: number;
  retry?: number;
  hold?: boolean;
}

/** `--begin TIME` as Unix seconds (a usage error, exit 2, when it names no time). */
export function parseBegin(text: string): number {
  const at = beginTimeSeconds(text);
  if (at === null) throw new UsageError(beginTimeError(text));
  // What the daemon cannot represent (docs/behaviour.md §28.4), in its words.
  const bad = checkTimes({ begin_at: at }, { begin_at: text });
  if (bad) throw new UsageError(bad.message);
  return at;
}

export function parseWorkflowFlags(args: Record<string, unknown>): WorkflowFlags {
  const out: WorkflowFlags = {};
  const dep = single(args.dependency, '--dependency <LIST>');
  if (dep !== undefined) {
    const d = parseDependency(present(dep, '--dependency <LIST>'));
    if ('error' in d) throw new UsageError(d.error);
    out.dependency = dep;
  }
  const begin = single(args.begin, '--begin <TIME>');
  if (begin !== undefined) out.beginAt = parseBegin(present(begin, '--begin <TIME>'));
  const retry = single(args.retry, '--retry <N>');
  if (retry !== undefined) out.retry = parseUnsigned(present(retry, '--retry <N>'), '--retry <N>', 10);
  if (flag(args.hold)) out.hold = true;
  return out;
}

/** The Submission's workflow keys (only those in use). */
export function workflowFields(f: WorkflowFlags): Pick<Submission, 'dependency' | 'begin_at' | 'hold' | 'retry'> {
  const s: Pick<Submission, 'dependency' | 'begin_at' | 'hold' | 'retry'> = {};
  if (f.dependency !== undefined) s.dependency = f.dependency;
  if (f.beginAt !== undefined) s.begin_at = f.beginAt;
  if (f.hold) s.hold = true;
  if (f.retry) s.retry = f.retry;
  return s;
}

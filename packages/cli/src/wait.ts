/**
 * `xqueue ID --wait` and `xqueue ID --follow` (docs/behaviour.md §23.6), on
 * the daemon's `follow` stream: --wait asks for state changes only (no log
 * bytes) and prints nothing; --follow is xrun's follower from the log's
 * start. Neither ever cancels the job: Ctrl-C only stops this process.
 */
import { request as realRequest, stream as realStream } from './client';
import { UsageError } from './errors';
import { arrayTasks, resolveJobArg } from './array';
import { engine } from './engine';
import { waitForEnd, type WaitDeps } from './follow';

export type { WaitDeps } from './follow';

const defaults: WaitDeps = { stream: realStream, request: realRequest };

/**
 * The exit code of job `id` once it is terminal, reconnecting while the
 * daemon is away (a restart does not end the wait).
 */
export async function waitJob(id: number, deps: WaitDeps = defaults): Promise<number> {
  // The clients' engine decides how (engine/local.ts calls waitForEnd with its own deps).
  if (deps === defaults) return engine().wait(id);
  return waitForEnd(id, deps);
}

/** Streams open at once while waiting for many jobs (an array's 10k tasks must not mean 10k connections). */
const WAIT_STREAMS = 32;

/** Several jobs: wait for all, then the first non-zero exit code in argument order, else 0. */
export async function waitJobs(ids: readonly number[], deps: WaitDeps = defaults): Promise<number> {
  const codes = new Array<number>(ids.length);
  let next = 0;
  const worker = async () => {
    while (next < ids.length) {
      const k = next++;
      codes[k] = await waitJob(ids[k]!, deps);
    }
  };
  await Promise.all(Array.from({ length: Math.min(WAIT_STREAMS, ids.length) }, worker));
  return codes.find((c) => c !== 0) ?? 0;
}

/** Stream job `id`'s log from its start to its end (as xrun does); resolves to its exit code. */
export async function followJob(id: number): Promise<number> {
  // The engine's follower: xrun's, on this host's daemon (engine/local.ts); the output file on Slurm.
  return engine().follow(id);
}

/**
 * `xqueue ID… --wait` / `xqueue ID --follow`: the exit status to leave with.
 * Ids may be `A_I`; an array's own id with --wait waits for every task.
 */
export async function waitOrFollow(args: Record<string, unknown> & { _: string[] }): Promise<number> {
  const follow = args.follow === true;
  if (follow && args.wait === true) throw new UsageError("the argument '--wait' cannot be used with '--follow'");
  const texts = args._;
  if (texts.length === 0) throw new UsageError('the following required arguments were not provided:\n  <JOB_ID>');
  if (follow && texts.length > 1) throw new UsageError(`unexpected argument '${texts[1]}' found`);
  for (const o of ['log', 'json', 'all', 'long', 'cancel']) {
    if (args[o] !== undefined && args[o] !== false) throw new UsageError(`the argument '--${o}' cannot be used with '--${follow ? 'follow' : 'wait'}'`);
  }
  const ids: number[] = [];
  for (const t of texts) {
    const arg = await resolveJobArg(t, '[JOB_ID]');
    if (!follow && !arg.task) {
      // An array's id stands for its tasks, in index order.
      const tasks = await arrayTasks(arg.id);
      if (tasks.length) { ids.push(...tasks.map((r) => r.id)); continue; }
    }
    ids.push(arg.id);
  }
  return follow ? followJob(ids[0]!) : waitJobs(ids);
}

/**
 * The local engine: this host's daemon, through the requests of client.ts
 * (what every user command did before there was a choice of engine).
 */
import type { DeviceView, Job, JobSummary, PoolView, Submission } from '@xlurm/protocol';
import { jobPaths, resolveHome } from '@xlurm/protocol';
import { request, stream } from '../client';
import { CliError, ExitWith } from '../errors';
import { Follower, runsAsDaemonAccount, waitForEnd } from '../follow';
import { infoTable } from '../format/info';
import { QUEUE_ROWS, selectRows } from '../format/queue';
import { errLine, writeOut } from '../io';
import { checkJob } from '../submit';
import type { Engine, InfoReport, SubmitContext } from './types';

/** `--immediate` against a request the host can never hold: no job, exit 69 (docs/behaviour.md §20.5). */
const EXIT_NEVER_FITS = 69;

export class LocalEngine implements Engine {
  readonly name = 'local' as const;

  async submit(s: Submission, _ctx: SubmitContext): Promise<number> {
    return checkJob(await request('submit', s)).id;
  }

  async run(s: Submission, _ctx: SubmitContext): Promise<number> {
    const follower = this.follower();
    const onSignal = () => follower.requestCancel();
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    try {
      let reply: unknown;
      try {
        reply = await request('submit', s);
      } catch (e) {
        if (s.immediate && e instanceof CliError && e.code === 'INFEASIBLE') {
          errLine(`xlurm: ${e.message}`);
          throw new ExitWith(EXIT_NEVER_FITS);
        }
        throw e;
      }
      return await follower.follow(checkJob(reply));
    } finally {
      process.removeListener('SIGINT', onSignal);
      process.removeListener('SIGTERM', onSignal);
    }
  }

  async queue(all: boolean, scheduleOrder = false): Promise<JobSummary[]> {
    // The daemon selects the newest rows itself, so the cost does not grow with history;
    // selectRows applies the same rule again (a no-op on such a reply) and sorts.
    const order = scheduleOrder ? { order: 'schedule' as const } : {};
    return selectRows(await request('queue', { all, limit: QUEUE_ROWS, ...order }) as JobSummary[], all);
  }

  async get(id: number): Promise<Job> {
    return await request('get', { id }) as Job;
  }

  async cancel(id: number): Promise<void> {
    await request('cancel', { id });
  }

  async task(array: number, index: number): Promise<number> {
    const rows = await request('queue', { array, index }) as JobSummary[];
    if (rows.length !== 1) throw new CliError('job not found');
    return rows[0]!.id;
  }

  async tasks(id: number): Promise<JobSummary[]> {
    return await request('queue', { array: id }) as JobSummary[];
  }

  /** `array: false`, so an array's first task is not taken for the whole array. */
  async cancelTask(id: number, _label: string): Promise<void> {
    await request('cancel', { id, array: false });
  }

  async wait(id: number): Promise<number> {
    return waitForEnd(id, { request, stream });
  }

  /** The whole log from offset 0 as raw bytes. */
  async log(id: number): Promise<void> {
    await stream('log', { id, offset: 0 }, { onLog: (_offset, bytes) => writeOut(bytes) });
  }

  async follow(id: number): Promise<number> {
    return this.follower().follow(await this.get(id));
  }

  async info(): Promise<InfoReport> {
    const views = await request('info', {}) as DeviceView[];
    return { json: views, text: infoTable(views) };
  }

  async pools(): Promise<PoolView[]> {
    return await request('pools', {}) as PoolView[];
  }

  private follower(): Follower {
    const home = resolveHome();
    return new Follower({
      request, stream, write: writeOut, status: errLine, now: () => new Date(),
      logFile: (id) => (runsAsDaemonAccount(home) ? jobPaths(home, id).log : undefined),
    });
  }
}

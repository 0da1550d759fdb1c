/**
 * The engine interface behind the user commands (docs/behaviour.md §27.1) and
 * what the commands hand it. Its own module, so that engine/local.ts and
 * engine/slurm.ts need not import engine/index.ts, which loads them.
 */
import type { Job, JobSummary, PoolView, Submission } from '@xlurm/protocol';
import type { Options } from 'yargs';

/** What a submitting command was given, beside the Submission it built. */
export interface SubmitContext {
  /** The parsed arguments (for options an engine passes on one by one). */
  args: Record<string, unknown> & { _: string[] };
  /** The command's option table: every name an engine must either map or refuse. */
  options: Readonly<Record<string, Options>>;
  /** xbatch: the script's path as given (the Submission carries its text); undefined with --wrap and for xrun. */
  scriptPath?: string;
}

/** What xinfo prints. */
export interface InfoReport {
  /** For --json. */
  json: unknown;
  /** The table. */
  text: string;
}

export interface Engine {
  readonly name: 'local' | 'slurm';
  /** xbatch: queue the job; resolves to its id. */
  submit(s: Submission, ctx: SubmitContext): Promise<number>;
  /** xrun: run the job in the foreground, its output streamed; resolves to the exit status (Ctrl-C/SIGTERM cancel it). */
  run(s: Submission, ctx: SubmitContext): Promise<number>;
  /**
   * xqueue's rows (active jobs; with `all`, the newest finished ones too);
   * `scheduleOrder` (xqueue -l): pending rows last, in the order they would start, where the engine knows it.
   */
  queue(all: boolean, scheduleOrder?: boolean): Promise<JobSummary[]>;
  /** One job in full. */
  get(id: number): Promise<Job>;
  /** Ask for its cancellation (an array's id: every task). */
  cancel(id: number): Promise<void>;
  /** The job id of task `index` of array `array` (`A_I`); `job not found` when there is none. */
  task(array: number, index: number): Promise<number>;
  /** The tasks of array `id`, in index order (empty when it is no array's id). */
  tasks(id: number): Promise<JobSummary[]>;
  /** Cancel that one task (`label`: its `A_I`), never its whole array. */
  cancelTask(id: number, label: string): Promise<void>;
  /** Wait until the job has ended, printing nothing; resolves to its exit status. */
  wait(id: number): Promise<number>;
  /** Write the job's whole output so far to stdout. */
  log(id: number): Promise<void>;
  /** Stream the job's output until it ends; resolves to its exit status. */
  follow(id: number): Promise<number>;
  /** xinfo: the devices (local) or the nodes and their GRES (Slurm). */
  info(): Promise<InfoReport>;
  /** xinfo --pools: this host's vendor pools (a Slurm cluster has none to show: refused). */
  pools(): Promise<PoolView[]>;
}

import type { XCommand } from '../command';
import { flag, noExtra, single } from '../argv';
import { engine } from '../engine';
import { ExitWith, UsageError } from '../errors';
import { arrayTasks, cancelTask, resolveJobArg } from '../array';
import { waitOrFollow } from '../wait';
import { jobDetail, queueTable } from '../format/queue';
import { writeOut } from '../io';
import { watchScreen } from '../watch';
import { cancelJob } from './cancel';

export function pretty(value: unknown): string {
  return JSON.stringify(value, null, 2) + '\n';
}

/** `xqueue ID --log`: the whole log from offset 0 as raw bytes. */
export async function printLog(id: number): Promise<void> {
  await engine().log(id);
}

const QUEUE_OPTIONS = {
  all: { alias: 'a', type: 'boolean', describe: 'Include finished jobs (latest 100), with full dates' },
  log: { type: 'boolean', describe: "Print the job's log (requires JOB_ID)" },
  long: { alias: 'l', type: 'boolean', describe: 'Add a REASON column (why a pending job waits)' },
  json: { type: 'boolean', describe: 'Print JSON' },
  cancel: { type: 'string', describe: 'Cancel job ID (same as xcancel ID)' },
  wait: { type: 'boolean', describe: 'Wait until every JOB_ID has ended, print nothing, exit with the first non-zero exit code (else 0)' },
  follow: { alias: 'f', type: 'boolean', describe: "Stream the job's log from its start until it ends, then exit with its exit code (Ctrl-C stops following; the job runs on)" },
  watch: { type: 'boolean', describe: 'Redraw the table in place every 2 s, like watch(1); Ctrl-C stops' },
} as const;

const queue: XCommand = {
  command: 'queue',
  aliases: ['xqueue'],
  describe: 'Show active jobs (host-wide), or one of your jobs in detail',
  usage: '[OPTIONS] [JOB_ID]',
  options: QUEUE_OPTIONS,
  builder: (y) => y.options(QUEUE_OPTIONS),
  async handler(args) {
    // docs/behaviour.md §23.6: --wait takes several ids.
    if (flag(args.wait) || flag(args.follow)) {
      throw new ExitWith(await waitOrFollow(args));
    }
    noExtra(args, 1);
    const idText = args._[0];
    const cancel = single(args.cancel, '--cancel <ID>');
    if (cancel !== undefined && idText !== undefined) {
      throw new UsageError("the argument '--cancel <ID>' cannot be used with '[JOB_ID]'");
    }
    if (flag(args.log) && idText === undefined) {
      throw new UsageError('the following required arguments were not provided:\n  <JOB_ID>');
    }
    if (cancel !== undefined) {
      const arg = await resolveJobArg(cancel, '--cancel <ID>');
      return arg.task ? cancelTask(cancel, arg.id) : cancelJob(arg.id);
    }
    if (idText !== undefined) {
      const { id, task } = await resolveJobArg(idText, '[JOB_ID]');
      if (flag(args.log)) return printLog(id);
      const job = await engine().get(id);
      // `xqueue A` lists array A's tasks; `xqueue A_I` shows one (docs/behaviour.md §23.2).
      if (!task && job.array && job.array.id === id) {
        const rows = await arrayTasks(id);
        await writeOut(flag(args.json) ? pretty(rows) : queueTable(rows, true, undefined, flag(args.long)));
        return;
      }
      await writeOut(flag(args.json) ? pretty(job) : jobDetail(job, Math.floor(Date.now() / 1000)));
      return;
    }
    const all = flag(args.all);
    if (flag(args.watch)) {
      // The table only: not one job's detail, not JSON.
      if (idText !== undefined || flag(args.json)) {
        throw new UsageError(`the argument '--watch' cannot be used with '${idText !== undefined ? '[JOB_ID]' : '--json'}'`);
      }
      const shown = ['xqueue', ...(all ? ['--all'] : []), ...(flag(args.long) ? ['--long'] : [])].join(' ');
      return watchScreen(shown, async () => queueTable(await engine().queue(all, flag(args.long)), all, undefined, flag(args.long)));
    }
    // -l: pending jobs in the order they would start (docs/behaviour.md §22.1).
    const rows = await engine().queue(all, flag(args.long));
    await writeOut(flag(args.json) ? pretty(rows) : queueTable(rows, all, undefined, flag(args.long)));
  },
};

export default queue;

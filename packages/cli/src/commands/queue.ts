import type { XCommand } from '../command';
import { flag, jobId, noExtra, single } from '../argv';
import { engine } from '../engine';
import { UsageError } from '../errors';
import { jobDetail, queueTable } from '../format/queue';
import { writeOut } from '../io';
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
} as const;

const queue: XCommand = {
  command: 'queue',
  aliases: ['xqueue'],
  describe: 'Show active jobs (host-wide), or one of your jobs in detail',
  usage: '[OPTIONS] [JOB_ID]',
  options: QUEUE_OPTIONS,
  builder: (y) => y.options(QUEUE_OPTIONS),
  async handler(args) {
    noExtra(args, 1);
    const idText = args._[0];
    const cancel = single(args.cancel, '--cancel <ID>');
    if (cancel !== undefined && idText !== undefined) {
      throw new UsageError("the argument '--cancel <ID>' cannot be used with '[JOB_ID]'");
    }
    if (flag(args.log) && idText === undefined) {
      throw new UsageError('the following required arguments were not provided:\n  <JOB_ID>');
    }
    if (cancel !== undefined) return cancelJob(jobId(cancel, '--cancel <ID>'));
    if (idText !== undefined) {
      const id = jobId(idText, '[JOB_ID]');
      if (flag(args.log)) return printLog(id);
      const job = await engine().get(id);
      await writeOut(flag(args.json) ? pretty(job) : jobDetail(job, Math.floor(Date.now() / 1000)));
      return;
    }
    const all = flag(args.all);
    const rows = await engine().queue(all);
    await writeOut(flag(args.json) ? pretty(rows) : queueTable(rows, all, undefined, flag(args.long)));
  },
};

export default queue;

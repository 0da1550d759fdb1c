import * as fs from 'node:fs';
import type { Options } from 'yargs';
import { jobPaths, resolveHome } from '@xlurm/protocol';
import type { XCommand } from '../command';
import { CliError, ExitWith, UsageError } from '../errors';
import { captureEnv } from '../env';
import { request, stream } from '../client';
import { Follower } from '../follow';
import { writeOut, errLine } from '../io';
import { SUBMIT_OPTIONS, buildSubmission, checkJob, currentDir, defaultName, parseSubmitFlags, validateSubmitFlags } from '../submit';

/** Everything xrun sends, from its parsed arguments (no I/O but the environment and cwd). */
export function runSubmission(args: Record<string, unknown> & { _: string[] }, env: () => Record<string, string>) {
  const flags = parseSubmitFlags(args);
  const command = args._;
  if (command.length === 0) throw new UsageError('the following required arguments were not provided:\n  <COMMAND>');
  const count = validateSubmitFlags(flags);
  const s = buildSubmission({
    command: [...command], cwd: currentDir(), env: env(), name: defaultName(flags, undefined, command),
    count, flags, script: null,
  });
  if (args.immediate === true) s.immediate = true;
  return s;
}

/** xrun's own options: the shared ones and `--immediate` (docs/behaviour.md §21.6). */
export const RUN_OPTIONS: Readonly<Record<string, Options>> = {
  ...SUBMIT_OPTIONS,
  immediate: { type: 'boolean', describe: 'Start now or not at all: exit 75 if the job cannot start at once, 69 if it never could' },
};

/** `--immediate` against a request the host can never hold: no job, exit 69 (docs/behaviour.md §20.5). */
const EXIT_NEVER_FITS = 69;

/**
 * Does this process run as the account of the daemon behind `home` (its
 * owner: the client verified the socket peer's SO_PEERCRED uid against it)?
 * Then it may read its jobs' logs itself, and does (see follow.ts).
 */
export function runsAsDaemonAccount(home: string): boolean {
  try { return fs.statSync(home).uid === process.geteuid!(); } catch { return false; }
}

const run: XCommand = {
  command: 'run',
  aliases: ['xrun'],
  describe: 'Run a command as a job, stream its output and exit with its status',
  usage: '[OPTIONS] <COMMAND> [ARGS]...',
  haltAtNonOption: true,
  options: RUN_OPTIONS,
  builder: (y) => y.options(RUN_OPTIONS),
  async handler(args) {
    const submission = runSubmission(args, captureEnv);
    const home = resolveHome();
    const follower = new Follower({
      request, stream, write: writeOut, status: errLine, now: () => new Date(),
      logFile: (id) => (runsAsDaemonAccount(home) ? jobPaths(home, id).log : undefined),
    });
    const onSignal = () => follower.requestCancel();
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    try {
      let reply: unknown;
      try {
        reply = await request('submit', submission);
      } catch (e) {
        if (submission.immediate && e instanceof CliError && e.code === 'INFEASIBLE') {
          errLine(`xlurm: ${e.message}`);
          throw new ExitWith(EXIT_NEVER_FITS);
        }
        throw e;
      }
      const job = checkJob(reply);
      throw new ExitWith(await follower.follow(job));
    } finally {
      process.removeListener('SIGINT', onSignal);
      process.removeListener('SIGTERM', onSignal);
    }
  },
};

export default run;

import type { Options } from 'yargs';
import type { XCommand } from '../command';
import { flag } from '../argv';
import { ExitWith, UsageError } from '../errors';
import { captureEnv } from '../env';
import { engine } from '../engine';
import { SUBMIT_OPTIONS, buildSubmission, currentDir, defaultName, parseSubmitFlags, validateSubmitFlags } from '../submit';

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
  if (flag(args.immediate)) s.immediate = true;
  return s;
}

/** xrun's own options: the shared ones and `--immediate` (docs/behaviour.md §21.6). */
export const RUN_OPTIONS: Readonly<Record<string, Options>> = {
  ...SUBMIT_OPTIONS,
  immediate: { type: 'boolean', describe: 'Start now or not at all: exit 75 if the job cannot start at once, 69 if it never could' },
};

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
    // The engine follows the job, cancels it on SIGINT/SIGTERM and gives its exit status.
    throw new ExitWith(await engine().run(submission, { args, options: RUN_OPTIONS }));
  },
};

export default run;

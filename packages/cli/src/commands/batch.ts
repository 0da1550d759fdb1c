import * as fs from 'node:fs';
import type { XCommand } from '../command';
import { flag, present, single } from '../argv';
import { CliError, UsageError } from '../errors';
import { SUBMIT_OPTIONS, buildSubmission, currentDir, defaultName, parseSubmitFlags, validateSubmitFlags } from '../submit';
import type { Submission } from '@xlurm/protocol';
import { captureEnv } from '../env';
import { ARRAY_OPTIONS, arrayFields, dryRunText } from '../array';
import { writeOut } from '../io';
import { engine } from '../engine';
import { HOLD_OPTION } from '../workflow-flags';

const BATCH_OPTIONS = {
  ...SUBMIT_OPTIONS,
  wrap: { type: 'string', describe: 'Run CMD with `bash -c` instead of a script' },
  ...ARRAY_OPTIONS,
  ...HOLD_OPTION,
} as const;

const strict = new TextDecoder('utf-8', { fatal: true });

/** The script as UTF-8 text, snapshotted at submission (unreadable or not UTF-8: `cannot read <path>`). */
export function readScript(path: string): string {
  try {
    return strict.decode(fs.readFileSync(path));
  } catch {
    throw new CliError(`cannot read ${path}`);
  }
}

/** Everything xbatch sends (the script file is read first, so `cannot read` wins). */
export function batchSubmission(
  args: Record<string, unknown> & { _: string[] }, env: () => Record<string, string>, read = readScript,
): Submission {
  const flags = parseSubmitFlags(args);
  const wrap = single(args.wrap, '--wrap <CMD>');
  const [scriptPath, ...rest] = args._;
  if (wrap !== undefined && scriptPath !== undefined) {
    throw new UsageError("the argument '--wrap <CMD>' cannot be used with '[SCRIPT]'");
  }
  if (wrap === undefined && scriptPath === undefined) {
    throw new UsageError('the following required arguments were not provided:\n  <SCRIPT|--wrap <CMD>>');
  }
  let script: string | null = null;
  let command: string[];
  if (scriptPath !== undefined) {
    script = read(scriptPath);
    command = rest; // the daemon runs `bash -c <script> <name> ARGS...`
  } else {
    command = ['bash', '-c', present(wrap!, '--wrap <CMD>')]; // `--wrap=` runs nothing: refused
  }
  const count = validateSubmitFlags(flags);
  const s = buildSubmission({
    command, cwd: currentDir(), env: env(), name: defaultName(flags, scriptPath, command), count, flags, script,
  });
  // An array or a sweep (docs/behaviour.md §23.2): expanded by the daemon, in the one transaction of this submit.
  return { ...s, ...arrayFields(args) };
}

const batch: XCommand = {
  command: 'batch',
  aliases: ['xbatch'],
  describe: 'Queue a script (or a --wrap command) as a job and print its ID',
  usage: '[OPTIONS] <SCRIPT|--wrap <CMD>> [ARGS]...',
  haltAtNonOption: true,
  options: BATCH_OPTIONS,
  builder: (y) => y.options(BATCH_OPTIONS),
  async handler(args) {
    const submission = batchSubmission(args, captureEnv);
    if (flag(args['dry-run'])) { await writeOut(dryRunText(submission)); return; }
    const scriptPath = args.wrap === undefined ? args._[0] : undefined;
    const id = await engine().submit(submission, { args, options: BATCH_OPTIONS, scriptPath });
    process.stdout.write(`${id}\n`);
  },
};

export default batch;

/**
 * Entry point of all six programs. `xrun`, `xbatch`, `xqueue`, `xcancel` and
 * `xinfo` are exactly the matching `xlurm` subcommand under their own name.
 */
import * as path from 'node:path';
import { VERSION } from '@xlurm/protocol';
import type { XCommand } from './command';
import { parseCommand } from './argv';
import { allCommands, findCommand } from './commands';
import { CliError, ExitWith, UsageError } from './errors';

export const ABOUT = 'Minimal multi-user, single-machine accelerator scheduler';

/** Wrapper program → the xlurm subcommand it is. */
export const WRAPPERS: Readonly<Record<string, string>> = {
  xrun: 'run', xbatch: 'batch', xqueue: 'queue', xcancel: 'cancel', xinfo: 'info',
};

/** `xlurm --help`, generated from the command modules. */
export function topHelp(program: string): string {
  const cmds = allCommands().filter((c) => !c.hidden);
  const rows: [string, string][] = cmds.map((c) => [c.command, c.aliases?.length ? `${c.describe} [aliases: ${c.aliases.join(', ')}]` : c.describe]);
  rows.push(['help', 'Print this message or the help of the given subcommand']);
  const width = Math.max(...rows.map(([n]) => n.length));
  return `${ABOUT}\n\nUsage: ${program} <COMMAND>\n\nCommands:\n`
    + rows.map(([n, d]) => `  ${n.padEnd(width)}  ${d}\n`).join('')
    + `\nOptions:\n  -h, --help     Print help\n  -V, --version  Print version\n`;
}

function usageLine(scriptName: string, cmd?: XCommand): string {
  return cmd ? `${scriptName} ${cmd.usage}`.trimEnd() : `${scriptName} <COMMAND>`;
}

function usageError(message: string, usage: string): number {
  process.stderr.write(`error: ${message}\n\nUsage: ${usage}\n\nFor more information, try '--help'.\n`);
  return 2;
}

/** Run one invocation; resolves with the process exit status. Never rejects. */
export async function main(program: string, argv: readonly string[]): Promise<number> {
  process.umask(0o077);
  const prog = path.basename(program);
  const args = [...argv];
  if (args[0] === '__daemon') args[0] = 'daemon'; // hidden: how old `start`s spawned the daemon
  let cmd: XCommand | undefined;
  let scriptName = prog;
  try {
    const wrapped = WRAPPERS[prog];
    if (wrapped) {
      cmd = findCommand(wrapped)!;
    } else {
      const first = args[0];
      if (first === undefined) {
        process.stderr.write(topHelp(prog));
        return 2;
      }
      if (first === '-h' || first === '--help') {
        process.stdout.write(topHelp(prog));
        return 0;
      }
      if (first === '-V' || first === '--version') {
        process.stdout.write(`${prog} ${VERSION}\n`);
        return 0;
      }
      if (first === 'help') {
        const target = args[1] === undefined ? undefined : findCommand(args[1]);
        if (args[1] !== undefined && !target) return usageError(`unrecognized subcommand '${args[1]}'`, usageLine(prog));
        if (!target) {
          process.stdout.write(topHelp(prog));
          return 0;
        }
        args.splice(0, 2, target.command, '--help');
      }
      cmd = findCommand(args[0]!);
      if (!cmd) {
        const message = args[0]!.startsWith('-') ? `unexpected argument '${args[0]}' found` : `unrecognized subcommand '${args[0]}'`;
        return usageError(message, usageLine(prog));
      }
      scriptName = `${prog} ${cmd.command}`;
      args.shift();
    }
    const parsed = await parseCommand(cmd, scriptName, args);
    if (parsed.kind === 'help') {
      process.stdout.write(parsed.text + '\n');
      return 0;
    }
    if (parsed.kind === 'version') {
      process.stdout.write(`${prog} ${VERSION}\n`);
      return 0;
    }
    await cmd.handler(parsed.args);
    return 0;
  } catch (e) {
    return report(e, usageLine(scriptName, cmd));
  }
}

/** Print an error the way its kind requires and return the exit status. */
export function report(e: unknown, usage: string): number {
  if (e instanceof ExitWith) return e.status;
  if (e instanceof UsageError) return usageError(e.message, usage);
  const message = e instanceof CliError || e instanceof Error ? e.message : String(e);
  process.stderr.write(`xlurm: ${message}\n`);
  return 1;
}

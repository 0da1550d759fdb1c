/**
 * The command table. Modules load only when their command runs (start-up
 * speed); the names here must equal each module's `command` and `aliases`
 * (a unit test checks).
 */
import type { XCommand } from '../command';

type Loader = () => XCommand;
const load = (m: { default: XCommand }) => m.default;

export const COMMANDS: ReadonlyArray<readonly [names: readonly string[], load: Loader]> = [
  [['start'], () => load(require('./start'))],
  [['daemon'], () => load(require('./daemon'))],
  [['stop'], () => load(require('./stop'))],
  [['restart'], () => load(require('./restart'))],
  [['clean'], () => load(require('./clean'))],
  [['status'], () => load(require('./status'))],
  [['exclude'], () => load(require('./exclude'))],
  [['include'], () => load(require('./include'))],
  [['config'], () => load(require('./config'))],
  [['reload'], () => load(require('./reload'))],
  [['stats'], () => load(require('./stats'))],
  [['metrics'], () => load(require('./metrics'))],
  [['monitor'], () => load(require('./monitor'))],
  [['run', 'xrun'], () => load(require('./run'))],
  [['batch', 'xbatch'], () => load(require('./batch'))],
  [['queue', 'xqueue'], () => load(require('./queue'))],
  [['cancel', 'xcancel'], () => load(require('./cancel'))],
  [['info', 'xinfo'], () => load(require('./info'))],
  [['slurm-config'], () => load(require('./slurm-config'))],
  [['hold'], () => load(require('./hold'))],
  [['release'], () => load(require('./release'))],
  [['update'], () => load(require('./update'))],
  [['priority'], () => load(require('./priority'))],
  [['top'], () => load(require('./top'))],
  [['share'], () => load(require('./share'))],
  [['report'], () => load(require('./report'))],
  [['mcp'], () => load(require('./mcp'))],
];

/** The command named `name` (a subcommand or one of its aliases). */
export function findCommand(name: string): XCommand | undefined {
  const entry = COMMANDS.find(([names]) => names.includes(name));
  return entry ? entry[1]() : undefined;
}

/** Every command, in help order. */
export function allCommands(): XCommand[] {
  return COMMANDS.map(([, l]) => l());
}

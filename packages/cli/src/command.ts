/** The shape of a command module: a yargs CommandModule plus what the parser and usage line need. */
import type { Argv, CommandModule, Options } from 'yargs';

/** Parsed arguments as every handler receives them: positionals stay strings. */
export type Args = { _: string[]; $0: string; [key: string]: unknown };

/** Structurally a yargs CommandModule; handlers get positionals as strings. */
export interface XCommand extends Omit<CommandModule<object, Args>, 'builder' | 'handler'> {
  /** Subcommand name under `xlurm`. */
  command: string;
  /** Other names under `xlurm` (the wrapper program names, e.g. `xrun`). */
  aliases?: string[];
  describe: string;
  /** What follows the program name in the usage line, e.g. `[OPTIONS] <COMMAND> [ARGS]...`. */
  usage: string;
  /** The options (yargs option definitions); parsing and help both come from these. */
  options: Readonly<Record<string, Options>>;
  /**
   * Options must precede the first positional; it and every later argument
   * are kept verbatim in `_` (xrun's command, xbatch's script arguments).
   */
  haltAtNonOption?: boolean;
  /** Not listed in `xlurm --help`. */
  hidden?: boolean;
  /** Adds the command's options; what they parse to reaches the handler as Args. */
  builder(y: Argv): Argv<object>;
  handler(args: Args): Promise<void>;
}

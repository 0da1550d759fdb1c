/**
 * A module of the compiled CLI (packages/cli/dist), loaded at run time rather than built into
 * the bundle that every command starts from (scripts/bundle-cli.js): for the commands whose code
 * is large and rarely run (`xlurm report`'s drawing, `xlurm mcp`'s server), so the other
 * commands neither read nor compile it. The bundle lives in packages/cli/bundle, beside dist,
 * in a development tree and in an installed release alike.
 */
import * as path from 'node:path';

export function distModule<T>(name: string): T {
  const root = path.basename(__dirname) === 'bundle' ? path.join(__dirname, '..', 'dist') : __dirname;
  return require(path.join(root, name)) as T;
}

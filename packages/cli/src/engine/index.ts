/**
 * The engine behind the user commands (docs/behaviour.md §27.1): this host's
 * daemon (`local`) or a Slurm cluster (`slurm`), chosen by the clients'
 * `[cluster] engine`. xrun, xbatch, xqueue, xcancel and xinfo build what they
 * ask for (the same parsing and checks either way) and hand it to the engine;
 * none of them branches on which engine it is. Each implementation loads only
 * when chosen, so a local command never loads the Slurm code and the other way
 * round.
 */
import { readCluster } from './cluster';
import type { Engine } from './types';

// The interface lives in types.ts, which both implementations import: they never import this
// module back, so loading one here makes no cycle (test/unit/imports.ts).
export type { Engine, InfoReport, SubmitContext } from './types';

let chosen: Engine | undefined;

/** The engine the clients' configuration file names (read once per process). */
export function engine(env: NodeJS.ProcessEnv = process.env): Engine {
  if (chosen) return chosen;
  const cluster = readCluster(env);
  if (cluster.engine === 'slurm') {
    const { SlurmEngine } = require('./slurm') as typeof import('./slurm');
    chosen = new SlurmEngine(cluster);
  } else {
    const { LocalEngine } = require('./local') as typeof import('./local');
    chosen = new LocalEngine();
  }
  return chosen;
}

/** Forget the chosen engine (tests that change the environment). */
export function resetEngine(): void { chosen = undefined; }

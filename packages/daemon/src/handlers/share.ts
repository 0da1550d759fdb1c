import type { Handler } from './types';

/** `xlurm share`: every user's usage and rank (any user: numbers and account names only, docs/behaviour.md §22.2). */
export const share = (({ core }) => core.shares()) satisfies Handler<'share'>;

import { samplerOf } from '../accounting/sampler';
import { metricsText } from '../accounting/metrics';
import type { Handler } from './types';

/** `xlurm metrics` (docs/behaviour.md §26.3): the text metrics_file holds, made now. */
export const metrics = (({ core }) => ({ text: samplerOf(core)?.metrics() ?? metricsText(core, new Map()) })) satisfies Handler<'metrics'>;

import { toWireJob } from '../store/store';
import type { Handler } from './types';

export const get = (({ core, caller }, { id }) => toWireJob(core.jobFor(caller, id))) satisfies Handler<'get'>;

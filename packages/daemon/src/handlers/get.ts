import { toWireJob } from '../store/store';
import type { Handler } from './types';

export const get: Handler<'get'> = ({ core, caller }, { id }) => toWireJob(core.jobFor(caller, id));

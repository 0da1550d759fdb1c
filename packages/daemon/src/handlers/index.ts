/** One handler per operation; the type makes the table exhaustive over Ops. */
import type { Handlers } from './types';
import { submit } from './submit';
import { queue } from './queue';
import { get } from './get';
import { cancel } from './cancel';
import { log } from './log';
import { follow } from './follow';
import { info } from './info';
import { pools } from './pools';
import { status } from './status';
import { stop } from './stop';
import { restart } from './restart';
import { exclude } from './exclude';
import { include } from './include';
import { config } from './config';
import { reload } from './reload';
import { stats } from './stats';
import { metrics } from './metrics';
import { monitor } from './monitor';
import { report } from './report';
import { hold, release } from './hold';
import { update } from './update';
import { priority } from './priority';
import { top } from './top';
import { share } from './share';

export const handlers: Handlers = { submit, queue, get, cancel, log, follow, info, pools, report, status, stop, restart, exclude, include, config, reload, stats, metrics, monitor, hold, release, update, priority, top, share };

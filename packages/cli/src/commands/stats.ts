import type { OpResult } from '@xlurm/protocol';
import type { XCommand } from '../command';
import { flag, noExtra, single } from '../argv';
import { request } from '../client';
import { UsageError } from '../errors';
import { statsCsv, statsText } from '../format/stats';
import { writeOut } from '../io';
import { parseSince } from '../since';

const STATS_OPTIONS = {
  days: { type: 'string', describe: 'Jobs that ended in the last N days (default 7)' },
  since: { type: 'string', describe: 'Jobs that ended since DATE (YYYY-MM-DD[THH:MM[:SS]], local time; or now-DURATION)' },
  user: { type: 'string', describe: "Only this user's row (another user's: root only)" },
  json: { type: 'boolean', describe: 'Print JSON' },
  csv: { type: 'boolean', describe: 'Print CSV: a header and one row per user' },
} as const;

const stats: XCommand = {
  command: 'stats',
  describe: 'Show usage statistics: jobs, device-hours, waits and success per user (root: every user and the host)',
  usage: '[OPTIONS]',
  options: STATS_OPTIONS,
  builder: (y) => y.options(STATS_OPTIONS),
  async handler(args) {
    noExtra(args, 0);
    const days = single(args.days, '--days <N>');
    const since = single(args.since, '--since <DATE>');
    const user = single(args.user, '--user <NAME>');
    if (days !== undefined && since !== undefined) throw new UsageError("the argument '--days <N>' cannot be used with '--since <DATE>'");
    if (flag(args.json) && flag(args.csv)) throw new UsageError("the argument '--json' cannot be used with '--csv'");
    const req: { days?: number; since?: number; user?: string } = {};
    if (days !== undefined) {
      if (!/^[0-9]+$/.test(days) || Number(days) < 1 || Number(days) > 1_000_000) {
        throw new UsageError(`invalid value '${days}' for '--days <N>': use a whole number of days from 1`);
      }
      req.days = Number(days);
    }
    if (since !== undefined) {
      const t = parseSince(since);
      if (t === null) throw new UsageError(`invalid value '${since}' for '--since <DATE>': use YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS] or now-DURATION`);
      req.since = t;
    }
    if (user !== undefined) req.user = user;
    const s = await request('stats', req) as OpResult<'stats'>;
    if (flag(args.json)) await writeOut(JSON.stringify(s, null, 2) + '\n');
    else if (flag(args.csv)) await writeOut(statsCsv(s));
    else await writeOut(statsText(s));
  },
};

export default stats;

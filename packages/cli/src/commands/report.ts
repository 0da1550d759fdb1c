import * as fs from 'node:fs';
import * as os from 'node:os';
import type { OpResult } from '@xlurm/protocol';
import type { XCommand } from '../command';
import { noExtra, parseUnsigned, present, single } from '../argv';
import { request } from '../client';
import { distModule } from '../dist-module';
import { CliError, UsageError, osErrorText } from '../errors';
import type { StatsTable } from '../report/stats';

const REPORT_OPTIONS = {
  days: { type: 'string', describe: 'The last N days [default: 7]' },
  html: { type: 'string', describe: 'Write the report to FILE: one self-contained HTML file (inline SVG and CSS, no scripts, nothing from the network)' },
} as const;

/**
 * The stats table from the daemon's `stats` operation (docs/behaviour.md §26.1), so the report's
 * table and `xlurm stats` never disagree; a daemon older than that operation gets the same
 * figures computed from the report's jobs.
 */
async function statsFor(days: number, data: OpResult<'report'>): Promise<StatsTable> {
  try {
    return await request('stats', { days });
  } catch (e) {
    if (!(e instanceof CliError) || e.code !== 'UNKNOWN_OP') throw e;
  }
  const { statsFromReport } = distModule<typeof import('../report/stats')>('report/stats');
  return statsFromReport(data);
}

function viewerName(): string {
  try { return os.userInfo().username; } catch { return `uid ${process.getuid?.() ?? '?'}`; }
}

/**
 * Write the report without following a link at FILE (extensions 28.11): run as root in a
 * directory a user can write, a planted link would otherwise make root overwrite its target.
 * O_NOFOLLOW covers the final component, the only one the user names here; the directories
 * above are the caller's own choice (the CLI may not import the daemon's safe-fs module, and
 * needs nothing more). Opened without O_TRUNC, so nothing is lost before the checks: a FIFO or
 * device, or a file with other hard links, is refused, then the file is truncated and written.
 */
function writeReport(file: string, html: string): void {
  const c = fs.constants;
  let fd: number;
  try {
    fd = fs.openSync(file, c.O_WRONLY | c.O_CREAT | c.O_NOFOLLOW | c.O_NONBLOCK, 0o644);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw new CliError(`cannot write ${file}: it is a symbolic link (not followed)`);
    // A FIFO without a reader (O_NONBLOCK: the open does not wait for one).
    if (code === 'ENXIO') throw new CliError(`cannot write ${file}: not a regular file`);
    throw new CliError(`cannot write ${file}: ${osErrorText(e)}`);
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new CliError(`cannot write ${file}: not a regular file`);
    if (st.nlink > 1) throw new CliError(`cannot write ${file}: it has other hard links`);
    fs.ftruncateSync(fd, 0);
    const buf = Buffer.from(html);
    for (let at = 0; at < buf.length;) at += fs.writeSync(fd, buf, at, buf.length - at);
  } catch (e) {
    if (e instanceof CliError) throw e;
    throw new CliError(`cannot write ${file}: ${osErrorText(e)}`);
  } finally {
    fs.closeSync(fd);
  }
}

const report: XCommand = {
  command: 'report',
  describe: 'Write an HTML report with plots: device timeline, queue length, waits, utilisation, usage by user',
  usage: '[OPTIONS] --html <FILE>',
  options: REPORT_OPTIONS,
  builder: (y) => y.options(REPORT_OPTIONS),
  async handler(args) {
    noExtra(args, 0);
    const daysText = single(args.days, '--days <N>');
    const days = daysText === undefined ? 7 : parseUnsigned(present(daysText, '--days <N>'), '--days <N>', 3660);
    if (days === 0) throw new UsageError("invalid value '0' for '--days <N>': at least 1");
    const file = single(args.html, '--html <FILE>');
    if (file === undefined) throw new UsageError('the following required arguments were not provided:\n  --html <FILE>');
    const path = present(file, '--html <FILE>');
    const data = await request('report', { days });
    const stats = await statsFor(days, data);
    // The drawing and its library load only here, from dist/, never part of the bundle every
    // command starts from (docs/architecture.md, client start-up).
    const { renderReport } = distModule<typeof import('../report/render')>('report/render');
    const html = await renderReport(data, stats, { viewer: viewerName(), hostname: os.hostname() });
    writeReport(path, html);
    process.stdout.write(`Report written to ${path} (${data.jobs.length} jobs, ${Math.ceil(Buffer.byteLength(html) / 1024)} KiB)\n`);
  },
};

export default report;

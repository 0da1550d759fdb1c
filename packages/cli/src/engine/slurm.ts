/**
 * The Slurm engine (docs/behaviour.md §27.1): the user commands run Slurm's
 * own (sbatch, srun, squeue, sacct, scancel, scontrol, sinfo) with our
 * options translated (slurm-map.ts) and their answers mapped to our rows,
 * states and tables. Identity, permissions and accounting are Slurm's.
 */
import * as fs from 'node:fs';
import { spawn, spawnSync } from 'node:child_process';
import type { Job, JobSummary, PoolView, Submission } from '@xlurm/protocol';
import { CliError, UsageError } from '../errors';
import { writeOut } from '../io';
import { QUEUE_ROWS, selectRows } from '../format/queue';
import { renderTable } from '../format/table';
import { sleep } from '../sleep';
import type { ClusterConfig } from './cluster';
import type { Engine, InfoReport, SubmitContext } from './types';
import { arrayCounts, exitCodeText, jobOf, mapState, setArrayCounts, shWord as shQuote, slurmOptions, slurmWrap, stateText, summaryOf, type SlurmJob } from './slurm-map';

interface Ran { code: number | null; stdout: string; stderr: string }

/** Run a Slurm command to its end (its output captured). */
function slurm(cmd: string, args: string[], opts: { input?: string } = {}): Ran {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 30, input: opts.input, stdio: ['pipe', 'pipe', 'pipe'] });
  if (r.error) {
    const code = (r.error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new CliError(`cannot run ${cmd}: not found (is Slurm's client installed and on PATH?)`);
    throw new CliError(`cannot run ${cmd}: ${r.error.message}`);
  }
  return { code: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/** Slurm's own words for a failed command, without its `cmd: error: ` prefix. */
function failure(cmd: string, r: Ran): CliError {
  const text = r.stderr.trim().split('\n').filter((l) => l.trim()).pop() ?? `exit status ${r.code}`;
  return new CliError(`${cmd}: ${text.replace(new RegExp(`^${cmd}: (error: )?`), '')}`);
}

const NOT_FOUND = /Invalid job id|Invalid job id specified|not found/i;

function parseJobs(r: Ran, cmd: string): SlurmJob[] {
  try {
    return (JSON.parse(r.stdout) as { jobs?: SlurmJob[] }).jobs ?? [];
  } catch {
    throw new CliError(`${cmd}: unexpected output (not JSON)`);
  }
}

/** squeue -O fields, in order; Name last, so a name with the separator in it stays whole. */
const COMPACT = ['JobID', 'ArrayJobID', 'ArrayTaskID', 'UserID', 'UserName', 'GroupID', 'State', 'Reason', 'SubmitTime',
  'StartTime', 'EndTime', 'tres-per-node', 'tres-per-job', 'NumCPUs', 'MinMemory', 'Name'];

/** MinMemory (`0`, `100M`, `2G`) in MiB. */
function mebibytes(text: string): number | null {
  const m = /^(\d+(?:\.\d+)?)([KMGT]?)$/.exec(text);
  if (!m) return null;
  const f: Record<string, number> = { K: 1 / 1024, '': 1, M: 1, G: 1024, T: 1024 * 1024 };
  return Math.round(Number(m[1]) * f[m[2]!]!);
}

/** squeue's compact listing as records, or undefined when it cannot be had (then --json is asked). */
function compactJobs(all: boolean): SlurmJob[] | undefined {
  const r = spawnSync('squeue', ['--noheader', ...(all ? ['--states=all'] : []), `--Format=${COMPACT.map((f, i) => (i < COMPACT.length - 1 ? `${f}:|` : `${f}:0`)).join(',')}`],
    { encoding: 'utf8', maxBuffer: 1 << 30, env: { ...process.env, SLURM_TIME_FORMAT: '%s' } });
  if (r.error || r.status !== 0) return undefined;
  const out: SlurmJob[] = [];
  for (const line of (r.stdout ?? '').split('\n')) {
    if (!line) continue;
    const f = line.split('|');
    if (f.length < COMPACT.length) return undefined;
    const name = f.slice(COMPACT.length - 1).join('|');
    const v = (i: number) => (f[i] === 'N/A' || f[i] === '' ? undefined : f[i]);
    const n = (i: number) => { const x = v(i); return x !== undefined && /^\d+$/.test(x) ? Number(x) : undefined; };
    const id = n(0);
    if (id === undefined) return undefined;
    const task = v(2);
    out.push({
      job_id: id, name, user_id: n(3), user_name: v(4), group_id: n(5), job_state: v(6) ?? 'PENDING', state_reason: v(7),
      submit_time: n(8), start_time: n(9), end_time: n(10), tres_per_node: v(11), tres_per_job: v(12), cpus: n(13),
      memory_per_node: mebibytes(f[14] ?? ''),
      array_job_id: task === undefined ? undefined : n(1),
      array_task_id: task !== undefined && /^\d+$/.test(task) ? Number(task) : null,
      array_task_string: task?.replace(/^\[|\]$/g, ''),
    });
  }
  return out;
}

export class SlurmEngine implements Engine {
  readonly name = 'slurm' as const;

  constructor(private readonly cluster: ClusterConfig) {}

  async submit(s: Submission, ctx: SubmitContext): Promise<number> {
    const args = ['--parsable', ...slurmOptions(s, ctx, this.cluster)];
    let input: string | undefined;
    if (ctx.scriptPath !== undefined && s.script !== null && s.script !== undefined) {
      // The text read at submission, as this host's daemon keeps it. sbatch wants an interpreter
      // line, which xlurm scripts need not have (they run under bash): one is added for bash.
      if (s.script.startsWith('#!') && s.command.length > 0) args.push(ctx.scriptPath, ...s.command);
      else if (s.command.length === 0) input = s.script.startsWith('#!') ? s.script : `#!/bin/bash\n${s.script}`;
      else args.push(`--wrap=${['bash', ctx.scriptPath, ...s.command].map(shQuote).join(' ')}`);
    } else args.push(slurmWrap(s.command));
    const r = slurm('sbatch', args, input === undefined ? {} : { input });
    if (r.code !== 0) throw failure('sbatch', r);
    // --parsable: `ID` or `ID;cluster`
    const id = Number(r.stdout.trim().split(';')[0]);
    if (!Number.isInteger(id) || id <= 0) throw new CliError('sbatch: unexpected output');
    return id;
  }

  run(s: Submission, ctx: SubmitContext): Promise<number> {
    // --quit-on-interrupt: one Ctrl-C ends the step (and with it the job srun allocated),
    // as one Ctrl-C cancels a local xrun.
    const args = [...slurmOptions(s, ctx, this.cluster), '--quit-on-interrupt', '--', ...s.command];
    return new Promise((resolve, reject) => {
      const child = spawn('srun', args, { stdio: 'inherit' });
      // A Ctrl-C at the terminal reaches srun itself (same process group); a signal sent to
      // this process alone is passed on. Either way srun decides the exit status.
      const forward = (sig: NodeJS.Signals) => () => { try { child.kill(sig === 'SIGTERM' ? 'SIGINT' : sig); } catch { /* gone */ } };
      const onInt = forward('SIGINT');
      const onTerm = forward('SIGTERM');
      process.on('SIGINT', onInt);
      process.on('SIGTERM', onTerm);
      const done = () => { process.removeListener('SIGINT', onInt); process.removeListener('SIGTERM', onTerm); };
      child.on('error', (e) => {
        done();
        const code = (e as NodeJS.ErrnoException).code;
        reject(new CliError(code === 'ENOENT' ? 'cannot run srun: not found (is Slurm\'s client installed and on PATH?)' : `cannot run srun: ${e.message}`));
      });
      child.on('close', (code, signal) => {
        done();
        if (signal) {
          const { constants } = require('node:os') as typeof import('node:os');
          resolve(128 + ((constants.signals as Record<string, number>)[signal] ?? 1));
        } else resolve(code ?? 1);
      });
    });
  }

  async queue(all: boolean): Promise<JobSummary[]> {
    // squeue's compact listing first: 22.05's --json lists every job the controller holds and
    // costs far more to write and parse (docs/performance.md, Client mode on Slurm). It names no
    // allocated GRES indices, so when a started job has GRES, --json gives them; so it does for an
    // array (its count takes in the finished tasks, which only --json lists).
    // --all keeps --json: finished jobs' CPU counts are not what -O NumCPUs prints.
    let records = all ? undefined : compactJobs(all);
    if (!records || records.some((j) => j.array_job_id || (mapState(stateText(j)) !== 'PENDING' && (j.tres_per_node || j.tres_per_job)))) {
      const r = slurm('squeue', ['--json', ...(all ? ['--states=all'] : [])]);
      if (r.code !== 0) throw failure('squeue', r);
      records = parseJobs(r, 'squeue');
    }
    const rows = new Map<number, JobSummary>();
    for (const j of records) rows.set(j.job_id, summaryOf(j, this.cluster));
    if (all) {
      // Jobs the controller has forgotten are in the accounting database, where there is one.
      const acct = slurm('sacct', ['--json', '--allusers', '--starttime=now-7days']);
      if (acct.code === 0) {
        for (const j of parseJobs(acct, 'sacct')) if (!rows.has(j.job_id)) rows.set(j.job_id, summaryOf(j, this.cluster));
      }
    }
    return setArrayCounts(selectRows([...rows.values()].sort((a, b) => a.id - b.id), all, QUEUE_ROWS), arrayCounts(records));
  }

  async get(id: number): Promise<Job> {
    const j = this.record(id);
    const job = jobOf(j, this.cluster);
    if (j.array_job_id) setArrayCounts([job], arrayCounts(this.records(String(j.array_job_id))));
    return job;
  }

  private record(id: number): SlurmJob {
    const r = slurm('squeue', ['--json', '--states=all', `--jobs=${id}`]);
    if (r.code === 0) {
      const j = parseJobs(r, 'squeue').find((x) => x.job_id === id);
      if (j) return j;
    } else if (!NOT_FOUND.test(r.stderr)) throw failure('squeue', r);
    const acct = slurm('sacct', ['--json', `--jobs=${id}`]);
    if (acct.code === 0) {
      const j = parseJobs(acct, 'sacct').find((x) => x.job_id === id);
      if (j) {
        // The JSON's exit code is not to be trusted (exitCodeText says why); the text form is.
        const text = slurm('sacct', ['-n', '-P', '-X', `--jobs=${id}`, '--format=JobIDRaw,ExitCode']);
        const row = text.code === 0 ? text.stdout.split('\n').find((l) => l.startsWith(`${id}|`)) : undefined;
        const code = row === undefined ? undefined : exitCodeText(row.split('|')[1] ?? '');
        return code === undefined ? j : { ...j, exit_code: { return_code: code } };
      }
    }
    throw new CliError('job not found');
  }

  async cancel(id: number): Promise<void> {
    // scancel says nothing and exits 0 for an id the controller does not know: ask squeue first.
    const known = slurm('squeue', ['-h', '--states=all', `--jobs=${id}`, '-o', '%i']);
    if (known.code !== 0 || known.stdout.trim() === '') {
      if (known.code === 0 || NOT_FOUND.test(known.stderr)) throw new CliError('job not found');
      throw failure('squeue', known);
    }
    const r = slurm('scancel', [String(id)]);
    if (r.code !== 0) throw NOT_FOUND.test(r.stderr) ? new CliError('job not found') : failure('scancel', r);
  }

  async task(array: number, index: number): Promise<number> {
    // Slurm names a task A_I too; each task has its own job id as well.
    const j = this.records(`${array}_${index}`).find((x) => x.array_job_id === array && x.array_task_id === index);
    if (!j) throw new CliError('job not found');
    return j.job_id;
  }

  async tasks(id: number): Promise<JobSummary[]> {
    const records = this.records(String(id)).filter((x) => x.array_job_id === id);
    const rows = records
      .sort((a, b) => (a.array_task_id ?? Number.MAX_SAFE_INTEGER) - (b.array_task_id ?? Number.MAX_SAFE_INTEGER))
      .map((x) => summaryOf(x, this.cluster));
    return setArrayCounts(rows, arrayCounts(records));
  }

  async cancelTask(_id: number, label: string): Promise<void> {
    // By its A_I: the first task's job id is the whole array's for scancel.
    const r = slurm('scancel', [label]);
    if (r.code !== 0) throw NOT_FOUND.test(r.stderr) ? new CliError('job not found') : failure('scancel', r);
  }

  async wait(id: number): Promise<number> {
    for (;;) {
      const job = await this.get(id);
      if (job.result) return job.result.exit_code;
      await sleep(500);
    }
  }

  /** squeue's records for a job list (any state); none for ids the controller does not know. */
  private records(jobs: string): SlurmJob[] {
    const r = slurm('squeue', ['--json', '--states=all', `--jobs=${jobs}`]);
    if (r.code !== 0) {
      if (NOT_FOUND.test(r.stderr)) return [];
      throw failure('squeue', r);
    }
    return parseJobs(r, 'squeue');
  }

  /** The job's output file, as the controller resolved it. */
  private outputFile(id: number): string {
    const r = slurm('scontrol', ['show', 'job', String(id)]);
    if (r.code !== 0) throw NOT_FOUND.test(r.stderr) ? new CliError('job not found') : failure('scontrol', r);
    const m = /\bStdOut=(\S+)/.exec(r.stdout);
    if (!m) throw new CliError(`no output file for job ${id}`);
    return m[1]!;
  }

  async log(id: number): Promise<void> {
    const file = this.outputFile(id);
    let data: Buffer;
    try {
      data = fs.readFileSync(file);
    } catch (e) {
      // Not written yet (a pending job): nothing so far.
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw new CliError(`cannot read ${file}: ${(e as Error).message}`);
    }
    await writeOut(data);
  }

  async follow(id: number): Promise<number> {
    const file = this.outputFile(id);
    let offset = 0;
    const drain = async () => {
      let fd: number;
      try { fd = fs.openSync(file, 'r'); } catch { return; }
      try {
        const buf = Buffer.alloc(1 << 16);
        for (;;) {
          const n = fs.readSync(fd, buf, 0, buf.length, offset);
          if (n <= 0) break;
          offset += n;
          await writeOut(Buffer.from(buf.subarray(0, n)));
        }
      } finally { fs.closeSync(fd); }
    };
    for (;;) {
      await drain();
      const job = await this.get(id);
      if (job.result) {
        await drain();
        return job.result.exit_code;
      }
      await sleep(250);
    }
  }

  async pools(): Promise<PoolView[]> {
    throw new UsageError('--pools cannot be used on a Slurm cluster ([cluster] engine = "slurm"): xinfo lists the nodes and their GRES');
  }

  async info(): Promise<InfoReport> {
    const r = slurm('sinfo', ['--json']);
    if (r.code !== 0) throw failure('sinfo', r);
    let nodes: Array<Record<string, unknown>>;
    try {
      nodes = ((JSON.parse(r.stdout) as { nodes?: Array<Record<string, unknown>> }).nodes) ?? [];
    } catch {
      throw new CliError('sinfo: unexpected output (not JSON)');
    }
    const views = nodes.map((n) => ({
      node: String(n.name ?? n.hostname ?? ''),
      state: String(Array.isArray(n.state) ? n.state.join('+') : n.state ?? '').toLowerCase(),
      cpus: Number(n.cpus ?? 0),
      alloc_cpus: Number(n.alloc_cpus ?? 0),
      gres: String(n.gres ?? ''),
      gres_used: String(n.gres_used ?? ''),
      partitions: Array.isArray(n.partitions) ? n.partitions.map(String) : [],
    }));
    const text = renderTable(['NODE', 'STATE', 'CPUS', 'GRES', 'GRES-USED'],
      views.map((v) => [v.node, v.state, `${v.alloc_cpus}/${v.cpus}`, v.gres || '-', v.gres_used || '-']));
    return { json: views, text };
  }
}

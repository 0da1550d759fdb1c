/**
 * Crash chaos: a workload of short jobs submitted through the protocol while
 * the daemon is SIGKILLed and restarted at seeded moments and a few
 * supervisors (xlurm-stepd) are SIGKILLed, then an audit of what the daemon
 * reports against what the jobs themselves recorded.
 *
 * Every job appends `<XLURM_JOB_ID> start <token>` to a marker file when its
 * payload starts and `<XLURM_JOB_ID> end <code> <token>` just before it exits
 * with <code>. The token (also the job's name) ties a job to the submission
 * that created it, so a submission whose reply was lost can still be found.
 *
 * Used by test/robustness/chaos.ts (about a minute) and bench/soak.js (any
 * duration).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Daemon, tempHome } from './daemon';
import { Rng, exchange, fdTarget, launcherOf, pidsByComm, stopSupervisorsOf } from './probe';
import { waitFor } from './wait';

export const VANISHED = 'executor worker disappeared without an exit result';

type Kind = 'ok' | 'fail' | 'timeout' | 'cancel' | 'victim';

interface Attempt {
  token: string;
  kind: Kind;
  code: number;
  /** accepted: reply with an id; lost: sent, no reply; refused: never reached a daemon; rejected: error reply. */
  outcome?: 'accepted' | 'lost' | 'refused' | 'rejected';
  id?: number;
  sentAt: number;
  repliedAt?: number;
  error?: string;
}

export interface ChaosOptions {
  seed: number;
  /** Submissions and faults stop after this long (ms). */
  durationMs: number;
  /** Stop submitting after this many accepted submissions (default: no limit). */
  maxJobs?: number;
  /** Submissions per second (all submitters together). */
  rate?: number;
  maxRunning?: number;
  /** Supervisors to kill (victim jobs). */
  victims?: number;
  /** Daemon uptime between SIGKILLs: uniform in [min, max] ms. */
  killEveryMs?: [number, number];
  /** Also SIGKILL the supervisor launcher, at a random moment of about half the daemon's uptimes (default true). */
  killLauncher?: boolean;
  /** How long the audit may wait for the last jobs to end (ms). */
  settleMs?: number;
  log?: (line: string) => void;
  /** Where teardown functions go (tap's t, or the soak script's list). */
  teardown: (fn: () => unknown) => void;
}

export interface ChaosReport {
  seed: number;
  seconds: number;
  attempts: number;
  accepted: number;
  lostReplies: number;
  lostRepliesThatExist: number;
  refused: number;
  rejected: number;
  daemonKills: number;
  supervisorKills: number;
  launcherKills: number;
  jobs: number;
  states: Record<string, number>;
  vanishedWithoutStart: number;
  violations: string[];
}

interface JobView {
  id: number; name: string; state: string; started_at: number | null;
  result: { state: string; exit_code: number; error: string | null } | null;
}

function script(a: Attempt, marker: string): string {
  const start = `echo "$XLURM_JOB_ID start ${a.token}" >> ${marker}`;
  const end = (code: number) => `echo "$XLURM_JOB_ID end ${code} ${a.token}" >> ${marker}; exit ${code}`;
  switch (a.kind) {
    case 'ok': case 'fail': return `${start}; sleep 0.$((RANDOM % 4)); ${end(a.code)}`;
    case 'timeout': return `${start}; sleep 5; ${end(0)}`;
    case 'cancel': return `${start}; sleep 3; ${end(0)}`;
    case 'victim': return `${start}; exec sleep 120`;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The supervisor of job `id` under `home` (its stdout is the job's log), if alive. */
export function supervisorOf(home: string, id: number): number | undefined {
  const log = path.join(home, 'jobs', `${id}.log`);
  return pidsByComm('xlurm-stepd').find((pid) => fdTarget(pid, 1) === log);
}

export async function runChaos(opts: ChaosOptions): Promise<ChaosReport> {
  const rng = new Rng(opts.seed);
  const log = opts.log ?? (() => undefined);
  const tap = { teardown: opts.teardown, comment: (...a: unknown[]) => log(a.join(' ')) };
  const home = tempHome(tap, 'xl-chaos');
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-chaos-work-'));
  fs.chmodSync(work, 0o755);
  opts.teardown(() => fs.rmSync(work, { recursive: true, force: true }));
  const marker = path.join(work, 'markers');
  fs.writeFileSync(marker, '');

  const d = new Daemon(tap, home, { maxRunning: opts.maxRunning ?? 8 });
  opts.teardown(async () => { await d.stop(); stopSupervisorsOf(home); });
  await d.start();

  const t0 = Date.now();
  const until = t0 + opts.durationMs;
  const rate = opts.rate ?? 12;
  const maxJobs = opts.maxJobs ?? Infinity;
  const attempts: Attempt[] = [];
  const victimsWanted = opts.victims ?? 4;
  const victims: Attempt[] = [];
  const killedSupervisors = new Set<number>(); // job ids
  let daemonKills = 0;
  let launcherKills = 0;
  let up = true;
  let seq = 0;
  const accepted = () => attempts.filter((a) => a.outcome === 'accepted').length;
  const submitting = () => Date.now() < until && accepted() < maxJobs;

  function nextKind(): Kind {
    if (victims.length < victimsWanted && rng.chance(0.05)) return 'victim';
    const r = rng.next();
    return r < 0.45 ? 'ok' : r < 0.7 ? 'fail' : r < 0.85 ? 'timeout' : 'cancel';
  }

  async function submitOne(): Promise<void> {
    const kind = nextKind();
    const a: Attempt = { token: `c${opts.seed}x${seq++}`, kind, code: kind === 'fail' ? rng.int(1, 99) : 0, sentAt: Date.now() };
    if (kind === 'victim') victims.push(a);
    attempts.push(a);
    const args = {
      command: ['bash', '-c', script(a, marker)], cwd: work, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      name: a.token, count: 0, kind: null, time_limit: kind === 'timeout' ? 1 : null, script: null,
    };
    const r = await exchange(d.socket, JSON.stringify({ v: 1, op: 'submit', args }) + '\n', { timeout: 30000 });
    a.repliedAt = Date.now();
    const f = r.frame as { ok?: boolean; result?: { id: number }; error?: { code: string; message: string } } | undefined;
    if (r.connectError) a.outcome = 'refused';
    else if (!f) a.outcome = 'lost';
    else if (f.ok && f.result) { a.outcome = 'accepted'; a.id = f.result.id; }
    else { a.outcome = 'rejected'; a.error = `${f.error?.code}: ${f.error?.message}`; }
    if (a.outcome === 'accepted' && kind === 'cancel') void cancelLater(a);
    if (a.outcome !== 'accepted' && kind === 'victim') victims.splice(victims.indexOf(a), 1);
  }

  /** Cancel at a random moment (pending or running); retried while the daemon is down. */
  async function cancelLater(a: Attempt): Promise<void> {
    await sleep(rng.int(0, 1500));
    const deadline = Date.now() + 60000;
    while (Date.now() < deadline) {
      const r = await exchange(d.socket, JSON.stringify({ v: 1, op: 'cancel', args: { id: a.id } }) + '\n', { timeout: 10000 });
      if ((r.frame as { ok?: boolean } | undefined)?.ok) return;
      await sleep(100);
    }
  }

  /** Victims: SIGKILL the supervisor once the payload has started (the marker says so). */
  const markerText = () => fs.readFileSync(marker, 'utf8');
  async function killVictims(): Promise<void> {
    for (const v of victims) {
      if (v.id === undefined || killedSupervisors.has(v.id)) continue;
      if (!markerText().includes(`${v.id} start ${v.token}\n`)) continue;
      const pid = supervisorOf(home, v.id);
      if (pid === undefined) continue;
      process.kill(pid, 'SIGKILL');
      killedSupervisors.add(v.id);
      log(`chaos: SIGKILL xlurm-stepd ${pid} (job ${v.id})`);
    }
  }

  // Submitters: `rate` per second on average, four at a time at most.
  const inflight = new Set<Promise<void>>();
  const submitter = (async () => {
    while (submitting()) {
      if (inflight.size < 4) {
        const p = submitOne().finally(() => inflight.delete(p));
        inflight.add(p);
      }
      await sleep(rng.int(0, Math.round(2000 / rate)));
    }
    await Promise.all(inflight);
  })();

  // The killer: SIGKILL the daemon after a random uptime, restart after a random pause.
  const [kMin, kMax] = opts.killEveryMs ?? [2500, 6000];
  const killer = (async () => {
    while (submitting()) {
      const wait = rng.int(kMin, kMax);
      const next = Date.now() + wait;
      // The launcher dies at a random moment of about half the uptimes (its supervisors live on).
      let launcherAt = (opts.killLauncher ?? true) && rng.chance(0.5) ? Date.now() + rng.int(0, wait) : Infinity;
      while (Date.now() < next && submitting()) {
        await killVictims();
        if (Date.now() >= launcherAt) {
          const pid = d.proc?.pid !== undefined ? launcherOf(d.proc.pid) : undefined;
          if (pid !== undefined) {
            try { process.kill(pid, 'SIGKILL'); launcherKills++; log(`chaos: SIGKILL launcher ${pid}`); } catch { /* gone */ }
          }
          launcherAt = Infinity;
        }
        await sleep(50);
      }
      if (!submitting()) break;
      up = false;
      await d.kill('SIGKILL');
      daemonKills++;
      log(`chaos: SIGKILL daemon (#${daemonKills}) at ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      const down = Date.now() + rng.int(0, 800);
      while (Date.now() < down) { await killVictims(); await sleep(50); }
      await d.start();
      up = true;
    }
  })();

  await Promise.all([submitter, killer]);
  if (!up) await d.start();
  log(`chaos: faults stop at ${((Date.now() - t0) / 1000).toFixed(1)} s; ${accepted()} jobs accepted`);

  // Settle. A victim whose reply was lost is found by its name; one that
  // failed before its payload started (a crash between commit and spawn) is
  // left alone; every other victim's supervisor is killed once it runs.
  const settleMs = opts.settleMs ?? 120000;
  const all = await waitFor(async () => {
    const q = await d.request('queue', { all: true }) as { ok: boolean; result: JobView[] };
    return q.ok ? q.result : undefined;
  }, { timeout: settleMs, what: 'queue' });
  for (const v of victims) if (v.id === undefined) v.id = all.find((j) => j.name === v.token)?.id;
  await waitFor(async () => {
    await killVictims();
    for (const v of victims) {
      if (v.id === undefined || killedSupervisors.has(v.id)) continue;
      const j = await d.job(v.id);
      if (j.state !== 'PENDING' && j.state !== 'RUNNING') v.id = undefined;
    }
    return victims.every((v) => v.id === undefined || killedSupervisors.has(v.id));
  }, { timeout: settleMs, interval: 100, what: 'every victim started and its supervisor killed' });
  const views = await waitFor(async () => {
    const q = await d.request('queue', { all: true }) as { ok: boolean; result: JobView[] };
    if (!q.ok) return undefined;
    return q.result.every((j) => j.state !== 'PENDING' && j.state !== 'RUNNING') ? q.result : undefined;
  }, { timeout: settleMs, interval: 200, what: 'every job terminal' });

  // Audit.
  const violations: string[] = [];
  const bad = (msg: string) => { if (violations.length < 50) violations.push(msg); };
  const jobs = new Map<number, JobView>();
  for (const s of views) {
    const full = await d.job(s.id);
    jobs.set(s.id, { id: full.id, name: full.spec.name, state: full.state, started_at: full.started_at, result: full.result });
  }
  const byToken = new Map<string, JobView[]>();
  for (const j of jobs.values()) byToken.set(j.name, [...(byToken.get(j.name) ?? []), j]);
  const attemptByToken = new Map(attempts.map((a) => [a.token, a]));

  // Ids: unique (a Map key), and increasing with submission order.
  const acc = attempts.filter((a) => a.outcome === 'accepted');
  const bySent = [...acc].sort((x, y) => x.sentAt - y.sentAt);
  const byReply = [...acc].sort((x, y) => x.repliedAt! - y.repliedAt!);
  let answered = 0;
  let maxAnswered: Attempt | undefined;
  for (const b of bySent) {
    while (answered < byReply.length && byReply[answered]!.repliedAt! < b.sentAt) {
      const a = byReply[answered++]!;
      if (!maxAnswered || a.id! > maxAnswered.id!) maxAnswered = a;
    }
    if (maxAnswered && maxAnswered.id! >= b.id!) bad(`id ${b.id} (${b.token}) was submitted after id ${maxAnswered.id} (${maxAnswered.token}) was answered, but is not larger`);
  }
  if (new Set(acc.map((a) => a.id)).size !== acc.length) bad('the daemon returned one id twice');

  // Accounting: each accepted submission is exactly its job; a lost reply may or may not exist; nothing else exists.
  let lostExist = 0;
  for (const a of attempts) {
    const found = byToken.get(a.token) ?? [];
    if (found.length > 1) bad(`submission ${a.token} created ${found.length} jobs: ${found.map((j) => j.id).join(', ')}`);
    if (a.outcome === 'accepted') {
      if (!jobs.has(a.id!)) bad(`accepted job ${a.id} (${a.token}) is missing`);
      else if (jobs.get(a.id!)!.name !== a.token) bad(`job ${a.id} should be ${a.token}, is ${jobs.get(a.id!)!.name}`);
    } else if (a.outcome === 'lost') {
      if (found.length === 1) { lostExist++; a.id = found[0]!.id; }
    } else if (found.length) bad(`submission ${a.token} was ${a.outcome} (${a.error ?? 'no daemon'}) but job ${found[0]!.id} exists`);
  }
  for (const j of jobs.values()) if (!attemptByToken.has(j.name)) bad(`job ${j.id} (${j.name}) matches no submission`);

  // Markers: what the jobs themselves say.
  const starts = new Map<number, string[]>();
  const ends = new Map<number, Array<{ code: number; token: string }>>();
  for (const line of markerText().split('\n')) {
    if (!line) continue;
    const m = /^(\d+) (start|end) (?:(\d+) )?(\S+)$/.exec(line);
    if (!m) { bad(`garbled marker line ${JSON.stringify(line)}`); continue; }
    const id = Number(m[1]);
    if (m[2] === 'start') starts.set(id, [...(starts.get(id) ?? []), m[4]!]);
    else ends.set(id, [...(ends.get(id) ?? []), { code: Number(m[3]), token: m[4]! }]);
  }
  for (const [id, toks] of starts) {
    if (toks.length > 1) bad(`job ${id} ran ${toks.length} times`);
    const j = jobs.get(id);
    if (!j) bad(`a job with id ${id} ran but the daemon does not know it`);
    else if (toks[0] !== j.name) bad(`job ${id} ran the payload of ${toks[0]} but is ${j.name}`);
  }
  let vanishedWithoutStart = 0;
  const states: Record<string, number> = {};
  for (const j of jobs.values()) {
    const a = attemptByToken.get(j.name);
    const started = starts.get(j.id)?.length ?? 0;
    const ended = ends.get(j.id) ?? [];
    const r = j.result;
    const key = r?.error === VANISHED ? 'FAILED (vanished)' : r?.error ? `${j.state} (${r.error})` : j.state;
    states[key] = (states[key] ?? 0) + 1;
    const where = `job ${j.id} (${j.name}, ${a?.kind}) ${j.state}/${r?.exit_code}/${r?.error ?? '-'} with ${started} start and ${ended.length} end marker(s)`;
    if (!r) { bad(`${where}: no result`); continue; }
    if (ended.length > 1) bad(`${where}: ended twice`);
    if (started && j.started_at === null) bad(`${where}: ran but has no start time`);
    const victim = killedSupervisors.has(j.id);
    switch (j.state) {
      case 'COMPLETED':
        if (r.exit_code !== 0 || started !== 1 || ended.length !== 1 || ended[0]!.code !== 0) bad(where);
        break;
      case 'FAILED':
        if (r.error === VANISHED) {
          if (r.exit_code !== 1) bad(where);
          if (victim ? (started !== 1 || ended.length !== 0) : (started !== 0 || ended.length !== 0)) bad(`${where}: a job that ran (or finished) reported as vanished`);
          if (!victim) {
            vanishedWithoutStart++;
            let logText = '';
            try { logText = fs.readFileSync(path.join(home, 'jobs', `${j.id}.log`), 'utf8').slice(0, 200); } catch { logText = '(no log)'; }
            log(`chaos: ${where}; started_at ${j.started_at}; its log: ${JSON.stringify(logText)}; lock file ${fs.existsSync(path.join(home, 'jobs', `${j.id}.lock`)) ? 'exists' : 'missing'}`);
          }
        } else if (r.error !== null) {
          if (started !== 0) bad(`${where}: failed with an executor error after its payload started`);
        } else if (ended.length !== 1 || ended[0]!.code !== r.exit_code || started !== 1) bad(`${where}: exit code differs from what the job recorded`);
        break;
      case 'TIMED_OUT':
        if (r.exit_code !== 124 || a?.kind !== 'timeout' || started !== 1 || ended.length !== 0) bad(where);
        break;
      case 'CANCELLED':
        if (r.exit_code !== 130 || a?.kind !== 'cancel' || ended.length !== 0 || (j.started_at === null && started !== 0)) bad(where);
        break;
      default:
        bad(`${where}: not terminal`);
    }
    if (victim && !(j.state === 'FAILED' && r.error === VANISHED)) bad(`${where}: its supervisor was killed, expected FAILED "${VANISHED}"`);
  }
  for (const id of killedSupervisors) if (!jobs.has(id)) bad(`victim job ${id} is missing`);

  return {
    seed: opts.seed,
    seconds: Math.round((Date.now() - t0) / 100) / 10,
    attempts: attempts.length,
    accepted: acc.length,
    lostReplies: attempts.filter((a) => a.outcome === 'lost').length,
    lostRepliesThatExist: lostExist,
    refused: attempts.filter((a) => a.outcome === 'refused').length,
    rejected: attempts.filter((a) => a.outcome === 'rejected').length,
    daemonKills,
    supervisorKills: killedSupervisors.size,
    launcherKills,
    jobs: jobs.size,
    states,
    vanishedWithoutStart,
    violations,
  };
}

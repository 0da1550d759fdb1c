/**
 * A real, private single-node Slurm for the Slurm tests (docs/behaviour.md
 * §27.3): Debian's slurm-wlm (installed where missing, as root), a
 * slurmctld and a slurmd started in the foreground from a temporary
 * directory with their own slurm.conf, gres.conf, ports, state and spool
 * directories (auth/none: no munge), and stopped again by their own PIDs at
 * the test's teardown, also when the test fails. Clients reach it through
 * SLURM_CONF; the xlurm clients through a configuration file with
 * `[cluster] engine = "slurm"`.
 *
 * Slurm 22.05 drops a `gpu` GRES without `File=` ("Removing file-less GPU")
 * and marks the node invalid, so the test GPUs get character-device nodes
 * made with mknod in the test's directory; so do the NPUs, so that Slurm
 * reports which indices it allocated (a count-only GRES names none).
 *
 * With `accounting`, the controller keeps its records in a real accounting
 * database (docs/behaviour.md §27.3): a private MariaDB server (Debian's
 * mariadb-server: its own data directory, socket and loopback port, grant
 * tables off since nothing but this test reaches it) and a slurmdbd on it,
 * both started before slurmctld and stopped after it; finished jobs then
 * leave squeue after MinJobAge (2 s) and only `sacct` still knows them.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { CLI_BIN, IS_ROOT } from './env';
import { nodeCommand, runProcess, type RunResult } from './daemon';
import { ensureTool } from './tools';
import { waitFor } from './wait';
import { peerMissing, type Tap } from './tap';

export interface SlurmOpts {
  /** GRES name → device count (File= nodes in the test's directory). Default { gpu: 2, npu: 4 }. */
  gres?: Record<string, number>;
  /** A TaskProlog script's text (written to the directory and named in slurm.conf). */
  taskProlog?: string;
  /** Extra lines for [cluster] in the clients' xlurm.toml (after engine = "slurm"). */
  cluster?: string;
  /** Keep accounting in slurmdbd on a private MariaDB; finished jobs leave squeue after 2 s. */
  accounting?: boolean;
}

export interface Slurm {
  dir: string;
  conf: string;
  /** The clients' xlurm.toml. */
  xlurmConfig: string;
  /** The environment for Slurm's and xlurm's clients. */
  env: Record<string, string>;
  /** Run an xlurm client (xrun, xbatch, … or xlurm) against this Slurm. */
  run(bin: string, args: string[], opts?: { cwd?: string; env?: Record<string, string>; timeout?: number; input?: string }): Promise<RunResult>;
  /** Start a client without waiting. */
  spawnCli(bin: string, args: string[], opts?: { cwd?: string }): ChildProcess;
  /** Run one of Slurm's own commands (synchronously). */
  slurm(cmd: string, args: string[]): { code: number | null; stdout: string; stderr: string };
  /** Slurm's state of a job (squeue --states=all), '' when unknown. */
  state(id: number): string;
  waitState(id: number, states: string[], timeout?: number): Promise<string>;
}

/** Free TCP ports on the loopback (closed again before Slurm binds them). */
async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(Array.from({ length: n }, () => new Promise<net.Server>((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '0.0.0.0', () => resolve(s));
  })));
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

/** Why Slurm cannot run here, or undefined. */
export function slurmMissing(accounting = false): string | undefined {
  if (!IS_ROOT) return 'the private Slurm runs its daemons as root (SlurmUser=root)';
  const tools: Array<readonly [string, string]> = [['slurmctld', 'slurmctld'], ['slurmd', 'slurmd'], ['sbatch', 'slurm-client']];
  if (accounting) tools.push(['slurmdbd', 'slurmdbd'], ['mariadbd', 'mariadb-server'], ['mariadb-install-db', 'mariadb-server'], ['sacct', 'slurm-client']);
  for (const [cmd, pkg] of tools) {
    const why = ensureTool(cmd, pkg);
    if (why) return why;
  }
  return undefined;
}

function kill(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) { resolve(); return; }
    const timer = setTimeout(() => { try { child.kill('SIGKILL'); } catch { /* gone */ } }, 5000);
    child.once('exit', () => { clearTimeout(timer); resolve(); });
    try { child.kill('SIGTERM'); } catch { clearTimeout(timer); resolve(); }
  });
}

/**
 * Start the private Slurm; undefined (and the test skipped with the reason)
 * where Slurm cannot be installed or started.
 */
export async function startSlurm(t: Tap, opts: SlurmOpts = {}): Promise<Slurm | undefined> {
  const missing = slurmMissing(opts.accounting);
  if (missing) { peerMissing(t, `no Slurm: ${missing}`); return undefined; }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-slurm-'));
  fs.chmodSync(dir, 0o755);
  for (const d of ['state', 'spool', 'log', 'dev', 'work']) fs.mkdirSync(path.join(dir, d));
  const gres = opts.gres ?? { gpu: 2, npu: 4 };
  const gresLines: string[] = [];
  for (const [name, count] of Object.entries(gres)) {
    for (let i = 0; i < count; i++) {
      const node = path.join(dir, 'dev', `${name}${i}`);
      // /dev/null's numbers: a harmless character device Slurm can stat.
      const r = spawnSync('mknod', [node, 'c', '1', '3']);
      if (r.status !== 0) { peerMissing(t, `mknod ${node} failed: ${r.stderr.toString().trim()}`); fs.rmSync(dir, { recursive: true, force: true }); return undefined; }
    }
    gresLines.push(`NodeName=localhost Name=${name} File=${path.join(dir, 'dev', name)}[0-${count - 1}]`);
  }
  fs.writeFileSync(path.join(dir, 'gres.conf'), gresLines.join('\n') + '\n');
  const hw = spawnSync('slurmd', ['-C'], { encoding: 'utf8' }).stdout.split('\n')[0] ?? '';
  const cpus = /CPUs=(\d+)/.exec(hw)?.[1] ?? '1';
  const topo = (hw.match(/(Boards|SocketsPerBoard|CoresPerSocket|ThreadsPerCore)=\d+/g) ?? []).join(' ');
  const [ctldPort, dPort, dbdPort, dbPort] = await freePorts(4);
  const accounting = opts.accounting ? [
    'AccountingStorageType=accounting_storage/slurmdbd',
    'AccountingStorageHost=localhost',
    `AccountingStoragePort=${dbdPort}`,
    // Finished jobs leave the controller soon; sacct is then the only source (what the client must use).
    'MinJobAge=2',
  ] : [
    // Finished jobs stay in squeue for the whole test file (there is no accounting database).
    'MinJobAge=1800',
  ];
  let prolog = '';
  if (opts.taskProlog !== undefined) {
    prolog = path.join(dir, 'task-prolog');
    fs.writeFileSync(prolog, opts.taskProlog, { mode: 0o755 });
  }
  const conf = path.join(dir, 'slurm.conf');
  fs.writeFileSync(conf, [
    'ClusterName=xltest',
    'SlurmctldHost=localhost',
    'SlurmUser=root',
    'SlurmdUser=root',
    `SlurmctldPort=${ctldPort}`,
    `SlurmdPort=${dPort}`,
    // No munge: the daemons and clients all run on this host, in this test.
    'AuthType=auth/none',
    'CredType=cred/none',
    `StateSaveLocation=${dir}/state`,
    `SlurmdSpoolDir=${dir}/spool`,
    `SlurmctldPidFile=${dir}/slurmctld.pid`,
    `SlurmdPidFile=${dir}/slurmd.pid`,
    `SlurmctldLogFile=${dir}/log/slurmctld.log`,
    `SlurmdLogFile=${dir}/log/slurmd.log`,
    'ProctrackType=proctrack/linuxproc',
    'TaskPlugin=task/none',
    'JobAcctGatherType=jobacct_gather/none',
    'AccountingStorageType=accounting_storage/none',
    'JobCompType=jobcomp/none',
    'MpiDefault=none',
    'SwitchType=switch/none',
    'SchedulerType=sched/backfill',
    'SchedulerParameters=batch_sched_delay=0,sched_min_interval=0,sched_interval=1',
    'SelectType=select/cons_tres',
    'SelectTypeParameters=CR_Core',
    ...accounting,
    'ReturnToService=2',
    'InactiveLimit=0',
    'KillWait=1',
    'Waittime=0',
    'MailProg=/bin/true',
    ...(prolog ? [`TaskProlog=${prolog}`] : []),
    `GresTypes=${Object.keys(gres).join(',')}`,
    `NodeName=localhost NodeAddr=127.0.0.1 CPUs=${cpus} ${topo} RealMemory=1000 Gres=${Object.entries(gres).map(([n, c]) => `${n}:${c}`).join(',')} State=UNKNOWN`,
    'PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:16',
  ].join('\n') + '\n');
  const xlurmConfig = path.join(dir, 'xlurm.toml');
  fs.writeFileSync(xlurmConfig, `[cluster]\nengine = "slurm"\n${opts.cluster ?? 'gres = { nv = "gpu", asc = "npu" }'}\n`);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin',
    LANG: 'C.UTF-8', TZ: 'UTC', HOME: process.env.HOME ?? '/root',
    SLURM_CONF: conf, XLURM_CONFIG: xlurmConfig,
    XLURM_HOME: path.join(dir, 'xlurm-home-unused'),
  };
  const daemons: ChildProcess[] = [];
  const slurm = (cmd: string, args: string[]) => {
    const r = spawnSync(cmd, args, { encoding: 'utf8', env, timeout: 30000 });
    return { code: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
  };
  const stop = async () => {
    // The jobs first (their steps outlive slurmd otherwise), then the daemons by their PIDs.
    if (daemons.length) slurm('scancel', ['--full', '--user=root']);
    await waitFor(() => slurm('squeue', ['-h', '-t', 'R,CG', '-o', '%i']).stdout.trim() === '', { timeout: 10000 }).catch(() => undefined);
    await Promise.all(daemons.map(kill));
    fs.rmSync(dir, { recursive: true, force: true });
  };
  t.teardown(stop);
  // A test process that dies without its teardown still takes its daemons with it.
  const onExit = () => { for (const c of daemons) { try { c.kill('SIGKILL'); } catch { /* gone */ } } };
  process.once('exit', onExit);
  const start = (cmd: string, args: string[]) => {
    const out = fs.openSync(path.join(dir, 'log', `${cmd}.out`), 'w');
    // From /, so a job's slurmstepd never holds a test's directory as its cwd.
    const child = spawn(cmd, args, { cwd: '/', env, stdio: ['ignore', out, out], detached: true });
    fs.closeSync(out);
    daemons.push(child);
    return child;
  };
  const logs = () => ['slurmctld.out', 'slurmd.out', 'slurmctld.log', 'slurmd.log', 'slurmdbd.log', 'mariadbd.out', 'mariadb.err']
    .map((f) => { try { return `--- ${f}\n${fs.readFileSync(path.join(dir, 'log', f), 'utf8').split('\n').slice(-15).join('\n')}`; } catch { return ''; } }).join('\n');
  try {
    if (opts.accounting) await startAccounting(dir, conf, dbdPort!, dbPort!, start, slurm);
    start('slurmctld', ['-D', '-i', '-c', '-f', conf]);
    await waitFor(() => /is UP/.test(slurm('scontrol', ['ping']).stdout), { timeout: 30000, what: 'slurmctld up' });
    start('slurmd', ['-D', '-N', 'localhost', '-f', conf]);
    await waitFor(() => /^(idle|mix|alloc)/.test(slurm('sinfo', ['-h', '-N', '-o', '%t']).stdout.trim()), { timeout: 30000, what: 'the node idle' });
  } catch (e) {
    const why = `Slurm did not start: ${(e as Error).message.split('\n')[0]}\n${logs()}`;
    t.comment(why);
    peerMissing(t, why.split('\n')[0]!);
    return undefined;
  }
  const state = (id: number) => slurm('squeue', ['-h', '--states=all', '-j', String(id), '-o', '%T']).stdout.trim();
  return {
    dir, conf, xlurmConfig, env, slurm, state,
    run: (bin, args, o = {}) => runProcess(...nodeCommand([path.join(CLI_BIN, bin), ...args]), {
      env: { ...env, ...(o.env ?? {}) }, cwd: o.cwd ?? path.join(dir, 'work'), timeout: o.timeout, input: o.input,
    }),
    spawnCli: (bin, args, o = {}) => spawn(...nodeCommand([path.join(CLI_BIN, bin), ...args]), {
      env, cwd: o.cwd ?? path.join(dir, 'work'), stdio: ['ignore', 'pipe', 'pipe'],
    }),
    waitState: (id, states, timeout = 30000) => waitFor(() => { const s = state(id); return states.includes(s) ? s : undefined; },
      { timeout, what: `Slurm job ${id} in ${states.join('|')}` }),
  };
}

/**
 * The accounting database for one private Slurm: MariaDB in `dir`/db (initialised here, a few
 * seconds), reached by slurmdbd over the loopback, then slurmdbd with `slurmdbd.conf` beside
 * slurm.conf (where slurmdbd looks for it through SLURM_CONF; mode 0600, as it insists), and
 * the test cluster registered so that slurmctld's records are kept.
 */
async function startAccounting(dir: string, conf: string, dbdPort: number, dbPort: number,
  start: (cmd: string, args: string[]) => ChildProcess,
  slurm: (cmd: string, args: string[]) => { code: number | null; stdout: string; stderr: string }): Promise<void> {
  const db = path.join(dir, 'db');
  fs.mkdirSync(db);
  const init = spawnSync('mariadb-install-db', ['--no-defaults', `--datadir=${db}/data`, '--user=root',
    '--auth-root-authentication-method=normal', '--skip-test-db'], { encoding: 'utf8', timeout: 120_000 });
  if (init.status !== 0) throw new Error(`mariadb-install-db failed: ${(init.stderr || init.stdout).trim().split('\n').pop()}`);
  const sock = path.join(db, 'mysql.sock');
  start('mariadbd', ['--no-defaults', `--datadir=${db}/data`, '--user=root', `--socket=${sock}`, `--port=${dbPort}`,
    '--bind-address=127.0.0.1', '--skip-grant-tables', '--skip-log-bin', `--pid-file=${db}/mariadbd.pid`,
    `--log-error=${dir}/log/mariadb.err`, '--innodb-buffer-pool-size=32M']);
  await waitFor(() => fs.existsSync(sock), { timeout: 60000, what: 'MariaDB up' });
  fs.writeFileSync(path.join(path.dirname(conf), 'slurmdbd.conf'), [
    'AuthType=auth/none',
    'DbdHost=localhost',
    `DbdPort=${dbdPort}`,
    'SlurmUser=root',
    `PidFile=${dir}/slurmdbd.pid`,
    `LogFile=${dir}/log/slurmdbd.log`,
    'StorageType=accounting_storage/mysql',
    'StorageHost=127.0.0.1',
    `StoragePort=${dbPort}`,
    'StorageUser=root',
    'StorageLoc=xltest_acct',
  ].join('\n') + '\n', { mode: 0o600 });
  start('slurmdbd', ['-D']);
  await waitFor(() => slurm('sacctmgr', ['-n', '-P', 'list', 'cluster', 'format=cluster']).code === 0, { timeout: 60000, what: 'slurmdbd up' });
  const add = slurm('sacctmgr', ['-i', 'add', 'cluster', 'xltest']);
  if (add.code !== 0 && !/already exists|Nothing new/i.test(add.stdout + add.stderr)) throw new Error(`sacctmgr add cluster: ${add.stderr.trim()}`);
}

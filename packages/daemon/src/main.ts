/**
 * Entry point of the daemon package: `daemon` (run the scheduler in the
 * foreground) and `clean` (offline log removal). Runnable as a script
 * (`node dist/main.js daemon --backend none`) and callable in-process by
 * `xlurm daemon` / `xlurm clean` through `daemonMain`.
 */
import * as fs from 'node:fs';
import { XlurmError, initStateDir, resolveHome, statePaths } from '@xlurm/protocol';
import { flockExclusive, stepdPath } from '@xlurm/native';
import { ConfigError, parseDaemonArgs } from './config/args';
import { configPath, keysFromFlags, loadDaemonConfig, type DaemonConfig } from './config/daemon';
import { ConfigFileError, formatProblem } from './config/load';
import { checkGroupIds } from './config/groups';
import { Core } from './core';
import { DeviceManager, pollIntervalFrom } from './devices/manager';
import { DiscoveryError, discover } from './devices/discovery';
import { registerBackends } from './devices/register';
import { logLine } from './log';
import { Runner } from './runner/runner';
import { JobLimits } from './resources/job-limits';
import { JobShares } from './sharing/job-share';
import { setCardMemory } from './sharing/weight';
import { resourcesOf } from './resources/room';
import { startHostProtection } from './resources/protection';
import { CLEANUP_INTERVAL_MS, runCleanup } from './retention';
import { Server } from './server';
import { reloadConfig } from './handlers/reload';
import { Store } from './store/store';
import { clean } from './clean';
import { Sampler } from './accounting/sampler';

class StartupError extends Error {}

function fail(msg: string): never { throw new StartupError(msg); }

/** Run the scheduler until SIGINT/SIGTERM or an accepted stop/restart. */
export async function runDaemon(cfg: DaemonConfig): Promise<void> {
  const home = resolveHome();
  initStateDir(home);
  const p = statePaths(home);
  const lockFd = fs.openSync(p.daemonLock, fs.constants.O_RDWR | fs.constants.O_CREAT, 0o600);
  if (!flockExclusive(lockFd)) { fs.closeSync(lockFd); fail('xlurm daemon is already running'); }
  // What was set up so far, undone in reverse order when the daemon stops or
  // its start fails half-way: a failed start must not keep daemon.lock (or
  // its signal handlers) in a process that goes on, such as tests or a
  // restart in the same process.
  const undo: Array<() => void> = [() => fs.closeSync(lockFd)];
  try {
    await serve(cfg, home, p, undo);
  } finally {
    while (undo.length) {
      try { undo.pop()!(); } catch { /* best effort: the rest must still be undone */ }
    }
  }
}

/** The daemon's life once it holds daemon.lock; `undo` collects how to take down what it sets up. */
async function serve(cfg: DaemonConfig, home: string, p: ReturnType<typeof statePaths>, undo: Array<() => void>): Promise<void> {
  let stopping: (() => void) | undefined;
  const stopped = new Promise<void>((resolve) => { stopping = resolve; });
  const onSignal = () => stopping!();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // SIGHUP reloads the configuration once the daemon serves; before that it is ignored.
  let onHangup: () => void = () => undefined;
  const hangup = () => onHangup();
  process.on('SIGHUP', hangup);
  undo.push(() => { process.off('SIGINT', onSignal); process.off('SIGTERM', onSignal); process.off('SIGHUP', hangup); });

  // Library overrides and PATH come from the daemon's own environment, read
  // here once: nothing in a submitted job's environment reaches this.
  registerBackends();
  let backends;
  try {
    backends = discover(cfg.backend, process.env, logLine);
  } catch (e) {
    if (e instanceof DiscoveryError) fail(e.message);
    throw e;
  }
  let core!: Core;
  const devices = new DeviceManager(backends, () => core?.scheduleSoon(), logLine, pollIntervalFrom(process.env));
  setCardMemory((d) => devices.memoryTotal(d)); // a slice's weight in usage (sharing/weight.ts)
  undo.push(() => devices.stop());
  const excludeFromFlag = keysFromFlags(cfg).includes('daemon.exclude_device_ids');
  for (const id of cfg.excludeIds) {
    if (!devices.hasId(id)) {
      const key = 'daemon.exclude_device_ids';
      fail(excludeFromFlag ? `unknown device ID in --exclude-device-ids: ${id}`
        : formatProblem({ file: cfg.source.file, line: cfg.source.lines.get(key), key, problem: `unknown device ID ${id}` }));
    }
    devices.excluded.add(id);
  }
  const badGroup = checkGroupIds(cfg.groups, devices.inventory);
  if (badGroup) fail(formatProblem({ file: cfg.source.file, line: cfg.source.lines.get(badGroup.key), ...badGroup }));
  const store = new Store(p.db);
  undo.push(() => store.close());
  store.onSyncError = (e) => logLine(`cannot sync the job database: ${e.message}; waiting requests get a storage error`);
  const euid = process.geteuid!();
  // Each job's cgroup (docs/behaviour.md §24.3). XLURM_CGROUP_ROOT comes from the daemon's own
  // environment (tests, unusual mounts), never from a job's.
  const limits = JobLimits.forHost(home, euid === 0, () => resourcesOf(core.cfg), logLine, process.env.XLURM_CGROUP_ROOT || undefined);
  limits.numaNodeOf = (d) => devices.numaNodeOf(d); // a job's CPUs near its devices' NUMA node
  const runner = new Runner(home, stepdPath(), euid === 0, {
    finished: (id, o) => core.complete(id, o),
    deferred: (id, reason) => core.deferStart(id, reason),
  }, logLine, () => core.now(), limits, new JobShares(home, () => core.cfg.sharing, euid, logLine));
  undo.push(() => runner.stop());
  core = new Core(home, cfg, store, devices, runner, euid, logLine);
  // Device isolation (the cgroup layer's hook, set before any job starts) and the low-memory
  // guard (docs/behaviour.md §24.7, §24.8).
  const protection = startHostProtection(core, devices, { cgroups: limits.cgroups, log: logLine, ...(euid === 0 ? {} : { why: 'cgroups need a daemon running as root' }) });
  undo.push(() => protection.stop());
  limits.isolation = protection.isolation; // a device job whose isolation fails is refused and counted (§28.7)
  // A missing lock file proves "never spawned" only within one boot: after a
  // power loss the file's (unsynced) directory entry may be gone although the
  // supervisor ran. So only a restart in the same boot requeues such a job.
  let bootId = '';
  try { bootId = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(); } catch { bootId = ''; }
  runner.trustMissingLock = bootId !== '' && store.swapBootId(bootId) === bootId;
  core.recover();
  limits.sweep(new Set(core.runningIds())); // cgroups of jobs that ended while no daemon ran
  await devices.start();
  core.scheduleSoon();
  runCleanup(core);
  // A short retention (tests, small disks) is honoured within its own period;
  // a reload that changes it cleans up at once and re-arms the timer.
  const cleanupPeriod = (c: DaemonConfig) => Math.min(CLEANUP_INTERVAL_MS, Math.max(1000, c.retentionSecs * 1000));
  let cleanupTimer = setInterval(() => runCleanup(core), cleanupPeriod(cfg));
  cleanupTimer.unref();
  undo.push(() => clearInterval(cleanupTimer));
  core.configApplied = (c) => {
    clearInterval(cleanupTimer);
    runCleanup(core);
    cleanupTimer = setInterval(() => runCleanup(core), cleanupPeriod(c));
    cleanupTimer.unref();
    sampler.configure(c.accounting);
  };
  // Samples and the metrics file (docs/behaviour.md §26.2, §26.3): from the device layer's latest probes.
  const sampler = new Sampler(core, devices, logLine);
  undo.push(() => sampler.stop());
  sampler.configure(cfg.accounting);

  const server = new Server(core, () => stopping!());
  try { fs.unlinkSync(p.socket); } catch { /* no stale socket */ }
  try {
    await server.listen(p.socket);
  } catch {
    fail('cannot bind local socket (XLURM_HOME may be too long)');
  }
  // Anyone may connect to the root daemon: peer credentials decide. A
  // non-root (test) daemon is reachable by its own account only.
  fs.chmodSync(p.socket, euid === 0 ? 0o666 : 0o600);
  logLine(`xlurm daemon ${process.pid} serving ${p.socket} (backend ${cfg.backend}: ${devices.inventory.length} device(s), max-running ${cfg.maxRunning}; ` +
    `configuration ${cfg.source.file}${cfg.source.found ? '' : ', no such file: defaults'})`);
  // Device isolation's off state is said now, with the serving line, not first at some later job start.
  protection.announce();
  onHangup = () => {
    try {
      reloadConfig(core); // logs what changed
    } catch (e) {
      if (!(e instanceof XlurmError)) throw e;
      logLine(`SIGHUP: reload refused: ${e.message.replace(/\n/g, '; ')}`);
    }
  };

  await stopped;
  logLine('xlurm daemon stopping; running jobs continue');
  clearInterval(cleanupTimer);
  try { fs.unlinkSync(p.socket); } catch { /* already gone */ }
  await server.close();
  // Then, through `undo`: the runner, the store, the devices, the signal handlers, daemon.lock.
}

/** `daemon …` or `clean`; resolves to the process exit code. */
export async function daemonMain(argv: string[]): Promise<number> {
  process.umask(0o077);
  const [cmd, ...rest] = argv;
  try {
    if (cmd === 'daemon' || cmd === '__daemon') {
      // libuv's thread pool (read once, at its first use) carries both WAL
      // syncs and supervisor spawns, each of which blocks a thread for a
      // millisecond or more: four threads would let a burst of spawns delay
      // the syncs that acknowledgements wait for.
      process.env.UV_THREADPOOL_SIZE ??= '16';
      const args = parseDaemonArgs(rest);
      await runDaemon(loadDaemonConfig(args, configPath(args, process.env)));
      return 0;
    }
    if (cmd === 'slurm-config') return require('./slurm-config-main').slurmConfigMain(rest) as number;
    if (cmd === 'clean') {
      clean(resolveHome(), (line) => process.stdout.write(line + '\n'));
      return 0;
    }
    process.stderr.write('usage: main.js daemon [--config FILE] [--backend B] [--max-running N] [--retention D] [--exclude-device-ids L] | clean\n');
    return 2;
  } catch (e) {
    if (e instanceof ConfigFileError) {
      // One line per problem, each in the `xlurm: <file>:<line>: <key>: <problem>` form.
      for (const line of e.message.split('\n')) process.stderr.write(`xlurm: ${line}\n`);
      return 1;
    }
    if (e instanceof StartupError || e instanceof XlurmError || e instanceof ConfigError) {
      process.stderr.write(`xlurm: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
}

if (require.main === module) {
  daemonMain(process.argv.slice(2)).then((code) => process.exit(code), (e) => {
    process.stderr.write(`xlurm: ${(e as Error)?.stack ?? String(e)}\n`);
    process.exit(1);
  });
}

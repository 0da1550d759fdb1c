/**
 * A Core for unit tests: a real Store in a temporary directory, a
 * DeviceManager over an in-memory backend whose devices are always idle,
 * and a fake runner that records what Core asked of it (no supervisor is
 * ever spawned). Tests drive the transitions and play the runner's part
 * themselves (core.complete, core.deferStart).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Device, Owner, Submission } from '@xlurm/protocol';
import { Core, type Caller, type JobRunner } from '../../packages/daemon/src/core';
import { parseDaemonArgs } from '../../packages/daemon/src/config/args';
import { loadDaemonConfig } from '../../packages/daemon/src/config/daemon';
import type { Backend, ProbeResult } from '../../packages/daemon/src/devices/backend';
import { DeviceManager } from '../../packages/daemon/src/devices/manager';
import type { Ctx, StreamOut } from '../../packages/daemon/src/handlers/types';
import type { Prepared } from '../../packages/daemon/src/runner/runner';
import { Store, type StoredJob } from '../../packages/daemon/src/store/store';
import { waitFor } from './wait';

export const nvidia = (id: number): Device => ({ kind: 'nvidia', id, name: 'Fake', visible: `GPU-${id}`, npu: null, chip: null });

/** Devices that every probe finds idle. */
export class IdleBackend implements Backend {
  readonly kind = 'nvidia' as const;
  readonly devices: Device[];
  constructor(n: number) { this.devices = Array.from({ length: n }, (_, i) => nvidia(i)); }
  probe(ids: readonly number[]): Promise<Map<number, ProbeResult>> {
    return Promise.resolve(new Map(ids.map((id) => [id, { status: 'idle' as const }])));
  }
  close(): void { /* nothing held */ }
}

export type RunnerCall = [op: 'prepare' | 'start' | 'discard' | 'launch' | 'cancel' | 'adopt', arg: number | number[]];

/** Records every call; `cancelError` is what cancel() answers. */
export class FakeRunner implements JobRunner {
  readonly calls: RunnerCall[] = [];
  cancelError: NodeJS.ErrnoException | undefined;
  adoptedAfterRestart: boolean | undefined;
  prepare(job: StoredJob): Prepared | undefined {
    this.calls.push(['prepare', job.id]);
    return { id: job.id, fds: [-1, -1, -1, -1] };
  }
  start(p: Prepared): void { this.calls.push(['start', p.id]); }
  discard(p: Prepared): void { this.calls.push(['discard', p.id]); }
  launch(job: StoredJob): void { this.calls.push(['launch', job.id]); }
  cancel(id: number): NodeJS.ErrnoException | undefined {
    this.calls.push(['cancel', id]);
    return this.cancelError;
  }
  adopt(ids: number[], afterRestart?: boolean): void {
    this.calls.push(['adopt', ids]);
    this.adoptedAfterRestart = afterRestart;
  }
  /** Ids whose supervisor was started (start after prepare, or launch). */
  started(): number[] {
    return this.calls.filter((c) => c[0] === 'start' || c[0] === 'launch').map((c) => c[1] as number);
  }
}

export interface TestCore {
  core: Core;
  store: Store;
  devices: DeviceManager;
  runner: FakeRunner;
  logs: string[];
  dir: string;
  /** A Core over the same store and devices, as after a daemon restart. */
  restart(): Promise<TestCore>;
}

export interface TestCoreOpts {
  devices?: number;
  maxRunning?: number;
  /** The daemon's effective uid (default: this process's). */
  euid?: number;
}

interface Teardown { teardown(fn: () => void | Promise<void>): void }

/** A started Core (its devices probed once); everything is closed at the test's end. */
export async function makeCore(t: Teardown, opts: TestCoreOpts = {}): Promise<TestCore> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-core-'));
  fs.mkdirSync(path.join(dir, 'jobs'));
  const store = new Store(path.join(dir, 'jobs.db'));
  const backend = new IdleBackend(opts.devices ?? 0);
  let closed = false;
  t.teardown(() => {
    if (closed) return;
    closed = true;
    devices.stop();
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const argv = ['--backend', 'none', '--max-running', String(opts.maxRunning ?? 8)];
  const cfg = loadDaemonConfig(parseDaemonArgs(argv), { file: path.join(dir, 'no-such.toml'), named: false });
  const devices: DeviceManager = new DeviceManager(opts.devices ? [backend] : [], () => cores.at(-1)?.scheduleSoon(), () => undefined);
  const cores: Core[] = [];
  const build = (): TestCore => {
    const logs: string[] = [];
    const runner = new FakeRunner();
    const core = new Core(dir, cfg, store, devices, runner, opts.euid ?? process.geteuid!(), (m) => logs.push(m));
    cores.push(core);
    return { core, store, devices, runner, logs, dir, restart: async () => { const n = build(); n.core.recover(); return n; } };
  };
  const tc = build();
  tc.core.recover();
  await devices.start();
  return tc;
}

export const alice: Owner = { uid: 1000, gid: 1000, name: 'alice' };
export const aliceCaller: Caller = { uid: 1000, gid: 1000, pid: 1 };
export const bobCaller: Caller = { uid: 1001, gid: 1001, pid: 2 };
export const rootCaller: Caller = { uid: 0, gid: 0, pid: 3 };

/** A checked submission (what the submit handler hands to Core). */
export function spec(over: Partial<Submission> = {}): Submission {
  return { command: ['true'], cwd: '/', env: {}, name: 'true', count: 0, kind: null, time_limit: null, script: null, ...over };
}

/** Wait until Core has asked the runner to start job `id`. */
export function startedBy(tc: TestCore, id: number): Promise<boolean> {
  return waitFor(() => tc.runner.started().includes(id), { what: `start of job ${id}`, timeout: 5000 });
}

/** A handler's context; `shutdowns()` counts the shutdownAfterReply calls. */
export function ctxOf(core: Core, caller: Caller): Ctx & { shutdowns(): number } {
  let n = 0;
  return { core, caller, shutdownAfterReply: () => { n++; }, shutdowns: () => n };
}

/** A StreamOut that keeps every frame (raw bytes as text) until `close()`. */
export function recordingOut(): StreamOut & { frames: Array<Record<string, unknown>>; close(): void } {
  let closed = false;
  let gone!: () => void;
  const frames: Array<Record<string, unknown>> = [];
  return {
    frames,
    get closed() { return closed; },
    gone: new Promise<void>((r) => { gone = r; }),
    send(msg: object, raw?: Buffer): Promise<void> {
      frames.push(raw ? { ...msg, raw: raw.toString() } : { ...msg });
      return Promise.resolve();
    },
    close() { closed = true; gone(); },
  };
}

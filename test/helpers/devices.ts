/**
 * Helpers for the device e2e tests (test/e2e/devices*.ts): a daemon on fake
 * vendor libraries, the device view through the real CLIs, and waits that
 * follow the daemon's probes through the fakes' call logs.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startDaemon, type Daemon, type DaemonOpts } from './daemon';
import type { FakeLibrary } from './fixtures';
import { waitFor } from './wait';
import type { Tap } from './tap';


/**
 * A daemon on the given fakes (their variables merged over NO_VENDOR_LIBRARIES, so `--backend
 * auto` finds only them) and a scratch directory for markers.
 */
export async function fakeDaemon(t: Tap, fakes: readonly FakeLibrary[], opts: DaemonOpts = {}): Promise<{ d: Daemon; dir: string }> {
  const env = Object.assign({}, NO_VENDOR_LIBRARIES, ...fakes.map((f) => f.env), opts.env ?? {});
  const d = await startDaemon(t, { ...opts, env });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-dev-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return { d, dir };
}

/** `xinfo --json`. */
export async function info(d: Daemon): Promise<any[]> {
  return JSON.parse((await d.run('xinfo', ['--json'])).stdout) as any[];
}

export async function statuses(d: Daemon): Promise<string[]> {
  return (await info(d)).map((v) => v.status as string);
}

/** The same device views through the protocol (the `info` op), without a CLI process: cheap to poll. */
export async function views(d: Daemon): Promise<any[]> {
  const r = await d.request('info', {}) as { ok: boolean; result: any[] };
  if (!r.ok) throw new Error(JSON.stringify(r));
  return r.result;
}

/**
 * A job command that waits until `marker` exists, or until the marker's
 * directory is gone: jobs outlive their daemon by design, so a test whose
 * teardown removed the directory before (or instead of) creating the marker
 * must not leave the job polling forever.
 */
export const waitMarker = (marker: string): string =>
  `while [ ! -e ${marker} ] && [ -d ${path.dirname(marker)} ]; do sleep 0.02; done`;

/** A job command printing every visibility variable (docs/behaviour.md §6.4) on one line. */
export const SHOW_VISIBILITY = 'echo "CUDA=$CUDA_VISIBLE_DEVICES ASC=$ASCEND_RT_VISIBLE_DEVICES MUSA=$MUSA_VISIBLE_DEVICES ' +
  'MT=$MTHREADS_VISIBLE_DEVICES MACA=$MACA_VISIBLE_DEVICES HIP=$HIP_VISIBLE_DEVICES ROCR=$ROCR_VISIBLE_DEVICES ' +
  'ADI=${ASCEND_DEVICE_ID-unset}"';

/** A job's output. */
export async function jobLog(d: Daemon, id: number): Promise<string> {
  return (await d.run('xqueue', [String(id), '--log'])).stdout;
}

/**
 * Resolve once a whole probe has run, and been acted on, since the call:
 * `isCall` picks the fake's log lines made `perProbe` times per probe. Waits
 * for the rest of a probe in progress, a full one, and the start of the next
 * (which begins only after the daemon has taken the full one's answer).
 */
export async function afterFullProbe(fake: FakeLibrary, isCall: (line: string) => boolean, perProbe: number): Promise<void> {
  const count = () => fake.calls().filter(isCall).length;
  const n = count();
  await waitFor(() => count() >= n + 2 * perProbe + 1, { timeout: 15000, what: 'a full device poll' });
}

/**
 * For `windowMs`, check that clients are answered while a driver call or tool
 * hangs: `xqueue` works, and the daemon answers each raw `queue` request
 * within a second (the hang itself lasts far longer). The daemon's answer is
 * measured on the socket, not a CLI's start-up, which depends on machine load.
 */
export async function checkResponsive(t: Tap, d: Daemon, _baseline: number, windowMs: number): Promise<void> {
  const until = Date.now() + windowMs;
  let worst = 0;
  while (Date.now() < until) {
    const q = await d.run('xqueue', []);
    t.equal(q.code, 0, q.stderr);
    const t1 = Date.now();
    await d.request('queue', {});
    worst = Math.max(worst, Date.now() - t1);
  }
  t.ok(worst < 1000, `raw queue request answered in at most ${worst} ms`);
}

/** The slowest of three `xqueue` runs (a node process's cost on this machine). */
export async function xqueueCost(d: Daemon): Promise<number> {
  let worst = 0;
  for (let i = 0; i < 3; i++) {
    const t0 = Date.now();
    await d.run('xqueue', []);
    worst = Math.max(worst, Date.now() - t0);
  }
  return worst;
}

/**
 * Every vendor library override (docs/behaviour.md §9.2) pointing at a missing file: spread before a test's
 * fakes so `--backend auto` finds only those, even on a host with real vendor libraries.
 */
export const NO_VENDOR_LIBRARIES: Readonly<Record<string, string>> = {
  XLURM_NVML_LIBRARY: '/nonexistent/libnvidia-ml.so.1', XLURM_DCMI_LIBRARY: '/nonexistent/libdcmi.so',
  XLURM_MTML_LIBRARY: '/nonexistent/libmtml.so', XLURM_MXSML_LIBRARY: '/nonexistent/libmxsml.so',
  XLURM_HGML_LIBRARY: '/nonexistent/libhgml.so', XLURM_HCU_SMI_LIBRARY: '/nonexistent/librocm_smi64.so',
};

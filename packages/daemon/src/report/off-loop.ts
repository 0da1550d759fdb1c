/**
 * `report` queries on a worker thread of their own, started on first use and kept (unref'd, so it
 * never keeps the daemon alive): the daemon's event loop only hands the query over and takes the
 * answer back, so scheduling and every other request go on while a long window is read. The
 * worker reads through its own read-only connection (data.ts), which WAL mode lets run beside
 * the daemon's writes.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { OpResult } from '@xlurm/protocol';
import { XlurmError } from '@xlurm/protocol';
import type { ReportQuery } from './data';

type ReportData = OpResult<'report'>;
type Waiter = { resolve: (r: ReportData) => void; reject: (e: Error) => void };

let worker: Worker | undefined;
const waiting = new Map<number, Waiter>();
let next = 1;

function failAll(e: Error): void {
  worker = undefined;
  for (const w of waiting.values()) w.reject(new XlurmError('STORAGE', `cannot read the job database for the report: ${e.message}`));
  waiting.clear();
}

function start(): Worker {
  // worker.js beside this file once compiled; the TypeScript source when tests run the sources
  // (the thread inherits the test runner's loader).
  const js = path.join(__dirname, 'worker.js');
  const w = new Worker(fs.existsSync(js) ? js : path.join(__dirname, 'worker.ts'));
  w.unref();
  w.on('message', (m: { id: number; ok: boolean; result?: ReportData; message?: string }) => {
    const waiter = waiting.get(m.id);
    if (!waiter) return;
    waiting.delete(m.id);
    if (m.ok) waiter.resolve(m.result!);
    else waiter.reject(new XlurmError('STORAGE', `cannot read the job database for the report: ${m.message}`));
  });
  w.on('error', failAll);
  w.on('exit', (code) => { if (worker === w) failAll(new Error(`the report thread exited (${code})`)); });
  return w;
}

export function reportDataOffLoop(q: ReportQuery): Promise<ReportData> {
  worker ??= start();
  const id = next++;
  return new Promise<ReportData>((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    worker!.postMessage({ id, q });
  });
}

/** End the thread (tests; the daemon's exit ends it anyway). */
export async function stopReportWorker(): Promise<void> {
  const w = worker;
  worker = undefined;
  if (w) await w.terminate();
}

/**
 * The thread that answers `report` queries (see off-loop.ts): a month of jobs and samples takes
 * SQLite a few hundred milliseconds, which must not be the daemon's event loop's.
 */
import { parentPort } from 'node:worker_threads';
import { reportData, type ReportQuery } from './data';

parentPort!.on('message', (m: { id: number; q: ReportQuery }) => {
  try {
    parentPort!.postMessage({ id: m.id, ok: true, result: reportData(m.q) });
  } catch (e) {
    parentPort!.postMessage({ id: m.id, ok: false, message: (e as Error).message });
  }
});

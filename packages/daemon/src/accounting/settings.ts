/**
 * `[accounting]` (docs/behaviour.md §26.2, §26.3): how often the daemon
 * samples, how long samples are kept, and the Prometheus metrics file.
 */
import * as path from 'node:path';
import { durationSeconds } from '@xlurm/protocol';

export interface AccountingSettings {
  /** Seconds between samples; 0: sampling (and the metrics file) off. */
  sampleInterval: number;
  /** Seconds a sample is kept. */
  retentionSecs: number;
  /** Absolute path of the metrics file; '' for none. */
  metricsFile: string;
}

export const DEFAULT_ACCOUNTING: Readonly<AccountingSettings> = { sampleInterval: 30, retentionSecs: 90 * 86400, metricsFile: '' };

/** The file's table as parsed (the schema has checked the types and the duration texts). */
export interface AccountingTable { sample_interval?: number | string; retention?: number | string; metrics_file?: string }

const secs = (v: number | string): number => (typeof v === 'number' ? v : durationSeconds(v)!);

/** The settings from `[accounting]`; a problem (key → message) for a relative metrics_file. */
export function accountingSettings(t: AccountingTable | undefined): AccountingSettings | { key: string; problem: string } {
  const s: AccountingSettings = { ...DEFAULT_ACCOUNTING };
  if (!t) return s;
  if (t.sample_interval !== undefined) s.sampleInterval = secs(t.sample_interval);
  if (t.retention !== undefined) s.retentionSecs = secs(t.retention);
  if (t.metrics_file !== undefined && t.metrics_file !== '') {
    if (!path.isAbsolute(t.metrics_file)) return { key: 'accounting.metrics_file', problem: `must be an absolute path: ${t.metrics_file}` };
    s.metricsFile = t.metrics_file;
  }
  return s;
}

/** The dotted keys whose value differs (for a reload's list of changes). */
export function changedAccountingKeys(prev: AccountingSettings | undefined, next: AccountingSettings | undefined): string[] {
  const a = prev ?? DEFAULT_ACCOUNTING;
  const b = next ?? DEFAULT_ACCOUNTING;
  const out: string[] = [];
  if (a.sampleInterval !== b.sampleInterval) out.push('accounting.sample_interval');
  if (a.retentionSecs !== b.retentionSecs) out.push('accounting.retention');
  if (a.metricsFile !== b.metricsFile) out.push('accounting.metrics_file');
  return out;
}

/**
 * What the host has (docs/behaviour.md §24.2): its online CPUs and its memory
 * from /proc/meminfo. Read by Core at decision time (MemAvailable) and at
 * start-up and reload (the CPUs and MemTotal the settings are checked against).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';

export interface Meminfo { total: number; available: number }

/** MemTotal and MemAvailable in bytes; null when /proc/meminfo cannot be read (then memory is not admitted by it). */
export function readMeminfo(file = '/proc/meminfo'): Meminfo | null {
  let text: string;
  try { text = fs.readFileSync(file, 'latin1'); } catch { return null; }
  const kb = (key: string): number | null => {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text);
    return m ? Number(m[1]) * 1024 : null;
  };
  const total = kb('MemTotal');
  const available = kb('MemAvailable');
  if (total === null || available === null) return null;
  return { total, available };
}

/**
 * A CPU list as the kernel writes it (`0-3,8-11`), as sorted distinct
 * numbers; null when malformed.
 */
export function parseCpuList(text: string): number[] | null {
  const t = text.trim();
  if (t === '') return [];
  const out = new Set<number>();
  for (const part of t.split(',')) {
    const m = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(part.trim());
    if (!m) return null;
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    if (b < a) return null;
    for (let i = a; i <= b; i++) out.add(i);
  }
  return [...out].sort((x, y) => x - y);
}

/** CPUs as a kernel CPU list, with ranges (`0-3,8`). */
export function formatCpuList(cpus: readonly number[]): string {
  const s = [...cpus].sort((a, b) => a - b);
  const out: string[] = [];
  for (let i = 0; i < s.length;) {
    let j = i;
    while (j + 1 < s.length && s[j + 1] === s[j]! + 1) j++;
    out.push(j === i ? `${s[i]}` : `${s[i]}-${s[j]}`);
    i = j + 1;
  }
  return out.join(',');
}

/** The CPUs this daemon may run on (its affinity through the online list), never empty. */
export function onlineCpus(file = '/sys/devices/system/cpu/online'): number[] {
  try {
    const l = parseCpuList(fs.readFileSync(file, 'latin1'));
    if (l && l.length) return l;
  } catch { /* fall through */ }
  return Array.from({ length: Math.max(1, os.availableParallelism()) }, (_, i) => i);
}

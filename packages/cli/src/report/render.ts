/**
 * `xlurm report --html` (docs/behaviour.md §26.4): one self-contained HTML file with inline SVG
 * and CSS, readable without JavaScript and loading nothing from the network. The scales, ticks,
 * path strings, stacks and bins come from d3 (d3-scale, d3-shape, d3-array: plain functions that
 * compute numbers and strings, no DOM), so the axes are a maintained library's, not hand-drawn.
 *
 * Size is bounded by the drawing, not by the history: the device timeline is drawn per pixel
 * column (the user who held a device longest in that column), the queue length as the highest
 * count per column, so a month of busy devices stays well under 2 MB.
 */
import type { ScaleLinear, ScaleTime } from 'd3-scale';
import type { OpResult } from '@xlurm/protocol';
import { deviceWeight, type StatsTable } from './stats';

type ReportData = OpResult<'report'>;
type D3Scale = typeof import('d3-scale');
type D3Shape = typeof import('d3-shape');
type D3Array = typeof import('d3-array');
interface D3 { scale: D3Scale; shape: D3Shape; array: D3Array }

/** The d3 modules are ECMAScript modules, loaded only by this command (the others never pay for them). */
async function loadD3(): Promise<D3> {
  const [scale, shape, array] = await Promise.all([import('d3-scale'), import('d3-shape'), import('d3-array')]);
  return { scale, shape, array };
}

/** Distinct colours for users, in the order users first appear sorted by name (Tableau 20). */
export const PALETTE = [
  '#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac',
  '#a0cbe8', '#ffbe7d', '#ff9d9a', '#86bcb6', '#8cd17d', '#f1ce63', '#d4a6c8', '#fabfd2', '#d7b5a6', '#79706e',
];

export interface RenderOptions {
  /** Who asked: shown in the title of a user's own report. */
  viewer: string;
  hostname: string;
  /** Plot width in CSS pixels (the timeline's pixel columns). */
  width?: number;
}

const WIDTH = 1100;
const LEFT = 150;
const RIGHT = 20;
const DAY = 86400;

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const num = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(1));

/** `3h 20m`, `45s`, `2d 4h`. */
export function humanDuration(secs: number): string {
  const s = Math.max(0, Math.round(secs));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60 ? ` ${s % 60}s` : ''}`;
  if (s < DAY) return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60) ? ` ${Math.floor((s % 3600) / 60)}m` : ''}`;
  return `${Math.floor(s / DAY)}d${Math.floor((s % DAY) / 3600) ? ` ${Math.floor((s % DAY) / 3600)}h` : ''}`;
}

const isoDay = (t: number) => new Date(t * 1000).toISOString().slice(0, 10);
const isoMinute = (t: number) => new Date(t * 1000).toISOString().slice(0, 16).replace('T', ' ');

const deviceLabel = (d: ReportData['devices'][number]) => {
  const short: Record<string, string> = { nvidia: 'nv', ascend: 'asc', mthreads: 'mt', metax: 'mx', ppu: 'ppu', hcu: 'hcu' };
  return `${short[d.kind] ?? d.kind}:${d.id}`;
};

/** Users in name order with their colour. */
function userColours(data: ReportData): Map<string, string> {
  const names = [...new Set(data.jobs.map((j) => j.user))].sort();
  return new Map(names.map((n, i) => [n, PALETTE[i % PALETTE.length]!]));
}

/** An x axis of a time scale: tick lines and labels below `y`. */
function timeAxis(x: ScaleTime<number, number>, y: number, height: number): string {
  const ticks = x.ticks(Math.max(2, Math.floor((x.range()[1]! - x.range()[0]!) / 110)));
  const fmt = x.tickFormat();
  return ticks.map((t) => {
    const px = x(t).toFixed(1);
    return `<line class="grid" x1="${px}" x2="${px}" y1="0" y2="${height}"/><text class="tick" x="${px}" y="${y + 14}" text-anchor="middle">${escapeHtml(fmt(t))}</text>`;
  }).join('');
}

/** A y axis of a linear scale at x = LEFT. */
function valueAxis(y: ScaleLinear<number, number>, width: number, count: number, fmt: (v: number) => string): string {
  return y.ticks(count).map((v) => {
    const py = y(v).toFixed(1);
    return `<line class="grid" x1="${LEFT}" x2="${width - RIGHT}" y1="${py}" y2="${py}"/><text class="tick" x="${LEFT - 6}" y="${py}" dy="0.32em" text-anchor="end">${escapeHtml(fmt(v))}</text>`;
  }).join('');
}

/**
 * One row per device: per pixel column, the user who held the device longest in it, solid where
 * that was at least a quarter of the column and faint where less (a short job still shows);
 * runs of equal columns drawn as one rectangle with a title naming the user, the jobs and the
 * time held.
 */
function deviceTimeline(d3: D3, data: ReportData, colours: Map<string, string>, width: number): string {
  const rowH = 18;
  const cols = width - LEFT - RIGHT;
  const span = Math.max(1, data.until - data.since);
  const colSecs = span / cols;
  const users = [...colours.keys()];
  const uidx = new Map(users.map((u, i) => [u, i]));
  const nDev = data.devices.length;
  // held[device][user * cols + column] = seconds; jobs per device and column for the titles.
  const held = Array.from({ length: nDev }, () => new Float32Array(users.length * cols));
  const firstJob = Array.from({ length: nDev }, () => new Float64Array(cols).fill(Infinity));
  const lastJob = Array.from({ length: nDev }, () => new Float64Array(cols));
  for (const j of data.jobs) {
    if (j.started_at === null || j.devices.length === 0) continue;
    const a = Math.max(j.started_at, data.since);
    const b = Math.min(j.finished_at ?? data.until, data.until);
    if (b <= a) continue;
    const u = uidx.get(j.user)!;
    const c0 = Math.min(cols - 1, Math.floor((a - data.since) / colSecs));
    const c1 = Math.min(cols - 1, Math.floor((b - data.since) / colSecs));
    // A slice holds part of each device: its share of the card's memory (docs/behaviour.md §25.4).
    const part = deviceWeight(j) / j.devices.length;
    for (const dv of j.devices) {
      const h = held[dv]!;
      for (let c = c0; c <= c1; c++) {
        const lo = Math.max(a, data.since + c * colSecs);
        const hi = Math.min(b, data.since + (c + 1) * colSecs);
        if (hi > lo) {
          h[u * cols + c] += (hi - lo) * part;
          if (j.id < firstJob[dv]![c]!) firstJob[dv]![c] = j.id;
          if (j.id > lastJob[dv]![c]!) lastJob[dv]![c] = j.id;
        }
      }
    }
  }
  const height = nDev * rowH;
  const x = d3.scale.scaleUtc().domain([new Date(data.since * 1000), new Date(data.until * 1000)]).range([LEFT, LEFT + cols]);
  const parts: string[] = [];
  for (let dv = 0; dv < nDev; dv++) {
    const y = dv * rowH;
    parts.push(`<text class="label" x="${LEFT - 6}" y="${y + rowH / 2}" dy="0.32em" text-anchor="end">${escapeHtml(deviceLabel(data.devices[dv]!))}</text>`);
    parts.push(`<g transform="translate(0,${y})"><rect class="lane" x="${LEFT}" y="1" width="${cols}" height="${rowH - 2}"/>`);
    const h = held[dv]!;
    let runUser = -1;
    let runLight = false;
    let runStart = 0;
    let runSecs = 0;
    let runFirst = Infinity;
    let runLast = 0;
    const flush = (end: number) => {
      if (runUser < 0) return;
      const user = users[runUser]!;
      const jobs = runFirst === runLast ? `job ${runFirst}` : `jobs ${runFirst}–${runLast}`;
      parts.push(`<rect x="${LEFT + runStart}" y="2" width="${end - runStart}" height="${rowH - 4}" fill="${colours.get(user)}"${runLight ? ' fill-opacity=".4"' : ''}><title>${escapeHtml(`${user}: ${jobs}, ${humanDuration(runSecs)} from ${isoMinute(data.since + runStart * colSecs)}`)}</title></rect>`);
    };
    for (let c = 0; c < cols; c++) {
      let best = -1;
      let bestSecs = 0;
      for (let u = 0; u < users.length; u++) {
        const s = h[u * cols + c]!;
        if (s > bestSecs) { best = u; bestSecs = s; }
      }
      const light = bestSecs < colSecs / 4;
      if (best !== runUser || light !== runLight) {
        flush(c);
        runUser = best; runLight = light; runStart = c; runSecs = 0; runFirst = Infinity; runLast = 0;
      }
      if (best >= 0) {
        runSecs += h[best * cols + c]!;
        runFirst = Math.min(runFirst, firstJob[dv]![c]!);
        runLast = Math.max(runLast, lastJob[dv]![c]!);
      }
    }
    flush(cols);
    parts.push('</g>');
  }
  const axis = timeAxis(x, height, height);
  return svg(width, height + 22, `<g>${axis}</g>${parts.join('')}`, 'Device timeline: which user held each device when');
}

/**
 * Pending and running jobs over time, as steps: the highest count within each pixel column, so a
 * short peak is never averaged away.
 */
function queueLength(d3: D3, data: ReportData, width: number): string {
  const cols = width - LEFT - RIGHT;
  const h = 160;
  const span = Math.max(1, data.until - data.since);
  // Events: +1 pending at submission, −1 pending and +1 running at the start, −1 running at the end.
  const ev: Array<[number, number, number]> = [];
  for (const j of data.jobs) {
    const end = j.finished_at ?? Infinity;
    const start = j.started_at ?? end;
    ev.push([j.submitted_at, 1, 0]);
    if (start !== Infinity) ev.push([start, -1, j.started_at !== null ? 1 : 0]);
    if (j.started_at !== null && end !== Infinity) ev.push([end, 0, -1]);
  }
  ev.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const pendMax = new Int32Array(cols);
  const runMax = new Int32Array(cols);
  let pend = 0;
  let run = 0;
  let i = 0;
  const colOf = (t: number) => Math.min(cols - 1, Math.max(0, Math.floor(((t - data.since) / span) * cols)));
  for (; i < ev.length && ev[i]![0] < data.since; i++) { pend += ev[i]![1]; run += ev[i]![2]; }
  let col = 0;
  pendMax[0] = pend; runMax[0] = run;
  for (; i < ev.length && ev[i]![0] <= data.until; i++) {
    const c = colOf(ev[i]![0]);
    for (; col < c; ) { col++; pendMax[col] = pend; runMax[col] = run; }
    pend += ev[i]![1]; run += ev[i]![2];
    if (pend > pendMax[c]!) pendMax[c] = pend;
    if (run > runMax[c]!) runMax[c] = run;
  }
  for (; col < cols - 1; ) { col++; pendMax[col] = pend; runMax[col] = run; }
  const top = Math.max(1, d3.array.max(pendMax) ?? 0, d3.array.max(runMax) ?? 0);
  const x = d3.scale.scaleUtc().domain([new Date(data.since * 1000), new Date(data.until * 1000)]).range([LEFT, LEFT + cols]);
  const y = d3.scale.scaleLinear().domain([0, top]).nice().range([h, 4]);
  const colX = (c: number) => LEFT + c;
  const area = d3.shape.area<number>().x((_, c) => colX(c)).y0(h).y1((v) => y(v)).curve(d3.shape.curveStepAfter).digits(1);
  const line = d3.shape.line<number>().x((_, c) => colX(c)).y((v) => y(v)).curve(d3.shape.curveStepAfter).digits(1);
  const pendArr = Array.from(pendMax);
  const body = `<g>${valueAxis(y, width, 4, (v) => (Number.isInteger(v) ? String(v) : ''))}${timeAxis(x, h, h)}</g>`
    + `<path class="pending" d="${area(pendArr)}"/><path class="running" d="${line(Array.from(runMax))}"/>`;
  const legend = '<p class="legend"><span class="swatch pending"></span>pending jobs <span class="swatch running"></span>running jobs (the most within each pixel)</p>';
  return legend + svg(width, h + 22, body, 'Queue length over time');
}

/** Size classes by devices asked for. */
const SIZE_CLASSES: ReadonlyArray<[string, (n: number) => boolean]> = [
  ['CPU only', (n) => n === 0], ['1 device', (n) => n === 1], ['2–3 devices', (n) => n >= 2 && n <= 3],
  ['4–7 devices', (n) => n >= 4 && n <= 7], ['8+ devices', (n) => n >= 8],
];
/** Wait bins: upper edges in seconds (the last one open). */
const WAIT_EDGES = [10, 60, 300, 900, 3600, 4 * 3600, 12 * 3600, DAY];
const WAIT_LABELS = ['<10s', '<1m', '<5m', '<15m', '<1h', '<4h', '<12h', '<1d', '≥1d'];

/** A histogram of the wait to start per size class (the jobs that started in the window). */
function waitDistribution(d3: D3, data: ReportData, width: number): string {
  const byClass = SIZE_CLASSES.map(([label, test]) => ({
    label,
    waits: data.jobs.filter((j) => j.started_at !== null && j.started_at >= data.since && test(j.count))
      .map((j) => Math.max(0, j.started_at! - j.submitted_at)),
  })).filter((c) => c.waits.length > 0);
  if (byClass.length === 0) return '<p class="empty">No job started in this period.</p>';
  const bin = d3.array.bin().domain([0, Infinity]).thresholds(WAIT_EDGES);
  const panelW = Math.floor((width - 20) / Math.min(3, byClass.length));
  const panelH = 150;
  const panels = byClass.map((c) => {
    const bins = bin(c.waits).map((b) => b.length);
    const sorted = [...c.waits].sort((a, b) => a - b);
    const x = d3.scale.scaleBand<number>().domain(bins.map((_, i) => i)).range([40, panelW - 10]).padding(0.15);
    const y = d3.scale.scaleLinear().domain([0, d3.array.max(bins) ?? 1]).nice().range([panelH - 20, 24]);
    const bars = bins.map((n, i) => {
      const bx = x(i)!;
      const by = y(n);
      return `<rect class="bar" x="${bx.toFixed(1)}" y="${by.toFixed(1)}" width="${x.bandwidth().toFixed(1)}" height="${(panelH - 20 - by).toFixed(1)}"><title>${escapeHtml(`${WAIT_LABELS[i]}: ${n} jobs`)}</title></rect>`
        + `<text class="tick" x="${(bx + x.bandwidth() / 2).toFixed(1)}" y="${panelH - 6}" text-anchor="middle">${WAIT_LABELS[i]}</text>`
        + (n > 0 ? `<text class="count" x="${(bx + x.bandwidth() / 2).toFixed(1)}" y="${(by - 3).toFixed(1)}" text-anchor="middle">${n}</text>` : '');
    }).join('');
    const median = d3.array.quantileSorted(sorted, 0.5) ?? 0;
    const p95 = d3.array.quantileSorted(sorted, 0.95) ?? 0;
    const title = `<text class="panel-title" x="40" y="14">${escapeHtml(`${c.label}: ${c.waits.length} jobs, median ${humanDuration(median)}, p95 ${humanDuration(p95)}`)}</text>`;
    return `<svg class="panel" width="${panelW}" height="${panelH}" viewBox="0 0 ${panelW} ${panelH}" role="img">${title}${bars}</svg>`;
  });
  return `<div class="panels">${panels.join('')}</div>`;
}

/**
 * Per UTC day: the device-hours each user held, as a share of the devices' capacity that day,
 * stacked (d3's stack); and the mean sampled utilisation as a line where the store has samples.
 */
function utilisationPerDay(d3: D3, data: ReportData, colours: Map<string, string>, width: number): string {
  const firstDay = Math.floor(data.since / DAY) * DAY;
  const days: number[] = [];
  for (let d = firstDay; d < data.until; d += DAY) days.push(d);
  const users = [...colours.keys()];
  const rows = days.map((d) => Object.fromEntries([['day', d], ...users.map((u) => [u, 0])]) as Record<string, number>);
  for (const j of data.jobs) {
    if (j.started_at === null || j.devices.length === 0) continue;
    const a = Math.max(j.started_at, data.since);
    const b = Math.min(j.finished_at ?? data.until, data.until);
    for (let d = Math.floor(a / DAY) * DAY; d < b; d += DAY) {
      const lo = Math.max(a, d);
      const hi = Math.min(b, d + DAY);
      const row = rows[(d - firstDay) / DAY];
      if (row && hi > lo) row[j.user] = row[j.user]! + (hi - lo) * deviceWeight(j);
    }
  }
  const nDev = Math.max(1, data.devices.length);
  for (const [i, row] of rows.entries()) {
    // The capacity of the part of the day inside the window.
    const lo = Math.max(days[i]!, data.since);
    const hi = Math.min(days[i]! + DAY, data.until);
    const cap = Math.max(1, (hi - lo) * nDev);
    for (const u of users) row[u] = row[u]! / cap;
  }
  const h = 170;
  const x = d3.scale.scaleBand<number>().domain(days).range([LEFT, width - RIGHT]).padding(0.1);
  const y = d3.scale.scaleLinear().domain([0, 1]).range([h, 6]);
  const series = d3.shape.stack<Record<string, number>>().keys(users)(rows);
  const bars = series.map((s) => s.map((p) => {
    const share = p[1] - p[0];
    if (share <= 0) return '';
    const day = p.data.day!;
    return `<rect x="${x(day)!.toFixed(1)}" y="${y(p[1]).toFixed(1)}" width="${x.bandwidth().toFixed(1)}" height="${(y(p[0]) - y(p[1])).toFixed(1)}" fill="${colours.get(s.key)}"><title>${escapeHtml(`${isoDay(day)} ${s.key}: ${(share * 100).toFixed(1)} % of device time`)}</title></rect>`;
  }).join('')).join('');
  const every = Math.max(1, Math.ceil(days.length / 15));
  const labels = days.map((d, i) => (i % every === 0
    ? `<text class="tick" x="${(x(d)! + x.bandwidth() / 2).toFixed(1)}" y="${h + 14}" text-anchor="middle">${isoDay(d).slice(5)}</text>` : '')).join('');
  let sampled = '';
  let note = '';
  if (data.samples.length > 0) {
    const perDay = d3.array.rollup(data.samples.filter((s) => s.utilization !== null),
      (v) => d3.array.sum(v, (s) => s.utilization! * s.samples) / Math.max(1, d3.array.sum(v, (s) => s.samples)), (s) => s.day);
    const pts = days.filter((d) => perDay.has(d)).map((d) => [x(d)! + x.bandwidth() / 2, y(perDay.get(d)!)] as [number, number]);
    if (pts.length > 0) {
      sampled = `<path class="sampled" d="${d3.shape.line().digits(1)(pts)}"/>`
        + pts.map(([px, py]) => `<circle class="sampled-dot" cx="${px.toFixed(1)}" cy="${py.toFixed(1)}" r="2.5"/>`).join('');
      note = ' <span class="swatch sampled"></span>mean sampled device utilisation';
    }
  }
  const body = `<g>${valueAxis(y, width, 5, (v) => `${Math.round(v * 100)} %`)}</g>${bars}${sampled}${labels}`;
  return `<p class="legend">Share of device time held per UTC day, by user${note}</p>` + svg(width, h + 22, body, 'Utilisation per day');
}

function statsTable(stats: StatsTable, colours: Map<string, string>): string {
  const head = ['user', 'completed', 'failed', 'cancelled', 'timed out', 'expired', 'out of memory', 'device-hours', 'CPU-hours', 'mean wait', 'p95 wait', 'mean run', 'success rate'];
  const rows = stats.users.map((u) => {
    const c = colours.get(u.user);
    const cells = [
      `${c ? `<span class="swatch" style="background:${c}"></span>` : ''}${escapeHtml(u.user)}`,
      ...['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT', 'EXPIRED', 'OUT_OF_MEMORY'].map((s) => String(u.jobs[s] ?? 0)),
      u.device_hours.toFixed(1), u.cpu_hours.toFixed(1), humanDuration(u.wait_mean_s), humanDuration(u.wait_p95_s),
      humanDuration(u.run_mean_s), `${(u.success_rate * 100).toFixed(0)} %`,
    ];
    return `<tr>${cells.map((x, i) => `<td${i ? ' class="n"' : ''}>${x}</td>`).join('')}</tr>`;
  });
  const host = stats.host
    ? `<p>Host: ${num(Math.round(stats.host.device_hours * 10) / 10)} of ${num(Math.round(stats.host.available_device_hours * 10) / 10)} device-hours allocated (utilisation ${(stats.host.utilization * 100).toFixed(1)} %).</p>`
    : '';
  if (rows.length === 0) return `<p class="empty">No job ended in this period.</p>${host}`;
  return `<table><thead><tr>${head.map((x, i) => `<th${i ? ' class="n"' : ''}>${x}</th>`).join('')}</tr></thead><tbody>${rows.join('')}</tbody></table>${host}`;
}

function svg(width: number, height: number, body: string, label: string): string {
  return `<svg width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeHtml(label)}">${body}</svg>`;
}

const CSS = `
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:#222;background:#fff;margin:24px;max-width:1160px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 6px;border-bottom:1px solid #ddd;padding-bottom:3px}
.meta{color:#555;margin:0 0 12px}
svg{display:block;overflow:visible}svg text{font-size:11px;fill:#333}
.grid{stroke:#e6e6e6;stroke-width:1}.tick{fill:#666}.label{font-family:ui-monospace,"DejaVu Sans Mono",monospace}
.lane{fill:#f6f6f6}
path.pending{fill:#f2b447;fill-opacity:.55;stroke:#c98a10;stroke-width:1}
path.running{fill:none;stroke:#2f6db5;stroke-width:1.5}
path.sampled{fill:none;stroke:#111;stroke-width:1.5;stroke-dasharray:4 2}.sampled-dot{fill:#111}
.bar{fill:#6b8fbf}.count{font-size:10px;fill:#333}.panel-title{font-weight:600}
.panels{display:flex;flex-wrap:wrap;gap:10px}
.legend{margin:4px 0 6px;color:#444}
.swatch{display:inline-block;width:12px;height:12px;border-radius:2px;vertical-align:-1px;margin:0 5px 0 12px}
.swatch:first-child{margin-left:0}.swatch.pending{background:#f2b447}.swatch.running{background:#2f6db5}.swatch.sampled{background:#111}
table{border-collapse:collapse;margin-top:6px;font-size:13px}th,td{padding:3px 7px;border-bottom:1px solid #e4e4e4;text-align:left}
td{white-space:nowrap}th{background:#f4f4f4;font-weight:600;vertical-align:bottom}.n{text-align:right;font-variant-numeric:tabular-nums}
.empty{color:#777;font-style:italic}
`;

/** The whole report as one HTML document. */
export async function renderReport(data: ReportData, stats: StatsTable, opts: RenderOptions): Promise<string> {
  const d3 = await loadD3();
  const width = opts.width ?? WIDTH;
  const colours = userColours(data);
  const scope = data.host ? 'every user (administrator view)' : `your own jobs (${opts.viewer})`;
  const legend = [...colours].map(([u, c]) => `<span class="swatch" style="background:${c}"></span>${escapeHtml(u)}`).join(' ');
  const devices = data.devices.length;
  const sections = [
    `<h2>Device timeline</h2><p class="legend">${legend || '<span class="empty">no jobs held a device</span>'}</p>`
      + (devices ? deviceTimeline(d3, data, colours, width) : '<p class="empty">This host has no devices.</p>'),
    `<h2>Queue length</h2>${queueLength(d3, data, width)}`,
    `<h2>Wait to start by size class</h2>${waitDistribution(d3, data, width)}`,
    `<h2>Utilisation per day</h2>${devices ? utilisationPerDay(d3, data, colours, width) : '<p class="empty">This host has no devices.</p>'}`,
    `<h2>Usage by user</h2>${statsTable(stats, colours)}`,
  ];
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(`xlurm report: ${opts.hostname}, ${isoDay(data.since)} to ${isoDay(data.until)}`)}</title>
<style>${CSS}</style></head>
<body>
<h1>${escapeHtml(`xlurm report: ${opts.hostname}`)}</h1>
<p class="meta">${escapeHtml(`${isoMinute(data.since)} to ${isoMinute(data.until)} UTC · ${scope} · ${data.jobs.length} jobs · ${devices} devices`)}</p>
${sections.join('\n')}
</body></html>
`;
}

// @ts-check
'use strict';
/**
 * Result rows and the printed table. A row is one measure: xlurm's median
 * (with its spread over repetitions), the floor or competitor measured in the
 * same run, their ratio, the target and whether it is met.
 *
 * @typedef {{ median: number, min: number, max: number, n: number }} Value
 * @typedef {{ text: string, on: 'value' | 'ratio', max?: number, min?: number }} Target
 * @typedef {{
 *   measure: string, unit: string, value: Value | null,
 *   base?: { label: string, value: number | null, unit?: string, note?: string } | null,
 *   ratio?: number | null, target?: Target | null, met?: boolean | null, note?: string,
 * }} Row
 */

/** Fill in ratio (when a base is given) and met (when a target is given). @param {Row} r @returns {Row} */
function finish(r) {
  const out = { ...r };
  if (out.ratio === undefined) {
    out.ratio = out.value && out.base && out.base.value ? out.value.median / out.base.value : null;
  }
  if (out.met === undefined) {
    out.met = null;
    const t = out.target;
    if (t && out.value) {
      const x = t.on === 'ratio' ? out.ratio : out.value.median;
      if (x !== null && x !== undefined && Number.isFinite(x)) {
        out.met = (t.max === undefined || x <= t.max) && (t.min === undefined || x >= t.min);
      }
    }
  }
  return out;
}

/** @param {number} x */
function num(x) {
  if (!Number.isFinite(x)) return String(x);
  const a = Math.abs(x);
  if (a >= 1000) return x.toFixed(0);
  if (a >= 100) return x.toFixed(1);
  if (a >= 10) return x.toFixed(2);
  if (a >= 1) return x.toFixed(2);
  return x.toFixed(3);
}

/** @param {Row} r */
function cells(r) {
  const v = r.value;
  const xl = v ? `${num(v.median)} ${r.unit}${v.n > 1 ? ` [${num(v.min)}–${num(v.max)}]` : ''}` : 'n/a';
  let base = '';
  if (r.base) {
    base = r.base.value === null || r.base.value === undefined ? `${r.base.label}: ${r.base.note ?? 'not available'}`
      : `${r.base.label} ${num(r.base.value)} ${r.base.unit ?? r.unit}`;
  }
  const ratio = r.ratio === null || r.ratio === undefined ? '' : `${num(r.ratio)}×`;
  const met = r.met === null || r.met === undefined ? (r.target ? 'n/a' : '') : r.met ? 'met' : 'NOT MET';
  return [r.measure, xl, base, ratio, r.target?.text ?? '', met];
}

const HEADERS = ['measure', 'xlurm median [spread]', 'floor / competitor (same run)', 'ratio', 'target', 'result'];

/** Plain-text table (also valid as a Markdown table with `markdown`). @param {Row[]} rows @param {boolean} [markdown] */
function render(rows, markdown = false) {
  const body = rows.map(cells);
  if (markdown) {
    const esc = (s) => s.replace(/\|/g, '\\|');
    return [`| ${HEADERS.join(' | ')} |`, `|${HEADERS.map(() => ' --- ').join('|')}|`,
      ...body.map((c) => `| ${c.map(esc).join(' | ')} |`)].join('\n') + '\n';
  }
  const widths = HEADERS.map((h, i) => Math.max(h.length, ...body.map((c) => c[i].length)));
  const line = (c) => c.map((s, i) => s.padEnd(widths[i])).join('  ').trimEnd();
  return [line(HEADERS), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n') + '\n';
}

module.exports = { finish, render, num };

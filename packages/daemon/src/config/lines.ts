/**
 * Where each key of a TOML document is written. The parser gives positions
 * only for syntax errors, so after a successful parse this scan of the
 * source maps every dotted key (`daemon.max_running`, `limits.users.alice`)
 * to the line that first names it: its `key = value` line, or the table
 * header that opens it. The document is known to be valid TOML, so the scan
 * only needs to skip what can look like a key without being one: the inside
 * of multi-line strings and of multi-line arrays.
 */

const BARE = /^[A-Za-z0-9_-]+/;

/** One key of a dotted key (`a."b.c".d`) and the rest of the text. */
function keyPart(text: string): [string, string] | undefined {
  const s = text.trimStart();
  if (s.startsWith('"')) {
    const m = /^"((?:[^"\\]|\\.)*)"/.exec(s);
    if (!m) return undefined;
    let v = m[1]!;
    try { v = JSON.parse(`"${v}"`) as string; } catch { /* keep the raw text */ }
    return [v, s.slice(m[0].length)];
  }
  if (s.startsWith("'")) {
    const m = /^'([^']*)'/.exec(s);
    return m ? [m[1]!, s.slice(m[0].length)] : undefined;
  }
  const m = BARE.exec(s);
  return m ? [m[0], s.slice(m[0].length)] : undefined;
}

/** A dotted key at the start of `text`, and what follows it. */
function dottedKey(text: string): [string[], string] | undefined {
  const parts: string[] = [];
  let rest = text;
  for (;;) {
    const p = keyPart(rest);
    if (!p) return undefined;
    parts.push(p[0]);
    rest = p[1].trimStart();
    if (!rest.startsWith('.')) return [parts, rest];
    rest = rest.slice(1);
  }
}

/** Bracket depth change of a value's text, ignoring brackets inside strings and comments. */
function depthChange(text: string): { delta: number; opensString: '"""' | "'''" | undefined } {
  let delta = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '#') break;
    if (text.startsWith('"""', i) || text.startsWith("'''", i)) {
      const q = text.slice(i, i + 3) as '"""' | "'''";
      const end = text.indexOf(q, i + 3);
      if (end < 0) return { delta, opensString: q };
      i = end + 2;
    } else if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      i = end < 0 ? text.length : end;
    } else if (c === '[' || c === '{') delta++;
    else if (c === ']' || c === '}') delta--;
  }
  return { delta, opensString: undefined };
}

/** Dotted key (`a.b.c`; array-of-tables entries as `a.0.b`) → 1-based line. */
export function keyLines(source: string): Map<string, number> {
  const lines = new Map<string, number>();
  const note = (path: string[], line: number) => {
    for (let i = 1; i <= path.length; i++) {
      const k = path.slice(0, i).join('.');
      if (!lines.has(k)) lines.set(k, line);
    }
  };
  const arrayCounts = new Map<string, number>();
  let table: string[] = [];
  let inString: string | undefined;
  let depth = 0;
  const text = source.split(/\r?\n/);
  for (let n = 0; n < text.length; n++) {
    const raw = text[n]!;
    const line = n + 1;
    if (inString) {
      const end = raw.indexOf(inString);
      if (end < 0) continue;
      const after = depthChange(raw.slice(end + 3));
      inString = after.opensString;
      depth += after.delta;
      continue;
    }
    if (depth > 0) {
      const d = depthChange(raw);
      depth += d.delta;
      inString = d.opensString;
      continue;
    }
    const s = raw.trimStart();
    if (s.startsWith('[[')) {
      const k = dottedKey(s.slice(2));
      if (!k) continue;
      const base = k[0].join('.');
      const index = arrayCounts.get(base) ?? 0;
      arrayCounts.set(base, index + 1);
      table = [...k[0], String(index)];
      note(table, line);
      continue;
    }
    if (s.startsWith('[')) {
      const k = dottedKey(s.slice(1));
      if (!k) continue;
      table = k[0];
      note(table, line);
      continue;
    }
    const k = dottedKey(s);
    if (!k || !k[1].startsWith('=')) continue;
    note([...table, ...k[0]], line);
    const d = depthChange(k[1].slice(1));
    depth = Math.max(0, d.delta);
    inString = d.opensString;
  }
  return lines;
}

/** The line of `key`, else of its nearest enclosing key that has one. */
export function lineOf(lines: ReadonlyMap<string, number>, key: string): number | undefined {
  for (let parts = key.split('.'); parts.length > 0; parts = parts.slice(0, -1)) {
    const l = lines.get(parts.join('.'));
    if (l !== undefined) return l;
  }
  return undefined;
}

// Citations of the contract stay inside the repository: every `docs/behaviour.md §N.N` and
// `docs/driver-apis.md §N.N` in the code names a heading that exists, and nothing cites the
// research notes a clone does not have ("spec 5.3", ../shared/spec/…, extensions.md).
// The section scheme is explained at the top of docs/behaviour.md.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.resolve(__dirname, '..', '..', '..');
const self = path.relative(root, __filename);

/** Where code lives: citations here must resolve and must not point outside the repository. */
const CODE_DIRS = ['packages', 'native', 'test', 'scripts', 'bench'];
/** Checked for references outside the repository only (their links are relative). */
const DOC_PATHS = ['docs', 'packaging', 'install.sh', 'README.md', 'README_zh.md'];
const SKIP_DIRS = new Set(['node_modules', 'dist', 'build', '.git', '.tap', 'coverage']);
const MAX_BYTES = 2 * 1024 * 1024;

function walk(rel: string, out: string[]): void {
  const abs = path.join(root, rel);
  let st: fs.Stats;
  try { st = fs.statSync(abs); } catch { return; }
  if (st.isDirectory()) {
    for (const name of fs.readdirSync(abs).sort()) {
      if (!SKIP_DIRS.has(name)) walk(path.join(rel, name), out);
    }
  } else if (st.isFile() && st.size <= MAX_BYTES && rel !== self) {
    out.push(rel);
  }
}

/** Text files only: a NUL byte marks a compiled object or other binary. */
function readText(rel: string): string | undefined {
  const buf = fs.readFileSync(path.join(root, rel));
  return buf.includes(0) ? undefined : buf.toString('utf8');
}

function files(dirs: readonly string[]): { rel: string; text: string }[] {
  const rels: string[] = [];
  for (const d of dirs) walk(d, rels);
  const out: { rel: string; text: string }[] = [];
  for (const rel of rels) {
    const text = readText(rel);
    if (text !== undefined) out.push({ rel, text });
  }
  return out;
}

function lineOf(text: string, index: number): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** Section ids of a doc's numbered headings: `## 5. Scheduling` → 5, `### 5.3 …` → 5.3, `### P.8 …` → P.8. */
export function headingIds(markdown: string): string[] {
  const ids: string[] = [];
  for (const m of markdown.matchAll(/^#{2,4}[ \t]+(P(?:\.\d+)*|\d+(?:\.\d+)*)\.?(?=[ \t]|$)/gm)) ids.push(m[1]!);
  return ids;
}

const SECTION = String.raw`§[ \t]?(P(?:\.\d+)*|\d+(?:\.\d+)*)`;
// Between the doc's name and its sections, and between sections: spaces, line breaks with a
// comment leader, commas, "and", ranges ("§9.1-§9.3"), a Markdown link's target.
const GAP = String.raw`(?:[\s,;*/#(]|\band\b|\bor\b|-|–|\bto\b)*`;
const CITATION = new RegExp(
  String.raw`(?:docs/)?(behaviour|driver-apis)\.md(?:\]\([^)\s]*\))?((?:${GAP}${SECTION})+)`, 'g');

export interface Citation { file: string; line: number; doc: string; section: string }

export function citations(file: string, text: string): Citation[] {
  const out: Citation[] = [];
  for (const m of text.matchAll(CITATION)) {
    const line = lineOf(text, m.index!);
    for (const s of m[2]!.matchAll(new RegExp(SECTION, 'g'))) {
      out.push({ file, line, doc: `docs/${m[1]}.md`, section: s[1]! });
    }
  }
  return out;
}

/** References a clone cannot follow, with what to write instead. */
const OUTSIDE: readonly { re: RegExp; what: string; codeOnly?: boolean }[] = [
  { re: /\bspec[ \t]+(?:preface\b|\d)/i, what: '"spec N.N": cite docs/behaviour.md §N.N' },
  { re: /\bspec\s*\n\s*(?:\/\/|\*|#)\s*\d+\.\d/i, what: '"spec N.N" across a line break: cite docs/behaviour.md §N.N' },
  { re: /shared\/spec|\.\.\/shared\//, what: 'a path outside the repository: cite docs/behaviour.md or docs/driver-apis.md' },
  { re: /\bextensions\.md\b/, what: 'extensions.md is not in the repository: cite docs/behaviour.md §20 and up' },
  { re: /(?<!docs\/)\bdriver-apis\.md\b/, what: 'driver-apis.md without docs/: cite docs/driver-apis.md', codeOnly: true },
  { re: /(?<!docs\/)\bbehaviour\.md\b/, what: 'behaviour.md without docs/: cite docs/behaviour.md', codeOnly: true },
];

export function outsideReferences(file: string, text: string, code: boolean): string[] {
  const out: string[] = [];
  for (const { re, what, codeOnly } of OUTSIDE) {
    if (codeOnly && !code) continue;
    for (const m of text.matchAll(new RegExp(re.source, re.flags.includes('g') ? re.flags : re.flags + 'g'))) {
      const line = lineOf(text, m.index!);
      const shown = text.split('\n')[line - 1]!.trim().slice(0, 120);
      out.push(`${file}:${line}: ${what}: ${shown}`);
    }
  }
  return out;
}

const docs = {
  'docs/behaviour.md': fs.readFileSync(path.join(root, 'docs/behaviour.md'), 'utf8'),
  'docs/driver-apis.md': fs.readFileSync(path.join(root, 'docs/driver-apis.md'), 'utf8'),
} as const;
const sections = new Map(Object.entries(docs).map(([doc, md]) => [doc, new Set(headingIds(md))]));

t.test('the docs number their headings once each, in the documented scheme', async (t) => {
  for (const [doc, md] of Object.entries(docs)) {
    const ids = headingIds(md);
    const twice = ids.filter((id, i) => ids.indexOf(id) !== i);
    t.strictSame(twice, [], `${doc}: no section number used twice`);
  }
  const b = sections.get('docs/behaviour.md')!;
  for (const id of ['P', 'P.8', '2.2.5', '4.4', '5.3', '6.3', '9', '9.6', '11.6', '12', '20.2']) t.ok(b.has(id), `behaviour §${id}`);
  const d = sections.get('docs/driver-apis.md')!;
  for (const id of ['0', '1.6', '2.6', '3.6', '4.4', '5.2', '6.4', '7', '8.1', '9', '10', '11', '11.5']) t.ok(d.has(id), `driver-apis §${id}`);
});

t.test('the citation parser reads the forms the scheme allows', async (t) => {
  const found = (s: string) => citations('x', s).map((c) => `${c.doc} §${c.section}`);
  t.strictSame(found('see docs/behaviour.md §5.3.'), ['docs/behaviour.md §5.3']);
  t.strictSame(found('(docs/behaviour.md §6.4, §9.1 and §P.8)'),
    ['docs/behaviour.md §6.4', 'docs/behaviour.md §9.1', 'docs/behaviour.md §P.8']);
  t.strictSame(found('docs/driver-apis.md §9.1-§9.3'), ['docs/driver-apis.md §9.1', 'docs/driver-apis.md §9.3']);
  t.strictSame(found('docs/driver-apis.md\n * §1.6: rows'), ['docs/driver-apis.md §1.6']);
  t.strictSame(found('docs/behaviour.md, "Submission checks"'), []);
  t.strictSame(outsideReferences('x', 'a job spec on fd 0', true), []);
  t.equal(outsideReferences('x', '(spec 9.2)', true).length, 1);
  t.equal(outsideReferences('x', 'from ../../shared/spec/driver-apis.md §2', true).length, 2);
});

t.test('every citation of docs/behaviour.md and docs/driver-apis.md names an existing heading', async (t) => {
  const bad: string[] = [];
  let count = 0;
  for (const { rel, text } of files(CODE_DIRS)) {
    for (const c of citations(rel, text)) {
      count++;
      if (!sections.get(c.doc)!.has(c.section)) bad.push(`${c.file}:${c.line}: ${c.doc} §${c.section} is not a heading there`);
    }
  }
  t.ok(count > 0, `found ${count} citations`);
  t.strictSame(bad, [], bad.length ? `${bad.length} unresolved citations (file:line below)` : 'all resolve');
});

t.test('nothing cites the specification outside the repository', async (t) => {
  const bad: string[] = [];
  for (const { rel, text } of files(CODE_DIRS)) bad.push(...outsideReferences(rel, text, true));
  for (const { rel, text } of files(DOC_PATHS)) bad.push(...outsideReferences(rel, text, false));
  t.strictSame(bad, [], bad.length ? `${bad.length} references outside the repository (file:line below)` : 'none');
});

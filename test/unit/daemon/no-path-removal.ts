// Standing test of extensions 28.1: no path-based recursive removal anywhere in the daemon, the
// CLI or the addon outside the one descriptor-based module (packages/daemon/src/safe-fs.ts), and
// no following open of the user-influenced paths this repository knows of. Comments are
// ignored (the scanner strips them, leaving strings), so a comment may name what it avoids.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const SAFE_FS = 'packages/daemon/src/safe-fs.ts';
const TREES = ['packages/daemon/src', 'packages/cli/src', 'packages/protocol/src', 'native/src'];

/** Source text with // and block comments blanked (strings, template literals and char literals kept). */
function stripComments(src: string): string {
  let out = '';
  let i = 0;
  while (i < src.length) {
    const ch = src[i]!;
    const next = src[i + 1];
    if (ch === '/' && next === '/') {
      while (i < src.length && src[i] !== '\n') i++;
    } else if (ch === '/' && next === '*') {
      const end = src.indexOf('*/', i + 2);
      const stop = end < 0 ? src.length : end + 2;
      out += src.slice(i, stop).replace(/[^\n]/g, ' ');
      i = stop;
    } else if (ch === '"' || ch === "'" || ch === '`') {
      let j = i + 1;
      while (j < src.length && src[j] !== ch) { if (src[j] === '\\') j++; if (ch !== '`' && src[j] === '\n') break; j++; }
      out += src.slice(i, j + 1);
      i = j + 1;
    } else {
      out += ch;
      i++;
    }
  }
  return out;
}

/** The text of the call starting at `at` (its balanced parentheses), or the rest of the line. */
function callText(code: string, at: number): string {
  const open = code.indexOf('(', at);
  if (open < 0) return code.slice(at, code.indexOf('\n', at));
  let depth = 0;
  for (let i = open; i < code.length; i++) {
    if (code[i] === '(') depth++;
    else if (code[i] === ')' && --depth === 0) return code.slice(at, i + 1);
  }
  return code.slice(at);
}

interface Finding { line: number; what: string }

/** Path-based recursive removals in one file's (comment-stripped) code. */
function recursiveRemovals(code: string): Finding[] {
  const found: Finding[] = [];
  const lineAt = (i: number) => code.slice(0, i).split('\n').length;
  for (const m of code.matchAll(/\b(rmSync|rmdirSync|rm|rmdir)\s*\(/g)) {
    const call = callText(code, m.index!);
    const isFsRm = /^(rmSync|rmdirSync)/.test(m[1]!) || /(fs|promises|fsp)\s*\.\s*$/.test(code.slice(Math.max(0, m.index! - 12), m.index));
    if (isFsRm && /\brecursive\b/.test(call)) found.push({ line: lineAt(m.index!), what: `${m[1]}(…recursive…)` });
  }
  for (const m of code.matchAll(/\brm\s+-(?:[a-zA-Z]*[rR][a-zA-Z]*)\b|['"`]-(?:rf|fr|r|R)['"`]|\brimraf\b|\bnftw\s*\(|\bfts_open\s*\(|remove_all\s*\(/g)) {
    found.push({ line: lineAt(m.index!), what: m[0] });
  }
  return found;
}

function sources(): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(path.join(ROOT, rel), { withFileTypes: true })) {
      const r = path.join(rel, e.name);
      if (e.isDirectory()) walk(r);
      else if (/\.(ts|js|cc|c|h)$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(r);
    }
  };
  for (const tree of TREES) walk(tree);
  return out;
}

const code = (rel: string) => stripComments(fs.readFileSync(path.join(ROOT, rel), 'utf8'));

t.test('the scanner finds what it must and ignores comments', async (t) => {
  t.same(recursiveRemovals("fs.rmSync(dir, { recursive: true, force: true });").length, 1);
  t.same(recursiveRemovals("await fs.promises.rm(\n  dir,\n  { recursive: true },\n);").length, 1);
  t.same(recursiveRemovals("execFileSync('rm', ['-rf', dir]);").length, 1);
  t.same(recursiveRemovals("spawn('sh', ['-c', `rm -rf ${dir}`]);").length, 1);
  t.same(recursiveRemovals("import rimraf from 'rimraf';").length, 2);
  t.same(recursiveRemovals(stripComments("// fs.rmSync(dir, { recursive: true })\n/* rm -rf x */ const a = 1;")), []);
  t.same(recursiveRemovals(stripComments("const url = 'http://x'; fs.rmSync(d, { recursive: true });")).length, 1, 'a // inside a string is no comment');
  t.same(recursiveRemovals("fs.rmdirSync(dir); fs.unlinkSync(f); this.begin.arm(x);"), [], 'non-recursive removals are not flagged');
});

t.test('no path-based recursive removal outside safe-fs.ts (daemon, CLI, protocol, addon)', async (t) => {
  const files = sources().filter((f) => f !== SAFE_FS);
  t.ok(files.length > 50, `scanned ${files.length} files`);
  const bad = files.flatMap((f) => recursiveRemovals(code(f)).map((x) => `${f}:${x.line}: ${x.what}`));
  t.same(bad, [], 'a user-influenced tree is removed by descriptor: packages/daemon/src/safe-fs.ts removeTree');
});

t.test('no fs.rmSync anywhere in the daemon outside safe-fs.ts', async (t) => {
  const bad = sources().filter((f) => f.startsWith('packages/daemon/src/') && f !== SAFE_FS && /\brmSync\s*\(/.test(code(f)));
  t.same(bad, []);
});

t.test('the modules that handle user-influenced paths open, write and remove only through safe-fs.ts', async (t) => {
  // Path-based calls that follow a link (or remove by a path a user may redirect). mkdirSync of
  // the daemon's own parents (job-share.ts ownedDir) and reads of root's own files are allowed.
  const following = /\bfs\s*\.\s*(openSync|writeFileSync|appendFileSync|rmSync|unlinkSync|chmodSync|chownSync|lchownSync|renameSync|copyFileSync|truncateSync|symlinkSync|linkSync|promises\s*\.\s*(open|writeFile|appendFile|rm|unlink|chmod|chown|rename))\s*\(/g;
  for (const f of ['packages/daemon/src/sharing/job-share.ts', 'packages/daemon/src/accounting/metrics-file.ts', 'packages/daemon/src/workflow.ts']) {
    const hits = [...code(f).matchAll(following)].map((m) => m[0]);
    t.same(hits, [], `${f}: through safe-fs.ts`);
  }
  // These also touch the daemon's own files by path (daemon.lock, daemon.log in the state directory).
  for (const f of ['packages/daemon/src/sharing/job-share.ts', 'packages/daemon/src/accounting/metrics-file.ts', 'packages/daemon/src/workflow.ts', 'packages/daemon/src/clean.ts']) {
    t.match(code(f), /from '\.{1,2}\/(\.\.\/)?safe-fs'/, `${f} uses safe-fs.ts`);
  }
  // The CLI may not import the daemon: report --html opens with O_NOFOLLOW, and only so.
  const report = code('packages/cli/src/commands/report.ts');
  const opens = [...report.matchAll(/\bfs\s*\.\s*(openSync|writeFileSync|promises\s*\.\s*(open|writeFile))\s*\(/g)].map((m) => callText(report, m.index!));
  t.ok(opens.length >= 1, 'report.ts opens its FILE');
  for (const o of opens) t.match(o, /^fs\s*\.\s*openSync\(.*O_NOFOLLOW/s, `report --html opens without following a link: ${o}`);
  // The job files' creating opens in jobs/ (root's, 0700) carry O_NOFOLLOW all the same.
  for (const f of ['packages/daemon/src/runner/job-files.ts', 'packages/daemon/src/runner/notify.ts']) {
    const src = code(f);
    for (const m of src.matchAll(/\bfs\s*\.\s*openSync\s*\(/g)) {
      const call = callText(src, m.index!);
      if (/O_CREAT/.test(call)) t.match(call, /O_NOFOLLOW/, `${f}: ${call}`);
    }
  }
});

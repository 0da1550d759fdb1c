// accounting/metrics-file.ts: the metrics file is replaced by a rename, so a reader sees the old
// text or the new one, never part of either; readable by everyone; no temporary file left.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeAtomically } from '../../../../packages/daemon/src/accounting/metrics-file';

t.test('a reader never sees a partial file while it is rewritten', async (t) => {
  const dir = t.testdir();
  const file = path.join(dir, 'xlurm.prom');
  const texts = [0, 1].map((k) => `# HELP x y\n${`line ${k} `.repeat(20000)}\nend ${k}\n`);
  await writeAtomically(file, texts[0]!);
  let done = false;
  let reads = 0;
  let bad = '';
  const reader = (async () => {
    while (!done) {
      const got = fs.readFileSync(file, 'utf8');
      reads++;
      if (got !== texts[0] && got !== texts[1]) { bad = `${got.length} bytes`; break; }
      await new Promise((r) => setImmediate(r));
    }
  })();
  for (let i = 0; i < 200; i++) await writeAtomically(file, texts[i % 2]!);
  done = true;
  await reader;
  t.equal(bad, '', `every one of ${reads} reads was a whole text`);
  t.equal(fs.statSync(file).mode & 0o777, 0o644);
  t.same(fs.readdirSync(dir), ['xlurm.prom'], 'no temporary file left');
});

t.test('a failed write leaves the old file and no temporary file', async (t) => {
  const dir = t.testdir({ 'xlurm.prom': 'old\n', sub: {} });
  const target = path.join(dir, 'sub');
  await t.rejects(writeAtomically(target, 'new\n'), /EISDIR|EEXIST|ENOTEMPTY|directory/i, 'cannot replace a directory');
  t.equal(fs.readFileSync(path.join(dir, 'xlurm.prom'), 'utf8'), 'old\n');
  t.same(fs.readdirSync(dir).sort(), ['sub', 'xlurm.prom']);
  await t.rejects(writeAtomically(path.join(dir, 'missing', 'x.prom'), 'x'), /ENOENT/);
});

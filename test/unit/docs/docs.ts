import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { ERROR_CODES } from '@xlurm/protocol';

const root = path.resolve(__dirname, '..', '..', '..');

t.test('docs/protocol.md is generated from the schemas and up to date', async (t) => {
  let ok = true;
  try { execFileSync(process.execPath, [path.join(root, 'scripts/gen-protocol-doc.js'), '--check'], { stdio: 'pipe' }); } catch { ok = false; }
  t.ok(ok, 'run node scripts/gen-protocol-doc.js');
});

t.test('docs/errors.md documents every error code', async (t) => {
  const text = fs.readFileSync(path.join(root, 'docs/errors.md'), 'utf8');
  for (const code of ERROR_CODES) t.match(text, `| \`${code}\` |`, code);
});

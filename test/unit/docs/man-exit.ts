// Every exit status a command can end with is in its man page (docs/behaviour.md §2.3, §20.3,
// §20.5, §21.6: a new user's `man xrun` lacked 75 and 69).
import t from 'tap';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.join(__dirname, '..', '..', '..');
const out = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-manx-'));
t.teardown(() => fs.rmSync(out, { recursive: true, force: true }));
execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'gen-share.js'), out]);

/** The statuses (`.TP` items) of a page's EXIT STATUS section. */
function statuses(prog: string): string[] {
  const page = fs.readFileSync(path.join(out, 'man', 'man1', `${prog}.1`), 'utf8');
  const section = page.split(/^\.SH /m).find((s) => s.startsWith('EXIT STATUS')) ?? '';
  const lines = section.split('\n');
  return lines.flatMap((l, i) => (l === '.TP' ? [lines[i + 1]!.replace(/\\-/g, '-').replace(/^\.B /, '')] : []));
}

t.test('xrun: the job statuses, 75 and 69 of --immediate and --timeout, 70 of the memory guard', async (t) => {
  t.same(statuses('xrun'), ['0-255', '128+N', '130', '124', '70', '75', '69', '125', '1', '2']);
});

t.test('xqueue --wait/--follow end with the job statuses; the others with 0, 1, 2', async (t) => {
  t.same(statuses('xqueue'), ['0', 'job', '1', '2']);
  const page = fs.readFileSync(path.join(out, 'man', 'man1', 'xqueue.1'), 'utf8');
  t.match(page, /0\\-255, 128\+N, 130, 124, 70, 75, 69, 125/);
  for (const prog of ['xbatch', 'xcancel', 'xinfo']) t.same(statuses(prog), ['0', '1', '2'], prog);
  t.same(statuses('xlurm'), ['0', '1', '2', 'other']);
});

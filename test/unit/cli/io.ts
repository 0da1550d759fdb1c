// writeOut and errLine, in a child process whose stdout the test controls (a file, a pipe nobody
// reads, a pipe closed by its reader), through the built module.
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from '../../helpers/env';

const IO = path.join(ROOT, 'packages', 'cli', 'dist', 'io.js');
const prelude = `const { writeOut, errLine } = require(${JSON.stringify(IO)});`;

t.test('a write that reaches a file at once returns nothing; errLine adds the newline', async (t) => {
  const dir = t.testdir();
  const out = path.join(dir, 'out');
  const fd = fs.openSync(out, 'w');
  const r = spawnSync(process.execPath, ['-e', `${prelude}
    const a = writeOut('abc');
    const b = writeOut(Buffer.from('def'));
    errLine('to stderr');
    process.stderr.write(String(a) + ' ' + String(b) + '\\n');`], { stdio: ['ignore', fd, 'pipe'], encoding: 'utf8' });
  fs.closeSync(fd);
  t.equal(r.status, 0, r.stderr);
  t.equal(fs.readFileSync(out, 'utf8'), 'abcdef');
  t.equal(r.stderr, 'to stderr\nundefined undefined\n');
});

t.test('a full pipe: a promise that resolves once the bytes are out (backpressure)', async (t) => {
  const child = spawn(process.execPath, ['-e', `${prelude}
    const big = Buffer.alloc(4 << 20, 'x');
    const p = writeOut(big);
    process.stderr.write((p instanceof Promise ? 'promise' : String(p)) + '\\n');
    p.then(() => process.stderr.write('written\\n'));`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (b: Buffer) => { err += b.toString(); });
  // Nobody reads stdout until the child said what writeOut returned.
  await new Promise<void>((resolve) => { const check = () => (err.includes('\n') ? resolve() : child.stderr.once('data', check)); check(); });
  t.equal(err, 'promise\n', 'not written out yet');
  let got = 0;
  child.stdout.on('data', (b: Buffer) => { got += b.length; });
  const code = await new Promise<number | null>((r) => child.on('close', r));
  t.equal(code, 0);
  t.equal(got, 4 << 20, 'every byte');
  t.equal(err, 'promise\nwritten\n');
});

t.test('a reader that went away: no crash, and writes fail with the broken pipe', async (t) => {
  // The first write may be dropped before the pipe's error arrives; from then on every write fails.
  const child = spawn(process.execPath, ['-e', `${prelude}
    const report = (what) => (e) => process.stderr.write(what + ': ' + e.constructor.name + ': ' + e.message + '\\n');
    const later = () => {
      const p = writeOut('more');
      if (p) p.then(() => setImmediate(later), report('later')); else setImmediate(later);
    };
    Promise.resolve(writeOut(Buffer.alloc(4 << 20, 'x'))).then(later, (e) => { report('first')(e); later(); });`],
  { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.destroy(); // the reader is gone: EPIPE
  let err = '';
  child.stderr.on('data', (b: Buffer) => { err += b.toString(); });
  const code = await new Promise<number | null>((r) => child.on('close', r));
  t.equal(code, 0, `no crash on EPIPE (${err})`);
  t.match(err, /^(first: CliError: Broken pipe \(os error 32\)\n)?later: CliError: Broken pipe \(os error 32\)\n$/);
});

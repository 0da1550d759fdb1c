import t from 'tap';
import * as fs from 'node:fs';
import { main, topHelp, WRAPPERS, ABOUT } from '../../../packages/cli/src/main';
import { notRunningMessage } from '../../../packages/cli/src/client';
import { capture, tempDir, withHome } from './fake-daemon';

const run = (program: string, argv: string[]) => capture(() => main(program, argv));

t.test('--version and -V print "<program> 0.1.0" for all six programs', async (t) => {
  for (const prog of ['xlurm', ...Object.keys(WRAPPERS)]) {
    for (const flag of ['--version', '-V']) {
      const r = await run(prog, [flag]);
      t.same([r.value, r.stdout, r.stderr], [0, `${prog} 0.1.0\n`, ''], `${prog} ${flag}`);
    }
  }
  const r = await run('xlurm', ['queue', '-V']);
  t.same([r.value, r.stdout], [0, 'xlurm 0.1.0\n']);
  t.equal((await run('/usr/local/bin/xinfo', ['-V'])).stdout, 'xinfo 0.1.0\n', 'program name is the base name');
});

t.test('top-level help and usage errors', async (t) => {
  let r = await run('xlurm', ['--help']);
  t.equal(r.value, 0);
  t.equal(r.stdout, topHelp('xlurm'));
  t.match(r.stdout, new RegExp(`^${ABOUT}\n\nUsage: xlurm <COMMAND>\n`));
  for (const name of ['start', 'daemon', 'stop', 'restart', 'clean', 'status', 'exclude', 'include', 'run', 'batch', 'queue', 'cancel', 'info']) {
    t.match(r.stdout, new RegExp(`^  ${name} `, 'm'), name);
  }
  t.notMatch(r.stdout, /__daemon/);
  r = await run('xlurm', []);
  t.equal(r.value, 2, 'a subcommand is required');
  t.match(r.stderr, /Usage: xlurm <COMMAND>/);
  r = await run('xlurm', ['frobnicate']);
  t.equal(r.value, 2);
  t.equal(r.stderr, "error: unrecognized subcommand 'frobnicate'\n\nUsage: xlurm <COMMAND>\n\nFor more information, try '--help'.\n");
  r = await run('xlurm', ['--bogus']);
  t.equal(r.value, 2);
  t.match(r.stderr, /^error: unexpected argument '--bogus' found\n/);
  r = await run('xlurm', ['help', 'queue']);
  t.equal(r.value, 0);
  t.match(r.stdout, /Usage: xlurm queue \[OPTIONS\] \[JOB_ID\]/);
  r = await run('xlurm', ['help']);
  t.equal(r.stdout, topHelp('xlurm'));
  r = await run('xqueue', ['-h']);
  t.match(r.stdout, /^Show active jobs[^]*Usage: xqueue \[OPTIONS\] \[JOB_ID\][^]*--cancel/);
});

t.test('__daemon is a hidden alias of daemon', async (t) => {
  const r = await run('xlurm', ['__daemon', '--help']);
  t.equal(r.value, 0);
  t.match(r.stdout, /Usage: xlurm daemon \[OPTIONS\]/);
  const bad = await run('xlurm', ['__daemon', '--backend', 'cuda']);
  t.equal(bad.value, 2);
  t.match(bad.stderr, /^error: invalid value 'cuda' for '--backend <BACKEND>'/);
});

t.test('wrapper names are aliases under xlurm', async (t) => {
  for (const [wrapper, sub] of Object.entries(WRAPPERS)) {
    const a = await run('xlurm', [wrapper, '--help']);
    const b = await run('xlurm', [sub, '--help']);
    t.equal(a.stdout.replace(`xlurm ${sub}`, ''), b.stdout.replace(`xlurm ${sub}`, ''), wrapper);
  }
});

t.test('failures print xlurm: <message> and exit 1; umask is 077', async (t) => {
  const home = tempDir(t);
  process.umask(0o022);
  const r = await withHome(home, () => run('xinfo', []));
  t.equal(r.value, 1);
  t.equal(r.stderr, `xlurm: ${notRunningMessage('No such file or directory (os error 2)')}\n`);
  t.equal(r.stdout, '');
  t.equal(process.umask(), 0o077);
  t.notOk(fs.existsSync(`${home}/xlurm.sock`));
});

import t from 'tap';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { captureEnv, envFromEnviron, sortEnv, splitEnviron } from '../../../packages/cli/src/env';

const block = (...entries: (string | Buffer)[]) => Buffer.concat(entries.flatMap((e) => [Buffer.isBuffer(e) ? e : Buffer.from(e), Buffer.from([0])]));
const MSG = (name: string) => `environment variable ${name} is not valid UTF-8; unset or fix it before submitting`;

t.test('environ blocks split at the first = after the first byte', async (t) => {
  const raw = splitEnviron(block('A=1', 'B=x=y', 'EMPTY=', 'NOEQUALS', '=weird=v', ''));
  t.same(raw.map((e) => [e.name.toString(), e.value.toString()]), [['A', '1'], ['B', 'x=y'], ['EMPTY', ''], ['=weird', 'v']]);
  t.same(splitEnviron(Buffer.from('LAST=no-terminator')).map((e) => e.value.toString()), ['no-terminator']);
});

t.test('the block alone: sorted by name in byte order, first duplicate wins', async (t) => {
  const env = envFromEnviron(block('b=2', 'a=1', 'a=shadowed', '\u{1F600}=emoji', '\uFFFD=replacement', 'Z=upper'));
  t.same(Object.entries(env), [['Z', 'upper'], ['a', '1'], ['b', '2'], ['\uFFFD', 'replacement'], ['\u{1F600}', 'emoji']]);
});

t.test('non-UTF-8 names and values are refused by name', async (t) => {
  t.throws(() => envFromEnviron(block(Buffer.from([0x42, 0x41, 0x44, 0x3d, 0xff]))), { name: 'CliError', message: MSG('BAD') });
  t.throws(() => envFromEnviron(block(Buffer.from([0xc3, 0x28, 0x3d, 0x31]))), { message: MSG('\uFFFD(') });
  t.throws(() => envFromEnviron(block('OK=1', Buffer.from('HALF=\xe4\xb8', 'latin1'))), { message: MSG('HALF') }, 'truncated sequence');
  t.same(envFromEnviron(block('OK=\u00e9\u4e16')), { OK: '\u00e9\u4e16' });
});

t.test("with the process's view: only its variables, checked against their raw bytes", async (t) => {
  const raw = block('KEEP=1', 'INJECTED_BY_HARNESS=x', Buffer.from('DROPPED=\xff', 'latin1'), 'ADDED_LATER_NOT_RAW=no');
  const env = envFromEnviron(raw, { KEEP: '1', LATE: 'set at run time' });
  t.same(env, { KEEP: '1', LATE: 'set at run time' });
  t.throws(() => envFromEnviron(raw, { DROPPED: '\uFFFD' }), { message: MSG('DROPPED') });
  t.throws(() => envFromEnviron(block(Buffer.from('\xfeNAME=1', 'latin1')), {}), { message: MSG('\uFFFDNAME') },
    'an invalid name is refused even though Node leaves it out of process.env');
});

t.test('sortEnv orders by UTF-8 bytes, not UTF-16 units', async (t) => {
  t.same(Object.keys(sortEnv([['\u{1F600}', ''], ['\uFFFD', ''], ['a', '']])), ['a', '\uFFFD', '\u{1F600}']);
});

t.test('captureEnv is this process environment, sorted', async (t) => {
  const env = captureEnv();
  const expected = Object.keys(process.env).filter((k) => typeof process.env[k] === 'string');
  t.same(new Set(Object.keys(env)), new Set(expected));
  for (const k of expected) t.equal(env[k], process.env[k], k);
  const keys = Object.keys(env).filter((k) => !/^\d+$/.test(k)); // integer-like keys are ordered first by JS
  t.same(keys, [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
});

const bin = path.resolve(__dirname, '../../../packages/cli/bin/xrun');
const built = fs.existsSync(path.resolve(__dirname, '../../../packages/cli/dist/main.js'));

t.test('xrun refuses a non-UTF-8 variable before contacting the daemon', { skip: built ? false : 'packages/cli is not built' }, async (t) => {
  const home = fs.mkdtempSync('/tmp/xlc-env-');
  t.teardown(() => fs.rmSync(home, { recursive: true, force: true }));
  // The shell puts the raw byte 0xff into the child's environment; Node's spawn cannot.
  const r = spawnSync('/bin/sh', ['-c', `XL_BAD_VALUE=$(printf 'a\\377b'); export XL_BAD_VALUE; exec "$0" "$1" -g 0 true`, process.execPath, bin], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', XLURM_HOME: home }, encoding: 'utf8',
  });
  t.equal(r.status, 1);
  t.equal(r.stderr, `xlurm: ${MSG('XL_BAD_VALUE')}\n`);
  t.equal(r.stdout, '');
});

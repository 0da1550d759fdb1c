// handlers/submit.ts: who may submit, the checks (codes and messages are the contract), the reply.
import t from 'tap';
import * as os from 'node:os';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadDaemonConfig } from '../../../../packages/daemon/src/config/daemon';
import { parseDaemonArgs } from '../../../../packages/daemon/src/config/args';
import { requestBytes } from '../../../../packages/daemon/src/config/request-limits';
import type { Submission } from '@xlurm/protocol';
import { submit } from '../../../../packages/daemon/src/handlers/submit';
import type { Caller } from '../../../../packages/daemon/src/core';
import { ctxOf, makeCore, spec } from '../../../helpers/core';

const me: Caller = { uid: process.getuid!(), gid: 4321, pid: process.pid };
const myName = os.userInfo().username;

t.test('a non-root daemon runs jobs for its own account only', async (t) => {
  const tc = await makeCore(t, { euid: me.uid + 1 });
  t.throws(() => submit(ctxOf(tc.core, me), spec()), { code: 'FOREIGN_USER', message: 'only a root daemon can run jobs for other users' });
  t.same(tc.core.activeJobs(), []);
});

t.test('a caller without a local account is refused', { skip: me.uid !== 0 && 'needs a root daemon (any caller uid)' }, async (t) => {
  const tc = await makeCore(t, { euid: 0 });
  const ghost: Caller = { uid: 3_999_999, gid: 3_999_999, pid: 1 };
  t.throws(() => submit(ctxOf(tc.core, ghost), spec()), { code: 'NO_ACCOUNT', message: 'no local account for UID 3999999' });
});

t.test('accepted: the reply is the stored PENDING job, owned by the caller as the kernel named it', async (t) => {
  const tc = await makeCore(t, { devices: 2, maxRunning: 1 });
  const blocker = await submit(ctxOf(tc.core, me), spec());
  const s: Submission = { command: ['echo', 'hi'], cwd: '/', env: { A: '1' }, name: 'echo', count: 1, device_ids: [1] };
  const reply = await submit(ctxOf(tc.core, me), s);
  t.match(reply, {
    owner: { uid: me.uid, gid: 4321, name: myName }, state: 'PENDING', devices: [], started_at: null, result: null,
    spec: { command: ['echo', 'hi'], cwd: '/', env: { A: '1' }, name: 'echo', count: 1, device_ids: [1], kind: null, time_limit: null, script: null },
  });
  t.notOk('exclude_ids' in reply.spec, 'absent lists stay absent');
  t.ok(reply.id > blocker.id);
  t.same(tc.store.get(reply.id)!.spec, reply.spec, 'stored as answered');
  t.notOk('stepdPid' in reply);
});

t.test('refused submissions: each check with its code and message, nothing stored', async (t) => {
  const tc = await makeCore(t, { devices: 2 });
  const bad: Array<[string, Submission, string, string]> = [
    ['no command', spec({ command: [] }), 'EMPTY_COMMAND', 'empty command'],
    ['zero time limit', spec({ time_limit: 0 }), 'INVALID_ARGUMENT', 'time-limit must be positive'],
    ['-x with -i', spec({ count: 1, device_ids: [0], exclude_ids: [1] }), 'INVALID_ARGUMENT', '-x cannot be combined with -i'],
    ['duplicate ids', spec({ count: 2, device_ids: [1, 1] }), 'INVALID_ARGUMENT', 'device IDs must not contain duplicates'],
    ['count and ids differ', spec({ count: 1, device_ids: [0, 1] }), 'INVALID_ARGUMENT', '-g count must match the number of -i device IDs'],
    ['NUL in an argument', spec({ command: ['a\0b'] }), 'INVALID_ARGUMENT', 'command arguments must not contain NUL bytes'],
    ['NUL in the script', spec({ command: [], script: 'x\0' }), 'INVALID_ARGUMENT', 'script must not contain NUL bytes'],
    ['NUL in the directory', spec({ cwd: '/\0' }), 'INVALID_ARGUMENT', 'working directory must not contain NUL bytes'],
    ['= in a variable name', spec({ env: { 'A=B': '1' } }), 'INVALID_ARGUMENT', 'invalid environment variable name: "A=B"'],
    ['empty variable name', spec({ env: { '': '1' } }), 'INVALID_ARGUMENT', 'invalid environment variable name: ""'],
    ['NUL in a value', spec({ env: { A: 'x\0' } }), 'INVALID_ARGUMENT', 'environment variable A contains a NUL byte'],
    ['relative directory', spec({ cwd: 'tmp' }), 'BAD_WORKING_DIRECTORY', 'working directory does not exist'],
    ['missing directory', spec({ cwd: '/no/such/dir/xlurm' }), 'BAD_WORKING_DIRECTORY', 'working directory does not exist'],
    ['too many devices', spec({ count: 3 }), 'INFEASIBLE', 'requested 3 device(s), but no matching pool has enough devices'],
    ['ids not in the inventory', spec({ count: 1, device_ids: [7] }), 'INFEASIBLE', 'requested 1 device(s), but no matching pool has enough devices'],
  ];
  for (const [what, s, code, message] of bad) t.throws(() => submit(ctxOf(tc.core, me), s), { code, message }, what);
  tc.core.exclude([0]);
  t.throws(() => submit(ctxOf(tc.core, me), spec({ count: 2 })), { code: 'INFEASIBLE' }, 'excluded devices do not count');
  t.same(tc.core.summaries(), [], 'nothing stored');
  const script = await submit(ctxOf(tc.core, me), spec({ command: [], script: 'echo hi\n' }));
  t.equal(script.spec.script, 'echo hi\n', 'a script needs no command');
});

// --- Bounded requests (docs/behaviour.md §28.2) ---
const nobody: Caller = { uid: 65534, gid: 65534, pid: 1 };
const rootOnly = me.uid !== 0 && 'needs a root daemon (a caller other than root)';
const storedJobs = (tc: { store: { counts(): Record<string, number> } }) => Object.values(tc.store.counts()).reduce((a, b) => a + b, 0);

t.test('§28.2 max_request_bytes: environment, script and arguments together; INVALID_REQUEST, nothing stored', async (t) => {
  const tc = await makeCore(t, { devices: 1 });
  const M = 1024 * 1024;
  const big = spec({ env: { BIG: 'x'.repeat(Math.round(3.2 * M) - 4) } }); // 'BIG=' + value: 3.2M
  t.throws(() => submit(ctxOf(tc.core, me), big), { code: 'INVALID_REQUEST', message: 'request too large: 3.2M (limit max_request_bytes 3M)' });
  const parts = spec({ env: { A: 'a'.repeat(M) }, script: 's'.repeat(M), command: ['c'.repeat(M), 'd'.repeat(M)] });
  t.throws(() => submit(ctxOf(tc.core, me), parts), { code: 'INVALID_REQUEST', message: /^request too large: 4M \(limit max_request_bytes 3M\)$/ }, 'the three together');
  t.equal(storedJobs(tc), 0, 'nothing stored');
  await submit(ctxOf(tc.core, me), spec({ env: { A: 'a'.repeat(3 * M - 2 - requestBytes(spec({ env: {} }))) } }));
  t.equal(storedJobs(tc), 1, 'exactly the limit is accepted');
  const file = path.join(tc.dir, 'xlurm.toml');
  fs.writeFileSync(file, '[daemon]\nbackend = "none"\n[limits]\nmax_request_bytes = "1K"\n');
  tc.core.applyConfig(loadDaemonConfig(parseDaemonArgs([]), { file, named: true }));
  t.throws(() => submit(ctxOf(tc.core, me), spec({ command: ['x'.repeat(1025)] })), { code: 'INVALID_REQUEST', message: 'request too large: 1K (limit max_request_bytes 1K)' });
  fs.writeFileSync(file, '[daemon]\nbackend = "none"\n[limits]\nmax_request_bytes = 0\n');
  tc.core.applyConfig(loadDaemonConfig(parseDaemonArgs([]), { file, named: true }));
  await submit(ctxOf(tc.core, me), big);
  t.equal(storedJobs(tc), 2, '0: no limit but the frame');
});

t.test('§28.2 max_array_tasks: --array and --param products beyond it are refused whole, nothing stored', async (t) => {
  const tc = await makeCore(t, { devices: 1 });
  const message = 'an array may have at most 10000 tasks (limit max_array_tasks)';
  t.throws(() => submit(ctxOf(tc.core, me), spec({ array: '0-10000' })), { code: 'INVALID_REQUEST', message });
  const values = (n: number) => Array.from({ length: n }, (_, i) => String(i));
  t.throws(() => submit(ctxOf(tc.core, me), spec({ params: [{ name: 'a', values: values(100) }, { name: 'b', values: values(101) }] })), { code: 'INVALID_REQUEST', message }, 'a sweep of 100 x 101');
  t.equal(storedJobs(tc), 0);
  const file = path.join(tc.dir, 'xlurm.toml');
  fs.writeFileSync(file, '[daemon]\nbackend = "none"\n[limits]\nmax_array_tasks = 5\n');
  tc.core.applyConfig(loadDaemonConfig(parseDaemonArgs([]), { file, named: true }));
  t.throws(() => submit(ctxOf(tc.core, me), spec({ array: '0-5' })), { code: 'INVALID_REQUEST', message: 'an array may have at most 5 tasks (limit max_array_tasks)' });
  await submit(ctxOf(tc.core, me), spec({ array: '0-4' }));
  t.equal(storedJobs(tc), 5);
  fs.writeFileSync(file, '[daemon]\nbackend = "none"\n[limits]\nmax_array_tasks = 0\n');
  tc.core.applyConfig(loadDaemonConfig(parseDaemonArgs([]), { file, named: true }));
  t.throws(() => submit(ctxOf(tc.core, me), spec({ array: '0-100000' })), { code: 'INVALID_ARGUMENT', message: 'array of 100001 tasks: at most 100000 tasks per array' }, "0: the protocol's own cap");
});

t.test('§28.2 pending_jobs defaults to 10000: an array that would cross it is refused whole; root is exempt', { skip: rootOnly }, async (t) => {
  const tc = await makeCore(t, { devices: 1, euid: 0 });
  await submit(ctxOf(tc.core, nobody), spec({ hold: true }));
  t.throws(() => submit(ctxOf(tc.core, nobody), spec({ array: '0-9999', hold: true })), { code: 'USER_LIMIT', message: 'nobody already has 1 pending job (limit 10000)' });
  t.equal(storedJobs(tc), 1, 'none of its tasks stored');
  await submit(ctxOf(tc.core, nobody), spec({ array: '0-9998', hold: true }));
  t.equal(storedJobs(tc), 10000, 'up to the limit is accepted');
  t.throws(() => submit(ctxOf(tc.core, nobody), spec({ hold: true })), { code: 'USER_LIMIT' });
  await submit(ctxOf(tc.core, me), spec({ array: '0-9', hold: true }));
  t.equal(storedJobs(tc), 10010, 'root is exempt');
});

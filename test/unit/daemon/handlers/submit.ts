// handlers/submit.ts: who may submit, the checks (codes and messages are the contract), the reply.
import t from 'tap';
import * as os from 'node:os';
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

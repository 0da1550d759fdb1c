// The submission options shared by xrun and xbatch (cli/src/submit.ts; docs/behaviour.md
// §2.3): typed flags, the shared request check, the default name, the wire Submission.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  SUBMIT_OPTIONS, buildSubmission, checkJob, currentDir, defaultName, parseSubmitFlags, validateSubmitFlags, type SubmitFlags,
} from '../../../packages/cli/src/submit';
import { tempDir } from './fake-daemon';

const NONE: SubmitFlags = { gpus: undefined, deviceIds: undefined, excludeIds: undefined, kind: null, name: undefined, timeLimit: null };

t.test('no flags: nothing asked for', async (t) => {
  t.same(parseSubmitFlags({}), NONE);
});

t.test('values are typed; id lists come from every repetition, comma-separated', async (t) => {
  t.same(parseSubmitFlags({ gpus: '2', 'device-ids': ['1,3', '5'], device: 'nv', name: 'n', 'time-limit': '60' }),
    { gpus: 2, deviceIds: [1, 3, 5], excludeIds: undefined, kind: 'nvidia', name: 'n', timeLimit: 60 });
  t.same(parseSubmitFlags({ 'exclude-device-ids': '0,2', device: 'hcu' }), { ...NONE, excludeIds: [0, 2], kind: 'hcu' });
  t.same(parseSubmitFlags({ gpus: '+0' }).gpus, 0, "Rust's leading +");
  t.same(['90', '15m', '2h', '1d', '05:30', '1:00:00', '1-00:00:00'].map((v) => parseSubmitFlags({ 'time-limit': v }).timeLimit),
    [90, 900, 7200, 86400, 330, 3600, 86400], '-t: durations and Slurm clock forms, as seconds');
});

t.test('parse errors are usage errors with the option named', async (t) => {
  const usage = (args: Record<string, unknown>, message: string | RegExp) => t.throws(() => parseSubmitFlags(args), { name: 'UsageError', message });
  usage({ gpus: ['1', '2'] }, "the argument '--gpus <N>' cannot be used multiple times");
  usage({ gpus: '' }, "a value is required for '--gpus <N>' but none was supplied");
  usage({ gpus: 'x' }, "invalid value 'x' for '--gpus <N>': must be a whole number of 0 or more");
  usage({ gpus: '4294967296' }, "invalid value '4294967296' for '--gpus <N>': at most 4294967295");
  usage({ 'device-ids': '1,' }, "invalid value '' for '--device-ids <LIST>': must be a whole number of 0 or more");
  usage({ 'exclude-device-ids': 'a' }, "invalid value 'a' for '--exclude-device-ids <LIST>': must be a whole number of 0 or more");
  usage({ device: 'cuda' }, "invalid value 'cuda' for '--device <KIND>' [possible values: nvidia, nv, ascend, asc, mthreads, mtt, metax, mx, ppu, hcu]");
  usage({ device: '' }, "a value is required for '--device <KIND>' but none was supplied");
  usage({ 'time-limit': '-1' }, "invalid duration '-1': use seconds, or a number with s, m, h or d");
  usage({ 'time-limit': '1:60' }, "invalid duration '1:60': use seconds, or a number with s, m, h or d");
  usage({ name: ['a', 'b'] }, "the argument '--name <NAME>' cannot be used multiple times");
});

t.test('the device count: -g, else as many as -i names, else one', async (t) => {
  t.equal(validateSubmitFlags(NONE), 1);
  t.equal(validateSubmitFlags({ ...NONE, gpus: 0 }), 0);
  t.equal(validateSubmitFlags({ ...NONE, deviceIds: [4, 2] }), 2);
  t.equal(validateSubmitFlags({ ...NONE, gpus: 2, deviceIds: [4, 2] }), 2);
  t.equal(validateSubmitFlags({ ...NONE, gpus: 3, excludeIds: [0] }), 3);
});

t.test("the request check is the daemon's: same words, client error (exit 1)", async (t) => {
  const refused = (f: Partial<SubmitFlags>, message: string) => t.throws(() => validateSubmitFlags({ ...NONE, ...f }), { name: 'CliError', message });
  refused({ timeLimit: 0 }, 'time-limit must be positive');
  refused({ deviceIds: [1], excludeIds: [2] }, '-x cannot be combined with -i');
  refused({ deviceIds: [1, 1] }, 'device IDs must not contain duplicates');
  refused({ gpus: 1, deviceIds: [1, 2] }, '-g count must match the number of -i device IDs');
  refused({ timeLimit: 0, deviceIds: [1, 1] }, 'time-limit must be positive');
});

t.test('the default name: -n, else the script file name, else the first command word, else batch', async (t) => {
  t.equal(defaultName({ ...NONE, name: '' }, '/x/run.sh', ['python']), '', 'an empty -n is a name');
  t.equal(defaultName(NONE, '/x/y/run.sh', ['python']), 'run.sh');
  t.equal(defaultName(NONE, undefined, ['/usr/bin/python3', 'a']), '/usr/bin/python3', 'the word as given');
  t.equal(defaultName(NONE, undefined, []), 'batch');
});

t.test("the wire submission: the reference's key order; device_ids and exclude_ids only when given", async (t) => {
  const base = { command: ['true'], cwd: '/w', env: { A: '1' }, name: 'true', count: 1, script: null };
  const plain = buildSubmission({ ...base, flags: NONE });
  t.same(Object.keys(plain), ['command', 'cwd', 'env', 'name', 'count', 'kind', 'time_limit', 'script']);
  t.same(plain, { ...base, kind: null, time_limit: null });
  const full = buildSubmission({ ...base, count: 2, script: 'echo\n', flags: { ...NONE, deviceIds: [3, 1], kind: 'ascend', timeLimit: 5 } });
  t.same(Object.keys(full), ['command', 'cwd', 'env', 'name', 'count', 'device_ids', 'kind', 'time_limit', 'script']);
  t.same([full.device_ids, full.kind, full.time_limit, full.script], [[3, 1], 'ascend', 5, 'echo\n']);
  const ex = buildSubmission({ ...base, flags: { ...NONE, excludeIds: [0] } });
  t.same(Object.keys(ex), ['command', 'cwd', 'env', 'name', 'count', 'exclude_ids', 'kind', 'time_limit', 'script']);
});

t.test('the current directory, or why it cannot be had', async (t) => {
  t.equal(currentDir(), process.cwd());
  const saved = process.cwd();
  const gone = path.join(tempDir(t), 'gone');
  fs.mkdirSync(gone);
  process.chdir(gone);
  t.teardown(() => process.chdir(saved));
  fs.rmdirSync(gone);
  t.throws(() => currentDir(), { name: 'CliError', message: /^cannot determine the current directory: No such file or directory \(os error 2\)$/ });
});

t.test('the submit reply must be a job with an id', async (t) => {
  const job = { id: 3, state: 'PENDING' };
  t.equal(checkJob(job), job);
  for (const bad of [null, undefined, 'x', {}, { id: '3' }]) {
    t.throws(() => checkJob(bad), { name: 'CliError', message: 'unexpected response' }, JSON.stringify(bad) ?? 'undefined');
  }
});

t.test('the options xrun and xbatch share', async (t) => {
  t.same(Object.keys(SUBMIT_OPTIONS), ['gpus', 'device-ids', 'exclude-device-ids', 'device', 'name', 'time-limit', 'timeout', 'group-affinity', 'ignore-group-affinity', 'cpus', 'mem', 'notify', 'dependency', 'begin', 'retry', 'nice', 'share']);
  t.same([SUBMIT_OPTIONS.gpus!.alias, SUBMIT_OPTIONS['device-ids']!.alias, SUBMIT_OPTIONS['exclude-device-ids']!.alias, SUBMIT_OPTIONS.name!.alias, SUBMIT_OPTIONS['time-limit']!.alias],
    [['g', 'devices'], 'i', 'x', 'n', 't']);
});

t.test('--group-affinity and --ignore-group-affinity (docs/behaviour.md §21.5)', async (t) => {
  t.equal(parseSubmitFlags({}).groupAffinity, undefined);
  t.equal(parseSubmitFlags({ 'group-affinity': true }).groupAffinity, 'require');
  t.equal(parseSubmitFlags({ 'ignore-group-affinity': true }).groupAffinity, 'off');
  t.throws(() => parseSubmitFlags({ 'group-affinity': true, 'ignore-group-affinity': true }),
    { message: "the argument '--group-affinity' cannot be used with '--ignore-group-affinity'" });
  const parts = { command: ['true'], cwd: '/', env: {}, name: 'true', count: 2, script: null };
  t.equal(buildSubmission({ ...parts, flags: parseSubmitFlags({ 'group-affinity': true }) }).group_affinity, 'require');
  t.notOk('group_affinity' in buildSubmission({ ...parts, flags: parseSubmitFlags({}) }), 'absent unless given');
});

t.test('--timeout: a duration, not zero; sent as queue_timeout only when given', async (t) => {
  t.equal(parseSubmitFlags({}).queueTimeout, undefined);
  t.same(['90', '15m', '2h', '1d'].map((v) => parseSubmitFlags({ timeout: v }).queueTimeout), [90, 900, 7200, 86400]);
  for (const bad of ['0', '0m', '1:00', 'x', '-1']) {
    t.throws(() => parseSubmitFlags({ timeout: bad }), { name: 'UsageError', message: `invalid duration '${bad}': use seconds, or a number with s, m, h or d` });
  }
  const parts = { command: ['true'], cwd: '/', env: {}, name: 'true', count: 0, script: null };
  t.equal(buildSubmission({ ...parts, flags: parseSubmitFlags({ timeout: '5m' }) }).queue_timeout, 300);
  t.notOk('queue_timeout' in buildSubmission({ ...parts, flags: parseSubmitFlags({}) }), 'absent: the host default applies');
});

t.test('-c/--cpus and --mem (docs/behaviour.md §24.1): sent only when given, --mem in bytes', async (t) => {
  t.equal(SUBMIT_OPTIONS.cpus!.alias, 'c');
  const parts = { command: ['true'], cwd: '/', env: {}, name: 'true', count: 0, script: null };
  const none = buildSubmission({ ...parts, flags: parseSubmitFlags({}) });
  t.notOk('cpus' in none || 'mem' in none, 'absent: the host defaults apply');
  const s = buildSubmission({ ...parts, flags: parseSubmitFlags({ cpus: '4', mem: '1.5G' }) });
  t.equal(s.cpus, 4);
  t.equal(s.mem, 1.5 * 1024 ** 3);
  t.equal(parseSubmitFlags({ mem: '512' }).mem, 512 * 1024 ** 2, 'a bare number is MiB');
  t.throws(() => parseSubmitFlags({ mem: '16X' }), { name: 'UsageError', message: "invalid size '16X': use a number with K, M, G or T" });
  t.throws(() => parseSubmitFlags({ cpus: 'x' }), { name: 'UsageError' });
});

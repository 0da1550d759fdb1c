import t from 'tap';
import { main } from '../../../../packages/cli/src/main';
import { capture, fakeDaemon, withHome, type Conn } from '../fake-daemon';

const savedTz = process.env.TZ;
t.teardown(() => {
  if (savedTz === undefined) delete process.env.TZ;
  else process.env.TZ = savedTz;
});

const T = Date.UTC(2024, 4, 1) / 1000;
const summary = (id: number, state: string, extra: object = {}) => ({
  id, owner: { uid: 1000, gid: 1000, name: 'alice' }, name: `j${id}`, state, count: 0, kind: null, devices: [],
  submitted_at: T, started_at: state === 'PENDING' ? null : T + 1, finished_at: null, reason: null, ...extra,
});
const JOBS = [summary(1, 'COMPLETED', { finished_at: T + 5 }), summary(2, 'PENDING'), summary(3, 'RUNNING')];
const JOB = {
  id: 2, owner: { uid: 1000, gid: 1000, name: 'alice' },
  spec: { command: ['true'], cwd: '/tmp', env: { A: '1' }, name: 'j2', count: 0, kind: null, time_limit: null, script: null },
  state: 'PENDING', devices: [], submitted_at: T, started_at: null, result: null, reason: null,
};

function daemon(t: any) {
  return fakeDaemon(t, (c: Conn) => {
    const { op, args } = c.req;
    if (op === 'queue') return c.reply(JOBS);
    if (op === 'get') return args.id === 2 ? c.reply(JOB) : c.refuse('JOB_NOT_FOUND', 'job not found');
    if (op === 'cancel') return args.id === 2 ? c.reply({}) : c.refuse('JOB_NOT_FOUND', 'job not found');
    if (op === 'log') {
      c.send({ v: 1, ok: true, event: 'log', offset: 0 }, Buffer.from([0x68, 0x69, 0x0a, 0xff]));
      c.send({ v: 1, ok: true, event: 'end', job: null, offset: 4 });
      c.socket.end();
      return;
    }
    c.refuse('UNKNOWN_OP', `unknown op ${op}`);
  });
}

t.test('table and --json use the same selection', async (t) => {
  const d = await daemon(t);
  process.env.TZ = 'Asia/Shanghai';
  const r = await withHome(d.home, () => capture(() => main('xqueue', [])));
  t.equal(r.value, 0);
  const lines = r.stdout.split('\n');
  t.match(lines[0], /^JOB USER  STATE   DEVICES STARTED \(UTC\+8\) WAIT +RUN +NAME$/);
  t.match(lines[1], /^3   alice RUNNING -       05-01 08:00:01  00:00:01 +\S+ j3$/);
  t.match(lines[2], /^2   alice PENDING cpu     -               \S+ +- +j2$/);
  t.equal(lines.length, 4);
  const json = await withHome(d.home, () => capture(() => main('xqueue', ['--json'])));
  t.same(JSON.parse(json.stdout).map((j: any) => j.id), [3, 2]);
  t.equal(json.stdout, JSON.stringify([JOBS[2], JOBS[1]], null, 2) + '\n', 'pretty, two-space, daemon key order');
  const all = await withHome(d.home, () => capture(() => main('xlurm', ['queue', '--all', '--json'])));
  t.same(JSON.parse(all.stdout).map((j: any) => j.id), [1, 2, 3]);
  const allTable = await withHome(d.home, () => capture(() => main('xqueue', ['-a'])));
  t.match(allTable.stdout, /^1 +alice COMPLETED - +2024-05-01 08:00:01 /m);
});

t.test('one job: detail, --json, --log (raw bytes)', async (t) => {
  const d = await daemon(t);
  process.env.TZ = 'UTC';
  let r = await withHome(d.home, () => capture(() => main('xqueue', ['2'])));
  t.match(r.stdout, /^Job 2: Pending\nName: j2\nUser: alice \(UID 1000\)\nDirectory: \/tmp\nLog: xqueue 2 --log\nDevices: -\nStarted at: -\nWait time: \S+\nRun time: -\n$/);
  r = await withHome(d.home, () => capture(() => main('xqueue', ['2', '--json'])));
  t.equal(r.stdout, JSON.stringify(JOB, null, 2) + '\n');
  r = await withHome(d.home, () => capture(() => main('xqueue', ['2', '--log'])));
  t.same(r.out, Buffer.from([0x68, 0x69, 0x0a, 0xff]));
  t.same(d.requests.at(-1), { v: 1, op: 'log', args: { id: 2, offset: 0 } });
  r = await withHome(d.home, () => capture(() => main('xqueue', ['99'])));
  t.same([r.value, r.stderr], [1, 'xlurm: job not found\n']);
});

t.test('--cancel and xcancel', async (t) => {
  const d = await daemon(t);
  let r = await withHome(d.home, () => capture(() => main('xqueue', ['--cancel', '2'])));
  t.same([r.value, r.stdout], [0, 'Cancellation requested for job 2\n']);
  r = await withHome(d.home, () => capture(() => main('xcancel', ['2'])));
  t.same([r.value, r.stdout], [0, 'Cancellation requested for job 2\n']);
  r = await withHome(d.home, () => capture(() => main('xcancel', ['7'])));
  t.same([r.value, r.stderr], [1, 'xlurm: job not found\n']);
  t.same(d.requests.filter((q) => q.op === 'cancel').map((q) => q.args), [{ id: 2 }, { id: 2 }, { id: 7 }]);
});

t.test('argument rules', async (t) => {
  const cases: Array<[string, string[], RegExp]> = [
    ['xqueue', ['--log'], /^error: the following required arguments were not provided:\n {2}<JOB_ID>\n/],
    ['xqueue', ['1', '--cancel', '2'], /^error: the argument '--cancel <ID>' cannot be used with '\[JOB_ID\]'\n/],
    ['xqueue', ['1', '2'], /^error: unexpected argument '2' found\n/],
    ['xqueue', ['abc'], /^error: invalid value 'abc' for '\[JOB_ID\]': must be a whole number of 0 or more\n/],
    ['xqueue', ['--cancel'], /^error: option --cancel needs a value\n/], // extensions 28.9
    ['xcancel', [], /^error: the following required arguments were not provided:\n {2}<JOB_ID>\n\nUsage: xcancel \[OPTIONS\] <JOB_ID>\n/],
    ['xcancel', ['-1'], /^error: invalid value '-1' for '<JOB_ID>'/],
    ['xinfo', ['x'], /^error: unexpected argument 'x' found\n\nUsage: xinfo \[OPTIONS\]\n/],
  ];
  for (const [prog, argv, re] of cases) {
    const r = await capture(() => main(prog, argv));
    t.equal(r.value, 2, `${prog} ${argv.join(' ')}`);
    t.match(r.stderr, re);
    t.match(r.stderr, /\n\nFor more information, try '--help'\.\n$/);
  }
});

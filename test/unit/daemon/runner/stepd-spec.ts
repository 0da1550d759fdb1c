// The spec xlurm-stepd reads on its stdin (runner/stepd-spec.ts): NUL-terminated fields in a
// fixed order, counts before the lists; a field holding NUL is refused.
import t from 'tap';
import { encodeStepdSpec, type StepdSpec } from '../../../../packages/daemon/src/runner/stepd-spec';

const SPEC: StepdSpec = {
  jobId: 7, resultPath: '/h/jobs/7.result', cancelPath: '/h/jobs/7.cancel', uid: 1000, gid: 100, ownerName: 'alice',
  groups: [100, 27], switchUser: true, cwd: '/home/alice', timeLimit: 60, killGrace: 5, argv: ['echo', 'a b', ''], env: ['A=1', 'B='],
};

t.test('fields in order, each NUL-terminated', async (t) => {
  const b = encodeStepdSpec(SPEC);
  t.equal(b.at(-1), 0, 'ends with a NUL');
  t.same(b.toString('utf8').split('\0').slice(0, -1), [
    'XLURM-STEPD-5', '7', '/h/jobs/7.result', '/h/jobs/7.cancel', '1000', '100', 'alice',
    '2', '100', '27', '1', '/home/alice', '60', '5', '0', '', '0', '3', 'echo', 'a b', '', '2', 'A=1', 'B=',
  ]);
});

t.test('no user switch, no groups, no time limit, empty lists', async (t) => {
  const b = encodeStepdSpec({ ...SPEC, groups: [], switchUser: false, timeLimit: 0, killGrace: 0, argv: ['true'], env: [] });
  t.same(b.toString('utf8').split('\0').slice(0, -1), [
    'XLURM-STEPD-5', '7', '/h/jobs/7.result', '/h/jobs/7.cancel', '1000', '100', 'alice', '0', '0', '/home/alice', '0', '0', '0', '', '0', '1', 'true', '0',
  ]);
});

t.test('the cgroup directories the payload joins, and the unified one\'s cgroup.kill (docs/behaviour.md §24.3)', async (t) => {
  const b = encodeStepdSpec({ ...SPEC, cgroupDirs: ['/sys/fs/cgroup/unified/x/job-7', '/sys/fs/cgroup/memory/x/job-7'], cgroupKill: '/sys/fs/cgroup/unified/x/job-7/cgroup.kill' });
  t.same(b.toString('utf8').split('\0').slice(12, 17), ['60', '5', '2', '/sys/fs/cgroup/unified/x/job-7', '/sys/fs/cgroup/memory/x/job-7']);
  t.equal(b.toString('utf8').split('\0')[17], '/sys/fs/cgroup/unified/x/job-7/cgroup.kill');
});

t.test("the size of the job's private /tmp and /dev/shm after cgroup.kill (docs/behaviour.md §28.12)", async (t) => {
  const f = encodeStepdSpec({ ...SPEC, privateTmp: 4 * 1024 ** 3 }).toString('utf8').split('\0');
  t.same(f.slice(14, 17), ['0', '', String(4 * 1024 ** 3)]);
  t.equal(encodeStepdSpec(SPEC).toString('utf8').split('\0')[16], '0', 'none: 0');
});

t.test('UTF-8 text is kept byte for byte', async (t) => {
  const b = encodeStepdSpec({ ...SPEC, argv: ['echo', 'héllo ✓'] });
  t.ok(b.includes(Buffer.from('\0héllo ✓\0', 'utf8')));
});

t.test('a NUL inside any field is refused', async (t) => {
  for (const over of [{ argv: ['a\0b'] }, { env: ['A=\0'] }, { cwd: '/x\0y' }, { ownerName: 'al\0ice' }]) {
    t.throws(() => encodeStepdSpec({ ...SPEC, ...over }), { message: 'job spec field contains a NUL byte' }, JSON.stringify(over));
  }
});

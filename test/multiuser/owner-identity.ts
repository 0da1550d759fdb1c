// docs/behaviour.md §8 as root: the owner of a job is the connecting process's
// SO_PEERCRED identity; a request that names an owner is refused outright and
// USER/LOGNAME in the environment decide nothing.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MULTIUSER_SKIP, accounts, as, rawRequestAs, rootDaemon, sharedDir, workDir } from '../helpers/multiuser';

t.test('identity comes from the kernel only', { skip: MULTIUSER_SKIP }, async (t) => {
  const { nobody } = accounts();
  const d = await rootDaemon(t);
  const cwd = workDir(t);
  const spec = { command: ['touch', path.join(cwd, 'forged-ran')], cwd, env: { PATH: '/usr/bin:/bin' }, name: 'x', count: 0 };
  const frame = (o: object) => JSON.stringify(o) + '\n';
  const before = (await d.jobs()).length;
  const root = { uid: 0, gid: 0, name: 'root' };

  const inArgs = await rawRequestAs(nobody, d.socket, frame({ v: 1, op: 'submit', args: { ...spec, owner: root } }));
  t.same(inArgs, { v: 1, ok: false, error: { code: 'INVALID_REQUEST', message: 'invalid request: unknown field `owner` in args' } });
  const outside = await rawRequestAs(nobody, d.socket, frame({ v: 1, op: 'submit', args: spec, owner: root }));
  t.same(outside, { v: 1, ok: false, error: { code: 'INVALID_REQUEST', message: 'invalid request: unknown field `owner`' } });
  const uid = await rawRequestAs(nobody, d.socket, frame({ v: 1, op: 'submit', args: { ...spec, uid: 0 } }));
  t.equal(uid.ok, false);
  t.equal(uid.error.code, 'INVALID_REQUEST');
  t.equal((await d.jobs()).length, before, 'nothing was created');
  t.same(fs.readdirSync(d.jobsDir), [], 'no per-job files');
  t.notOk(fs.existsSync(path.join(cwd, 'forged-ran')));

  // Control: the same submission without the forged field is accepted, as nobody's.
  const ok = await rawRequestAs(nobody, d.socket, frame({ v: 1, op: 'submit', args: { ...spec, env: { ...spec.env, USER: 'root', LOGNAME: 'root' } } }));
  t.equal(ok.ok, true, JSON.stringify(ok));
  t.same(ok.result.owner, { uid: 65534, gid: nobody.gid, name: 'nobody' }, 'owner from SO_PEERCRED, not USER');
  const job = await d.waitState(ok.result.id, ['COMPLETED', 'FAILED']);
  t.equal(job.state, 'COMPLETED');
  t.equal(fs.statSync(path.join(cwd, 'forged-ran')).uid, 65534, 'it ran as nobody');

  // USER/LOGNAME in the submitted environment are replaced by the owner's name.
  const dir = sharedDir(t, 0o777, 'xlmu-user');
  const id = await d.batch('echo "USER=$USER LOGNAME=$LOGNAME"', ['-g', '0'], as(nobody, { cwd: dir, env: { USER: 'root', LOGNAME: 'root' } }));
  await d.waitState(id, 'COMPLETED');
  t.equal((await d.job(id)).owner.name, 'nobody');
  t.equal((await d.run('xqueue', [String(id), '--log'], as(nobody, { cwd: dir }))).stdout, 'USER=nobody LOGNAME=nobody\n');
});

import t from 'tap';
import * as path from 'node:path';
import { DEFAULT_HOME, jobPaths, parseJobFileName, resolveHome, statePaths } from '../../../packages/protocol/src/paths';

t.test('XLURM_HOME: resolved against the working directory; the shared default otherwise', async (t) => {
  t.equal(DEFAULT_HOME, '/var/lib/xlurm');
  t.equal(resolveHome({}, '/somewhere'), DEFAULT_HOME);
  t.equal(resolveHome({ XLURM_HOME: '' }, '/somewhere'), DEFAULT_HOME, 'empty is unset');
  t.equal(resolveHome({ XLURM_HOME: '/srv/xl' }, '/somewhere'), '/srv/xl');
  t.equal(resolveHome({ XLURM_HOME: 'state/../xl' }, '/home/u'), '/home/u/xl', 'relative: from the working directory, normalised');
});

t.test('every state path derives from the home', async (t) => {
  t.same(statePaths('/h'), {
    home: '/h', socket: '/h/xlurm.sock', db: '/h/xlurm.db', daemonLock: '/h/daemon.lock', daemonLog: '/h/daemon.log', jobs: '/h/jobs',
  });
});

t.test('per-job files: their names, and back from a name to the job and kind', async (t) => {
  const p = jobPaths('/h', 42);
  t.same({ ...p, temp: p.temp(7) }, {
    log: '/h/jobs/42.log', lock: '/h/jobs/42.lock', lockNew: '/h/jobs/42.lock.new', result: '/h/jobs/42.result',
    cancel: '/h/jobs/42.cancel', limit: '/h/jobs/42.limit', spec: '/h/jobs/42.spec', snapshot: '/h/jobs/42.json', temp: '/h/jobs/42.tmp.7',
  });
  for (const [kind, file] of Object.entries({ ...p, temp: p.temp(7) })) {
    t.same(parseJobFileName(path.basename(file)), { id: 42, kind }, `${path.basename(file)}: job 42's ${kind}`);
  }
  for (const other of ['42', '42.', '.log', 'x.log', '42.log.old', '42.tmp', '42.tmp.x', '42.txt', 'daemon.log', '-1.log']) {
    t.equal(parseJobFileName(other), undefined, `${other} is not a job file`);
  }
});

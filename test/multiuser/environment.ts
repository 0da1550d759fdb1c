// docs/behaviour.md §6.3 and §9.2 as root: a submitted environment is the job's and nothing
// else's. XLURM_NVML_LIBRARY, LD_PRELOAD and PATH from a submitter reach the
// job (which runs as the submitter) but never the root daemon or the root
// supervisor: a library that marks every process loading it, and PATH shims
// that mark every process running them, leave no mark made by uid 0.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runProcess } from '../helpers/daemon';
import { fakeLibrary } from '../helpers/fixtures';
import { MULTIUSER_SKIP, accounts, as, compile, rootDaemon, sharedDir, workDir } from '../helpers/multiuser';
import { markerLibrary, rootMarks as rootMarksIn, shimBin, moreRootWork } from '../helpers/marks';

t.test('a submitter\'s XLURM_NVML_LIBRARY, LD_PRELOAD and PATH have no effect on root processes', { skip: MULTIUSER_SKIP }, async (t) => {
  const { nobody } = accounts();
  const marks = sharedDir(t, 0o777, 'xlmu-marks');
  const tools = sharedDir(t, 0o755, 'xlmu-evil');
  const evil = compile(tools, 'evil.so', markerLibrary(marks), ['-shared', '-fPIC']);
  const bin = shimBin(tools, marks);
  const rootMarks = () => rootMarksIn(marks);

  // Control: the marks work, for root too.
  const control = await runProcess(path.join(bin, 'true'), [], { env: { LD_PRELOAD: evil, PATH: '/usr/bin:/bin' } });
  t.equal(control.code, 0, control.stderr);
  t.ok(rootMarks().some((n) => n.startsWith('0-preload-')), 'control: a root process loading the library leaves a mark');
  t.ok(rootMarks().some((n) => n.startsWith('0-path-true-')), 'control: a root process running a shim leaves a mark');
  for (const n of rootMarks()) fs.rmSync(path.join(marks, n));

  // A root daemon on the fake NVML (so there is a library to hijack), re-probing after jobs.
  const fake = fakeLibrary(t, 'nvidia', ['device 0 GPU-7e57c0de-0000-4000-8000-000000000000 "Fake GPU"']);
  const d = await rootDaemon(t, { backend: 'nvidia', env: fake.env });
  const cwd = workDir(t);
  const env = { XLURM_NVML_LIBRARY: evil, LD_PRELOAD: evil, PATH: `${bin}:/usr/bin:/bin` };
  const script = 'echo "NVML=$XLURM_NVML_LIBRARY"; echo "PRELOAD=$LD_PRELOAD"; echo "PATH=$PATH"; echo "uid=$(id -u)"';
  const r = await d.run('xbatch', ['-g', '1', '--wrap', script], as(nobody, { cwd, env }));
  t.equal(r.code, 0, r.stderr);
  const jobId = Number(r.stdout.trim());
  const job = await d.waitState(jobId, ['COMPLETED', 'FAILED']);
  const log = (await d.run('xqueue', [String(jobId), '--log'])).stdout;
  t.equal(job.state, 'COMPLETED', log);
  t.equal(log, `NVML=${evil}\nPRELOAD=${evil}\nPATH=${bin}:/usr/bin:/bin\nuid=65534\n`, 'the job sees its own variables');

  // The daemon's own root work goes on: any mark it would leave is there to see.
  await moreRootWork(d, fake);

  const names = fs.readdirSync(marks);
  t.ok(names.some((n) => /^65534-path-bash-/.test(n)), 'the job ran bash through its own PATH');
  t.ok(names.some((n) => /^65534-preload-/.test(n)), 'the job\'s processes loaded its LD_PRELOAD');
  t.same(rootMarks(), [], 'no root process loaded the library or ran a shim');
  const st = await d.request('status', {}) as any;
  t.ok(st.ok, 'the daemon still answers');
  const info = JSON.parse((await d.run('xinfo', ['--json'])).stdout);
  t.equal(info[0].device.name, 'Fake GPU', 'still the administrator\'s library');
});

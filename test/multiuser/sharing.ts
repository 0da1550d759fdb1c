// Card sharing as root with the real nobody and daemon accounts (docs/behaviour.md §25.3): each slice
// job's private file is its owner's (0600 in a 0700 directory) and another user's job cannot open
// it, list the directory that holds it, or replace it; the files go when the job ends.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MULTIUSER_SKIP, accounts, as, untilExists, workDir } from '../helpers/multiuser';
import { sharingRootDaemon } from '../helpers/sharing-daemon';
import { waitFor } from '../helpers/wait';

t.test('one user\'s slice job never opens another\'s private file', { skip: MULTIUSER_SKIP }, async (t) => {
  const { nobody, daemon } = accounts();
  // The library where both accounts can load it.
  const d = await sharingRootDaemon(t, 'xlmu-share');
  const work = workDir(t);
  const go = path.join(work, 'go');
  const recA = path.join(work, 'a.rec');
  const a = await d.batch(untilExists(go), ['--share', '4G,40%'], { ...as(nobody, { cwd: work }), env: { XLURM_FAKE_PRELOAD_RECORD: recA, LD_PRELOAD: '' } });
  await d.waitState(a, 'RUNNING');
  const mine = path.join(d.home, 'share', String(a), 'vgpu.cache');
  await waitFor(async () => fs.existsSync(recA) && fs.readFileSync(recA, 'utf8').includes('\nend\n'), { what: "job a's record" });
  t.match(fs.readFileSync(recA, 'utf8'), `opened ${mine}\n`, 'the owner opens its own file');
  const st = fs.statSync(mine);
  t.same([st.uid, st.mode & 0o777], [nobody.uid, 0o600]);
  const dir = fs.statSync(path.dirname(mine));
  t.same([dir.uid, dir.mode & 0o777], [nobody.uid, 0o700]);
  const root = fs.statSync(path.join(d.home, 'share'));
  t.same([root.uid, root.mode & 0o777], [0, 0o711]);

  // daemon's slice beside it tries nobody's file through the library, and from the shell.
  const recB = path.join(work, 'b.rec');
  const out = path.join(work, 'b.out');
  const script = `cat ${mine} >/dev/null 2>&1 && echo read >> ${out} || echo refused >> ${out}; ` +
    `ls ${path.join(d.home, 'share')} >/dev/null 2>&1 && echo listed >> ${out} || echo unlisted >> ${out}; ` +
    `ln -s /etc/shadow ${path.join(path.dirname(mine), 'x')} 2>/dev/null && echo planted >> ${out} || echo unplanted >> ${out}`;
  const b = await d.batch(script, ['--share', '4G,40%'], { ...as(daemon, { cwd: work }), env: { XLURM_FAKE_PRELOAD_RECORD: recB, XLURM_FAKE_PRELOAD_PROBE: mine, LD_PRELOAD: '' } });
  const jb = await d.waitState(b, 'COMPLETED');
  t.same(jb.devices.map((x: { id: number }) => x.id), [0], 'both slices on the one card');
  const rec = fs.readFileSync(recB, 'utf8');
  t.match(rec, `denied ${mine} 13\n`, "another user's job cannot open it (EACCES)");
  t.match(rec, `opened ${path.join(d.home, 'share', String(b), 'vgpu.cache')}\n`);
  t.equal(fs.readFileSync(out, 'utf8'), 'refused\nunlisted\nunplanted\n');
  t.notOk(fs.existsSync(path.join(d.home, 'share', String(b))), "b's files removed at its end");
  fs.writeFileSync(go, '');
  await d.waitState(a, 'COMPLETED');
  t.notOk(fs.existsSync(path.dirname(mine)), "a's files removed at its end");
});

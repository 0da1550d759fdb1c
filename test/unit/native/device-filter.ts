// The cgroup v2 device program (native/src/addon/device-filter.cc, docs/behaviour.md §24.8),
// loaded and attached through bpf(2) to a cgroup this test makes in the cgroup2 hierarchy (the
// unified one on the hybrid layout, which has no controllers but takes device programs). A
// process moved into it opens one stand-in node (a mknod copy of /dev/full, 1:7) and is refused
// the denied one (a copy of /dev/zero, 1:5) with EPERM. Root only.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as native from '../../../native/ts/index';
import { findMounts } from '../../../packages/daemon/src/resources/isolation';

const built = fs.existsSync(path.resolve(__dirname, '../../../native/build/Release/xlurm_native.node'));
const v2 = findMounts().v2;
if (!built) {
  t.plan(0, 'native addon not built (npm run build:native)');
} else if (process.getuid?.() !== 0 || !v2) {
  t.plan(0, 'needs root and a cgroup2 hierarchy');
} else {
  t.test('argument checks', async (t) => {
    t.throws(() => native.deviceFilterAttach('', []), /invalid cgroup directory/);
    t.throws(() => native.deviceFilterAttach('/', [{ type: 'x' as 'c', major: 1, minor: 5 }]), /invalid device type/);
    t.throws(() => native.deviceFilterAttach('/nonexistent-cgroup', []), /ENOENT/);
  });

  t.test('the program loads on this kernel', async (t) => {
    t.equal(native.deviceFilterSupported(), '');
  });

  t.test('attached to a cgroup: its processes are denied exactly the listed nodes', async (t) => {
    const cg = fs.mkdtempSync(path.join(v2, 'xlurm-test-devfilter-'));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-nodes-'));
    t.teardown(() => {
      fs.rmSync(dir, { recursive: true, force: true });
      try { fs.rmdirSync(cg); } catch { /* a process still in it: removed with it */ }
    });
    const own = path.join(dir, 'own');
    const other = path.join(dir, 'other');
    spawnSync('mknod', [own, 'c', '1', '7']);
    spawnSync('mknod', [other, 'c', '1', '5']);
    t.equal(native.deviceFilterCount(cg), 0);
    native.deviceFilterAttach(cg, [{ type: 'c', major: 1, minor: 5 }, { type: 'b', major: 7, minor: 200 }]);
    t.equal(native.deviceFilterCount(cg), 1, 'one program attached');
    const script = `echo $$ > ${cg}/cgroup.procs || exit 9
      head -c1 ${own} >/dev/null && echo own-ok
      head -c1 ${other} >/dev/null 2>${dir}/err && echo other-ok
      exit 0`;
    const r = spawnSync('sh', ['-c', script], { encoding: 'utf8' });
    t.equal(r.status, 0, r.stderr);
    t.equal(r.stdout, 'own-ok\n', 'the allowed node opens, the denied one does not');
    t.match(fs.readFileSync(path.join(dir, 'err'), 'utf8'), /Operation not permitted/);
    // Outside the cgroup nothing changed.
    t.equal(spawnSync('head', ['-c1', other]).status, 0);
  });
}

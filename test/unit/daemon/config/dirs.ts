// config/dirs.ts through readConfigFile (start, reload and `xlurm config check` share it):
// extensions 28.1's directory rule for metrics_file's directory and shared_region_dir (itself and
// its parent), with the quoted message and the key's line.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ConfigFileError, readConfigFile } from '../../../../packages/daemon/src/config/load';

function problem(file: string): string {
  try { readConfigFile(file, true); } catch (e) {
    if (e instanceof ConfigFileError) return e.message;
    throw e;
  }
  return '';
}

const me = process.geteuid!();
const rule = (dir: string) => me === 0
  ? `${dir} must be owned by root and not writable by others`
  : `${dir} must be owned by root or the daemon's user (uid ${me}) and not writable by others`;

t.test("metrics_file's directory: refused when others may write it", async (t) => {
  const dir = t.testdir({ open: {}, closed: {} });
  fs.chmodSync(path.join(dir, 'open'), 0o777);
  fs.chmodSync(path.join(dir, 'closed'), 0o755);
  const file = path.join(dir, 'xlurm.toml');
  fs.writeFileSync(file, `[accounting]\nmetrics_file = "${path.join(dir, 'open', 'x.prom')}"\n`);
  t.equal(problem(file), `${file}:2: accounting.metrics_file: ${rule(path.join(dir, 'open'))}`);
  fs.writeFileSync(file, `[accounting]\nmetrics_file = "${path.join(dir, 'closed', 'x.prom')}"\n`);
  t.equal(problem(file), '');
  fs.writeFileSync(file, `[accounting]\nmetrics_file = ""\n`);
  t.equal(problem(file), '', 'no metrics file: nothing to check');
});

t.test('shared_region_dir: the directory itself and its parent', async (t) => {
  const dir = t.testdir({ parent: { region: {} }, wparent: {} });
  fs.chmodSync(path.join(dir, 'parent'), 0o755);
  fs.chmodSync(path.join(dir, 'wparent'), 0o1777);
  const file = path.join(dir, 'xlurm.toml');
  const region = path.join(dir, 'parent', 'region');
  const cfg = (r: string) => fs.writeFileSync(file, `[sharing]\nenabled = true\n[sharing.ascend]\nlibrary = "/opt/x.so"\nshared_region_dir = "${r}"\n`);
  fs.chmodSync(region, 0o1733);
  cfg(region);
  t.equal(problem(file), `${file}:5: sharing.ascend.shared_region_dir: ${rule(region)}`, 'the directory itself writable by others');
  fs.chmodSync(region, 0o711);
  t.equal(problem(file), '');
  cfg(path.join(dir, 'wparent', 'hami'));
  t.equal(problem(file), `${file}:5: sharing.ascend.shared_region_dir: ${rule(path.join(dir, 'wparent'))}`, 'its parent writable by others (sticky or not)');
  cfg(path.join(dir, 'parent', 'not-yet'));
  t.equal(problem(file), '', 'a region directory not made yet, in a good parent');
});

/**
 * System tools some tests need (systemd-analyze, man, zsh). A missing tool is
 * installed from Debian's packages when the test runs as root and apt works;
 * otherwise the caller skips with the reason returned here. Parallel test
 * files serialise their installs through apt's own lock (waiting for it).
 */
import { spawnSync } from 'node:child_process';

function have(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

function aptInstall(pkg: string): string | undefined {
  const lock = ['-o', 'DPkg::Lock::Timeout=300'];
  const install = () => spawnSync('apt-get', [...lock, 'install', '-y', '--no-install-recommends', pkg], {
    encoding: 'utf8', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, timeout: 300_000,
  });
  let r = install();
  if (r.status !== 0) {
    // The package lists may be missing or stale on a fresh machine.
    spawnSync('apt-get', [...lock, 'update'], { stdio: 'ignore', timeout: 300_000 });
    r = install();
  }
  return r.status === 0 ? undefined : `apt-get install ${pkg} failed: ${(r.stderr || r.error?.message || '').trim().split('\n').pop()}`;
}

const cache = new Map<string, string | false>();

/**
 * Make sure `cmd` is on PATH, installing Debian package `pkg` if it is
 * missing. Returns false when the tool is there, else why it is not.
 */
export function ensureTool(cmd: string, pkg: string): string | false {
  const known = cache.get(cmd);
  if (known !== undefined) return known;
  let why: string | false = false;
  if (!have(cmd)) {
    if (process.getuid?.() !== 0) why = `${cmd} is missing and only root may install ${pkg}`;
    else if (!have('apt-get')) why = `${cmd} is missing and there is no apt-get to install ${pkg}`;
    else why = aptInstall(pkg) ?? (have(cmd) ? false : `${pkg} installed but ${cmd} is still missing`);
  }
  cache.set(cmd, why);
  return why;
}

/**
 * Marks left by processes that a hostile environment could take over
 * (test/multiuser/environment.ts, test/security/environment.ts): a library
 * whose constructor leaves `<dir>/<euid>-preload-<comm>-<pid>`, PATH shims
 * that leave `<dir>/<euid>-path-<name>-<pid>`, and a NODE_OPTIONS module
 * that leaves `<dir>/<euid>-node-<pid>`. A mark whose name starts with `0-`
 * was made by root.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Daemon } from './daemon';
import { waitFor } from './wait';

/** A library whose constructor leaves `<dir>/<euid>-preload-<comm>-<pid>`. */
export const markerLibrary = (dir: string) => `
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
__attribute__((constructor)) static void mark(void) {
  char comm[64] = "unknown", file[512];
  int fd = open("/proc/self/comm", O_RDONLY);
  if (fd >= 0) { ssize_t n = read(fd, comm, sizeof comm - 1); if (n > 0) comm[n - 1] = 0; close(fd); }
  snprintf(file, sizeof file, "%s/%d-preload-%s-%d", ${JSON.stringify(dir)}, (int)geteuid(), comm, (int)getpid());
  fd = open(file, O_CREAT | O_WRONLY, 0644);
  if (fd >= 0) close(fd);
}
/* Looks like an NVML to anyone who dlopens it. */
int nvmlInit_v2(void) { return 0; }
`;

/** Commands a root process might look up on PATH; each shim marks its runner, then runs the real one. */
export const SHIMMED = ['sh', 'bash', 'id', 'env', 'node', 'cat', 'true', 'sleep', 'nvidia-smi', 'xlurm-stepd', 'getent', 'ldconfig'];

export function which(name: string): string | undefined {
  try { return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8', env: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' } }).trim() || undefined; } catch { return undefined; }
}


/** Shims for SHIMMED (and `extra`) in `<tools>/bin`, each marking its runner then running the real command. */
export function shimBin(tools: string, marks: string, extra: string[] = []): string {
  const bin = path.join(tools, 'bin');
  fs.mkdirSync(bin, { mode: 0o755 });
  const id = which('id')!;
  for (const name of [...SHIMMED, ...extra]) {
    const real = which(name);
    fs.writeFileSync(path.join(bin, name),
      `#!/bin/sh\n: > "${marks}/$(${id} -u)-path-${name}-$$"\n${real ? `exec ${real} "$@"` : 'exit 0'}\n`, { mode: 0o755 });
  }
  return bin;
}

/** A module for `NODE_OPTIONS=--require <it>` that marks every node process loading it. */
export function nodeMarker(tools: string, marks: string): string {
  const file = path.join(tools, 'mark.js');
  fs.writeFileSync(file, `require('fs').writeFileSync(${JSON.stringify(marks)} + '/' + process.geteuid() + '-node-' + process.pid, '');\n`, { mode: 0o644 });
  return file;
}

/** Marks made by root. */
export function rootMarks(marks: string): string[] {
  return fs.readdirSync(marks).filter((n) => n.startsWith('0-'));
}

/**
 * Let the daemon do more of its own root work after a hostile submission, so that any mark it
 * would leave is there to see: two more full device polls (the fake counts its process queries),
 * then a root job started and ended through the same daemon.
 */
export async function moreRootWork(d: Daemon, fake: { calls(): string[] }): Promise<void> {
  const polls = () => fake.calls().filter((c) => c.startsWith('nvmlDeviceGetComputeRunningProcesses')).length;
  const seen = polls();
  await waitFor(() => polls() >= seen + 2, { timeout: 30000, what: 'two more device polls' });
  const again = await d.batch('true', ['-g', '1']);
  await d.waitState(again, 'COMPLETED');
}

/**
 * Fake vendor libraries (spec 9.6): C sources in test/fixtures/<dir>/ compiled on
 * demand with `cc -shared -fPIC` into test/fixtures/build/<dir>/<soname> (gitignored).
 * Parallel test files may build at once: each compiles to its own temporary
 * file and renames it into place (atomic), and a build is reused while it is
 * newer than every source.
 *
 * Adding a vendor: put its fake under test/fixtures/fake-<x>/ and add one line
 * to FAKES.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ROOT } from './env';

export interface FakeSpec {
  /** Directory under test/fixtures/ holding the C sources. */
  dir: string;
  /** File name of the built library (the real soname). */
  soname: string;
  /** Variable naming the state file the fake re-reads on every call. */
  stateEnv: string;
  /** The daemon's library override variable (spec 9.2). */
  libraryEnv: string;
  /** Variable naming a file the fake appends each call's name to. */
  logEnv: string;
  /** More source directories under test/fixtures/ (compiled in, and on the include path). */
  with?: readonly string[];
  /** Extra compiler flags (a variant of the same sources, e.g. `-DFAKE_DCMI_NO_V2`). */
  cflags?: readonly string[];
  /** Build directory name under test/fixtures/build/ (default `dir`; distinct per variant). */
  build?: string;
}

const DCMI = { dir: 'fake-dcmi', with: ['fake-common'], soname: 'libdcmi.so', stateEnv: 'XLURM_FAKE_DCMI_STATE', libraryEnv: 'XLURM_DCMI_LIBRARY', logEnv: 'XLURM_FAKE_DCMI_LOG' } as const;

export const FAKES = {
  nvidia: { dir: 'fake-nvml', soname: 'libnvidia-ml.so.1', stateEnv: 'XLURM_FAKE_NVML_STATE', libraryEnv: 'XLURM_NVML_LIBRARY', logEnv: 'XLURM_FAKE_NVML_LOG' },
  ascend: DCMI,
  mthreads: { dir: 'fake-mtml', with: ['fake-common'], soname: 'libmtml.so', stateEnv: 'XLURM_FAKE_MTML_STATE', libraryEnv: 'XLURM_MTML_LIBRARY', logEnv: 'XLURM_FAKE_MTML_LOG' },
  metax: { dir: 'fake-mxsml', with: ['fake-common'], soname: 'libmxsml.so', stateEnv: 'XLURM_FAKE_MXSML_STATE', libraryEnv: 'XLURM_MXSML_LIBRARY', logEnv: 'XLURM_FAKE_MXSML_LOG' },
  /** The same fake without the dcmiv2_* symbols (an older Ascend driver). */
  'ascend-classic': { ...DCMI, cflags: ['-DFAKE_DCMI_NO_V2'], build: 'fake-dcmi-classic' },
} satisfies Record<string, FakeSpec>;

export type FakeKind = keyof typeof FAKES;

export const FIXTURES = path.join(ROOT, 'test', 'fixtures');

/** Build (or reuse) a fake library; returns its absolute path. */
export function buildFake(kind: FakeKind): string {
  const spec: FakeSpec = FAKES[kind];
  const dirs = [spec.dir, ...(spec.with ?? [])].map((d) => path.join(FIXTURES, d));
  const files = dirs.flatMap((d) => fs.readdirSync(d).map((f) => path.join(d, f)));
  const sources = files.filter((f) => f.endsWith('.c'));
  const outDir = path.join(FIXTURES, 'build', spec.build ?? spec.dir);
  const out = path.join(outDir, spec.soname);
  const newest = Math.max(...files.filter((f) => /\.[ch]$/.test(f)).map((s) => fs.statSync(s).mtimeMs));
  try {
    if (fs.statSync(out).mtimeMs >= newest) return out;
  } catch { /* not built yet */ }
  fs.mkdirSync(outDir, { recursive: true });
  const tmp = `${out}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    const includes = dirs.slice(1).map((d) => `-I${d}`);
    execFileSync('cc', ['-shared', '-fPIC', '-O2', '-Wall', ...(spec.cflags ?? []), ...includes, '-o', tmp, ...sources, '-lpthread'], { stdio: 'pipe' });
    fs.renameSync(tmp, out);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    const err = e as { stderr?: Buffer; message: string };
    throw new Error(`cannot build ${spec.soname}: ${err.stderr?.toString() || err.message}`);
  }
  return out;
}

interface Tap { teardown(fn: () => unknown): void }

/** A built fake plus its own state and call-log files. */
export class FakeLibrary {
  readonly statePath: string;
  readonly logPath: string;

  constructor(readonly spec: FakeSpec, readonly library: string, readonly dir: string) {
    this.statePath = path.join(dir, 'state');
    this.logPath = path.join(dir, 'calls.log');
  }

  /** Variables for the daemon: the library override and the fake's state and log files. */
  get env(): Record<string, string> {
    return { [this.spec.libraryEnv]: this.library, [this.spec.stateEnv]: this.statePath, [this.spec.logEnv]: this.logPath };
  }

  /** Replace the state atomically (the fake never sees a half-written file). */
  write(lines: string | readonly string[]): void {
    const text = typeof lines === 'string' ? lines : lines.join('\n') + '\n';
    const tmp = `${this.statePath}.tmp`;
    fs.writeFileSync(tmp, text);
    fs.renameSync(tmp, this.statePath);
  }

  /** The calls made so far, one name per entry (`CONCURRENT <name>` for overlapping calls). */
  calls(): string[] {
    try { return fs.readFileSync(this.logPath, 'utf8').split('\n').filter(Boolean); } catch { return []; }
  }
}

/** Build the fake for `kind` and give it a fresh state file (removed at teardown). */
export function fakeLibrary(t: Tap, kind: FakeKind, state: string | readonly string[] = []): FakeLibrary {
  const lib = buildFake(kind);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `xl-${FAKES[kind].dir}-`));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const fake = new FakeLibrary(FAKES[kind], lib, dir);
  fake.write(state);
  return fake;
}

/**
 * Fake vendor libraries (docs/behaviour.md §9.6): C sources in test/fixtures/<dir>/ compiled on
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
import type { Scope as Tap } from './tap';

export interface FakeSpec {
  /** Directory under test/fixtures/ holding the C sources. */
  dir: string;
  /** File name of the built library (the real soname). */
  soname: string;
  /** Variable naming the state file the fake re-reads on every call. */
  stateEnv: string;
  /** The daemon's library override variable (docs/behaviour.md §9.2). */
  libraryEnv: string;
  /** Variable naming a file the fake appends each call's name to. */
  logEnv: string;
  /** More source directories under test/fixtures/ (compiled in, and on the include path). */
  with?: readonly string[];
  /** Extra compiler flags (a variant of the same sources, e.g. `-DFAKE_DCMI_NO_V2`). */
  cflags?: readonly string[];
  /** Build directory name under test/fixtures/build/ (default `dir`; distinct per variant). */
  build?: string;
  /**
   * Libraries the fake is linked against (its DT_NEEDED), each built first from
   * test/fixtures/<dir>/*.c into the fake's build directory under `soname`. No
   * run path is recorded: the code under test must make them loadable
   * (HGML's libuki.so).
   */
  links?: readonly { dir: string; soname: string }[];
  /** More daemon variables that come with the fake (e.g. the HCU health tool). */
  env?: Readonly<Record<string, string>>;
  /**
   * Executables under test/fixtures/ copied into the build directory (so what a root daemon runs
   * belongs to whoever runs the tests, not to the checkout's owner: the HCU health tool).
   */
  copies?: readonly string[];
}

const DCMI = { dir: 'fake-dcmi', with: ['fake-common'], soname: 'libdcmi.so', stateEnv: 'XLURM_FAKE_DCMI_STATE', libraryEnv: 'XLURM_DCMI_LIBRARY', logEnv: 'XLURM_FAKE_DCMI_LOG' } as const;

const HGML = { dir: 'fake-hgml', with: ['fake-common'], links: [{ dir: 'fake-hgml/uki', soname: 'libuki.so' }], soname: 'libhgml.so', stateEnv: 'XLURM_FAKE_HGML_STATE', libraryEnv: 'XLURM_HGML_LIBRARY', logEnv: 'XLURM_FAKE_HGML_LOG' } as const;
/** The fake `hy-smi` as the daemon runs it: test/fixtures/fake-hy-smi/hy-smi (see its header), copied by buildFake('hcu'). */
export const FAKE_HY_SMI = path.join(ROOT, 'test', 'fixtures', 'build', 'fake-rocm-smi', 'hy-smi');

export const FAKES = {
  nvidia: { dir: 'fake-nvml', with: ['fake-common'], soname: 'libnvidia-ml.so.1', stateEnv: 'XLURM_FAKE_NVML_STATE', libraryEnv: 'XLURM_NVML_LIBRARY', logEnv: 'XLURM_FAKE_NVML_LOG' },
  ascend: DCMI,
  mthreads: { dir: 'fake-mtml', with: ['fake-common'], soname: 'libmtml.so', stateEnv: 'XLURM_FAKE_MTML_STATE', libraryEnv: 'XLURM_MTML_LIBRARY', logEnv: 'XLURM_FAKE_MTML_LOG' },
  metax: { dir: 'fake-mxsml', with: ['fake-common'], soname: 'libmxsml.so', stateEnv: 'XLURM_FAKE_MXSML_STATE', libraryEnv: 'XLURM_MXSML_LIBRARY', logEnv: 'XLURM_FAKE_MXSML_LOG' },
  ppu: HGML,
  /** HGML without hgmlInit_v2 and hgmlDeviceGetName (init falls back to hgmlInitWithFlags). */
  'ppu-minimal': { ...HGML, cflags: ['-DFAKE_HGML_MINIMAL'], build: 'fake-hgml-minimal' },
  hcu: { dir: 'fake-rocm-smi', with: ['fake-common'], soname: 'librocm_smi64.so', stateEnv: 'XLURM_FAKE_ROCM_SMI_STATE', libraryEnv: 'XLURM_HCU_SMI_LIBRARY', logEnv: 'XLURM_FAKE_ROCM_SMI_LOG', env: { XLURM_HCU_HEALTH_TOOL: FAKE_HY_SMI }, copies: ['fake-hy-smi/hy-smi'] },
  /** The same fake without the dcmiv2_* symbols (an older Ascend driver). */
  'ascend-classic': { ...DCMI, cflags: ['-DFAKE_DCMI_NO_V2'], build: 'fake-dcmi-classic' },
} satisfies Record<string, FakeSpec>;

export type FakeKind = keyof typeof FAKES;

export const FIXTURES = path.join(ROOT, 'test', 'fixtures');

/** Build (or reuse) a fake library; returns its absolute path. */
export function buildFake(kind: FakeKind): string {
  const spec: FakeSpec = FAKES[kind];
  const outDir = path.join(FIXTURES, 'build', spec.build ?? spec.dir);
  const linked = (spec.links ?? []).map((l) => compile([l.dir], path.join(outDir, l.soname), [`-Wl,-soname,${l.soname}`]));
  const linkArgs = (spec.links ?? []).flatMap((l) => [`-L${outDir}`, `-l:${l.soname}`]);
  for (const c of spec.copies ?? []) {
    const tmp = path.join(outDir, `.${path.basename(c)}.${process.pid}.${Math.random().toString(36).slice(2)}`);
    fs.mkdirSync(outDir, { recursive: true });
    fs.copyFileSync(path.join(FIXTURES, c), tmp);
    fs.chmodSync(tmp, 0o755);
    fs.renameSync(tmp, path.join(outDir, path.basename(c)));
  }
  return compile([spec.dir, ...(spec.with ?? [])], path.join(outDir, spec.soname), [...(spec.cflags ?? []), ...linkArgs], linked);
}

/**
 * The fake sharing library (test/fixtures/fake-preload, docs/behaviour.md §25.3): a job whose
 * LD_PRELOAD names it appends what it saw to $XLURM_FAKE_PRELOAD_RECORD. Returns its path.
 */
export function buildFakePreload(): string {
  return compile(['fake-preload'], path.join(FIXTURES, 'build', 'fake-preload', 'libfake-share.so'), []);
}

/**
 * Compile the .c files of `dirs` (under test/fixtures/; the first is the
 * fake's own, the others are also on the include path) into the shared object
 * `out`, unless it is newer than every source and every file of `after`.
 */
function compile(dirs: readonly string[], out: string, flags: readonly string[], after: readonly string[] = []): string {
  const abs = dirs.map((d) => path.join(FIXTURES, d));
  const files = abs.flatMap((d) => fs.readdirSync(d).map((f) => path.join(d, f)));
  const sources = files.filter((f) => f.endsWith('.c'));
  const newest = Math.max(...[...files.filter((f) => /\.[ch]$/.test(f)), ...after].map((s) => fs.statSync(s).mtimeMs));
  try {
    if (fs.statSync(out).mtimeMs >= newest) return out;
  } catch { /* not built yet */ }
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const tmp = `${out}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    const includes = abs.slice(1).map((d) => `-I${d}`);
    execFileSync('cc', ['-shared', '-fPIC', '-O2', '-Wall', ...includes, '-o', tmp, ...sources, ...flags, '-lpthread'], { stdio: 'pipe' });
    fs.renameSync(tmp, out);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    const err = e as { stderr?: Buffer; message: string };
    throw new Error(`cannot build ${path.basename(out)}: ${err.stderr?.toString() || err.message}`);
  }
  return out;
}


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
    return { ...this.spec.env, [this.spec.libraryEnv]: this.library, [this.spec.stateEnv]: this.statePath, [this.spec.logEnv]: this.logPath };
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

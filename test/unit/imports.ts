// The TypeScript import graph of the sources (packages/*/src and native/ts), read by madge: no
// module may import itself back through others, and the layers hold: the daemon and the CLI
// never import each other (docs/architecture.md), protocol and the native facade import neither.
// Package names (`@xlurm/protocol`, …) are resolved to the sources, as for the test type check,
// so a cycle through a package boundary is seen too.
import t from 'tap';
import * as path from 'node:path';
import { ROOT } from '../helpers/env';

// madge has no type declarations: only the part used here.
interface MadgeResult {
  obj(): Record<string, string[]>;
  circular(): string[][];
  warnings(): { skipped: string[] };
}
const madge = require('madge') as (paths: string[], config: object) => Promise<MadgeResult>;

const SOURCES = ['packages/protocol/src', 'packages/daemon/src', 'packages/cli/src', 'native/ts'];
const tsConfig = {
  compilerOptions: {
    module: 'node16',
    moduleResolution: 'node16',
    baseUrl: ROOT,
    paths: {
      '@xlurm/protocol': ['packages/protocol/src/index.ts'],
      '@xlurm/protocol/dist/*': ['packages/protocol/src/*'],
      '@xlurm/native': ['native/ts/index.ts'],
      '@xlurm/daemon': ['packages/daemon/src/main.ts'],
      '@xlurm/daemon/dist/*': ['packages/daemon/src/*'],
      '@xlurm/cli': ['packages/cli/src/index.ts'],
      '@xlurm/cli/dist/*': ['packages/cli/src/*'],
    },
  },
};

const layer = (file: string): string => {
  if (file.startsWith('native/')) return 'native';
  return file.split('/')[1]!; // packages/<name>/src/…
};

t.test('the import graph of the sources', async (t) => {
  const graph = await madge(SOURCES.map((p) => path.join(ROOT, p)), { baseDir: ROOT, fileExtensions: ['ts'], tsConfig });
  const deps = graph.obj();
  const files = Object.keys(deps);

  // The graph is really read: every source directory has modules, and package names lead to sources.
  for (const dir of SOURCES) t.ok(files.some((f) => f.startsWith(`${dir}/`)), `modules under ${dir}`);
  t.same(files.filter((f) => !SOURCES.some((dir) => f.startsWith(`${dir}/`))), [], 'no module outside the sources (no built .d.ts)');
  t.ok((deps['packages/cli/src/client.ts'] ?? []).includes('packages/protocol/src/index.ts'), '@xlurm/protocol resolves to its source');
  t.same(graph.warnings().skipped, [], 'every import resolved');

  const cycles = graph.circular();
  t.same(cycles, [], cycles.length ? `import cycles:\n${cycles.map((c) => `  ${[...c, c[0]].join(' -> ')}`).join('\n')}` : 'no import cycle');

  // Which layer may import which: the daemon and the CLI share only protocol and the native facade.
  const allowed: Record<string, string[]> = {
    native: ['native'],
    protocol: ['protocol'],
    daemon: ['daemon', 'protocol', 'native'],
    cli: ['cli', 'protocol', 'native'],
  };
  const crossings: string[] = [];
  for (const [from, tos] of Object.entries(deps)) {
    for (const to of tos) if (!allowed[layer(from)]!.includes(layer(to))) crossings.push(`${from} -> ${to}`);
  }
  t.same(crossings, [], crossings.length ? `imports across the layers:\n  ${crossings.join('\n  ')}` : 'the daemon and the CLI never import each other');
});

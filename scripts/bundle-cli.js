#!/usr/bin/env node
// Bundles the command-line client into one file, packages/cli/bundle/xlurm.js,
// and writes the V8 code cache for it (xlurm.js.cache) that packages/cli/launch.js
// compiles it with. Every program (packages/cli/bin/*) starts from these two files:
// loading ~30 modules cost more than Node's own start-up (docs/performance.md,
// Client start-up).
//
//   node scripts/bundle-cli.js           rebuild only when an input changed
//   node scripts/bundle-cli.js --force   always rebuild
//
// The bundle is made from the TypeScript sources (packages/cli/src and
// packages/protocol/src), so it never lags behind a `tsc -b` that was not
// followed by this script; `npm test` runs it first (scripts/build-if-needed.js).
// Left out of it, loaded only when needed at run time: the native addon
// (@xlurm/native), the daemon (@xlurm/daemon, for `xlurm daemon|clean|config`)
// and yargs (for --help).
// The MCP SDK, zod and d3 stay out too: only `xlurm mcp` and `xlurm report` load them.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const cli = path.join(root, 'packages', 'cli');
const outDir = path.join(cli, 'bundle');
const outFile = path.join(outDir, 'xlurm.js');
const cacheFile = `${outFile}.cache`;
// What the last build read, to tell whether it is stale.
const stampFile = path.join(outDir, 'inputs.json');
const launcher = path.join(cli, 'launch.js');
// packages/cli/launch.js runs dist/ instead of a bundle older than this (see there).
const tscBuildInfo = path.join(cli, 'tsconfig.tsbuildinfo');

function upToDate() {
  let stamp;
  try {
    stamp = JSON.parse(fs.readFileSync(stampFile, 'utf8'));
  } catch {
    return false;
  }
  if (stamp.node !== process.version || stamp.esbuild !== require('esbuild/package.json').version) return false;
  let built;
  try {
    built = Math.min(fs.statSync(outFile).mtimeMs, fs.statSync(cacheFile).mtimeMs);
  } catch {
    return false;
  }
  try {
    if (fs.statSync(tscBuildInfo).mtimeMs > built) return false;
  } catch { /* never compiled by tsc: nothing to be older than */ }
  for (const f of [...stamp.files, launcher, __filename]) {
    try {
      if (fs.statSync(path.resolve(root, f)).mtimeMs > built) return false;
    } catch {
      return false; // an input is gone: rebuild to find out what the sources need now
    }
  }
  return true;
}

async function bundle() {
  const esbuild = require('esbuild');
  fs.mkdirSync(outDir, { recursive: true });
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: [path.join(cli, 'src', 'main.ts')],
    outfile: outFile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    // The protocol package from its sources too (its package.json points at dist/).
    alias: { '@xlurm/protocol': path.join(root, 'packages', 'protocol', 'src', 'index.ts') },
    external: ['@xlurm/native', '@xlurm/daemon', 'yargs', 'yargs/*',
      // Loaded only by `xlurm mcp` and `xlurm report`, from node_modules: never part of every command's start.
      '@modelcontextprotocol/sdk', '@modelcontextprotocol/sdk/*', 'zod', 'zod/*', 'd3-*'],
    // Less to read and parse; names are kept, so stack traces stay readable.
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: 'eof',
    metafile: true,
    logLevel: 'warning',
    write: false,
  });
  // `import * as fs from 'node:fs'` becomes __toESM(require("node:fs")), which copies every
  // export of the module into a new object with a getter each, once per importing module:
  // 0.7 ms of every start-up here. Our sources use such namespaces only for their members
  // (never a default export), so the module itself serves.
  let text = result.outputFiles[0].text.replace(/__toESM\(require\("(node:[a-z_/]+)"\)\)/g, 'require("$1")');
  if (/__toESM\(require\("node:/.test(text)) throw new Error('a node: import is still wrapped in __toESM');
  // The addon's facade by its path relative to the bundle (the same in this tree and in an
  // installed release, install.sh): finding it as a package under node_modules took 0.5 ms.
  const nativeEntry = path.relative(outDir, require.resolve('@xlurm/native', { paths: [cli] }));
  text = text.replaceAll('require("@xlurm/native")', `require(${JSON.stringify(nativeEntry.startsWith(".") ? nativeEntry : `./${nativeEntry}`)})`);
  // Renamed into place: a program starting meanwhile reads the old file or the new one, whole.
  fs.writeFileSync(`${outFile}.tmp`, text);
  fs.renameSync(`${outFile}.tmp`, outFile);
  const files = Object.keys(result.metafile.inputs).map((f) => path.relative(root, path.resolve(root, f)));
  return files;
}

// Compiled in a fresh process without flags (V8 rejects a cache made under other flags), after
// running the usual commands as far as they go without a daemon, so that the functions they call
// are compiled and in the cache, not only the top level.
const CACHE_MAKER = `
const { load } = require(${JSON.stringify(launcher)});
const { exports: cli, script } = load(undefined);
const runs = [['xqueue', []], ['xqueue', ['--json']], ['xqueue', ['1']], ['xinfo', []], ['xcancel', ['1']],
  ['xbatch', ['-g', '0', '--wrap', 'true']], ['xrun', ['-g', '0', 'true']], ['xlurm', ['status']]];
(async () => {
  for (const [program, args] of runs) await cli.main(program, args);
  require('node:fs').writeFileSync(process.argv[1], script.createCachedData());
  process.exitCode = 0;
})();
`;

function makeCache() {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'xlurm-cache-'));
  try {
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, XLURM_HOME: path.join(home, 'none') };
    const tmp = `${cacheFile}.tmp`;
    const r = spawnSync(process.execPath, ['-e', CACHE_MAKER, tmp], { env, cwd: home, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
    if (r.status !== 0 || !fs.existsSync(tmp)) {
      throw new Error(`making the code cache failed (status ${r.status}): ${r.stderr}`);
    }
    fs.chmodSync(tmp, 0o644); // every user's commands read it (made under the client's umask 077)
    fs.renameSync(tmp, cacheFile);
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

async function main() {
  const force = process.argv.includes('--force');
  if (!force && upToDate()) return;
  const files = await bundle();
  makeCache();
  fs.writeFileSync(stampFile, JSON.stringify({ node: process.version, esbuild: require('esbuild/package.json').version, files }, null, 1) + '\n');
}

main().catch((e) => {
  process.stderr.write(`bundle-cli: ${e.stack ?? e}\n`);
  process.exitCode = 1;
});

'use strict';
/**
 * How every program starts: the whole client is one file, bundle/xlurm.js
 * (built by scripts/bundle-cli.js from the TypeScript sources), compiled with
 * the V8 code cache beside it (bundle/xlurm.js.cache). One file instead of ~30
 * modules saves their lookup, reading and compiling; the cache saves most of
 * the rest of the compiling (docs/performance.md, Client start-up).
 *
 * A cache made by another Node (or with other V8 flags) is rejected by V8 and
 * the bundle is compiled as usual: it only costs time, never correctness.
 *
 * In a development tree `tsc -b` may have compiled newer sources than the
 * bundle holds (its build info is then newer than the bundle); the programs
 * then run tsc's output, dist/, as they do when there is no bundle at all.
 */
const fs = require('node:fs');
const path = require('node:path');

const BUNDLE = path.join(__dirname, 'bundle', 'xlurm.js');
const CACHE = `${BUNDLE}.cache`;
const TSC_BUILD_INFO = path.join(__dirname, 'tsconfig.tsbuildinfo');

/** Is the bundle there and no older than what tsc last compiled? */
function bundleCurrent() {
  let built;
  try {
    built = fs.statSync(BUNDLE).mtimeMs;
  } catch {
    return false;
  }
  try {
    return fs.statSync(TSC_BUILD_INFO).mtimeMs <= built;
  } catch {
    return true; // an installed release: no TypeScript build here
  }
}

/** Compile and run the bundle as a CommonJS module; returns its exports and the compiled script. */
function load(cachedData) {
  const { Script } = require('node:vm');
  const Module = require('node:module');
  const source = fs.readFileSync(BUNDLE, 'utf8');
  const script = new Script(Module.wrap(source), { filename: BUNDLE, cachedData });
  const module = { exports: {} };
  script.runInThisContext().call(module.exports, module.exports, Module.createRequire(BUNDLE), module, BUNDLE, path.dirname(BUNDLE));
  return { exports: module.exports, script };
}

/** Run `program` with this process's arguments. */
function launch(program) {
  process.umask(0o077);
  let cli;
  if (bundleCurrent()) {
    let cachedData;
    try { cachedData = fs.readFileSync(CACHE); } catch { /* none: compile without */ }
    cli = load(cachedData).exports;
  } else {
    cli = require('./dist/main.js');
  }
  cli.main(program, process.argv.slice(2)).then((code) => { process.exitCode = code; });
}

module.exports = { launch, load, BUNDLE, CACHE };

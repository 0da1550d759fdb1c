#!/usr/bin/env node
// `npm test` builds first when needed: the native addon and supervisor when
// any native source is newer than the built files, then `tsc -b` (incremental),
// then the CLI bundle when one of its sources changed (scripts/bundle-cli.js).
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const native = path.join(root, 'native');
const outputs = ['xlurm_native.node', 'xlurm-stepd'].map((f) => path.join(native, 'build', 'Release', f));

function newest(dir) {
  let t = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : fs.statSync(p).mtimeMs);
  }
  return t;
}

const srcTime = Math.max(newest(path.join(native, 'src')), fs.statSync(path.join(native, 'CMakeLists.txt')).mtimeMs);
const stale = outputs.some((o) => !fs.existsSync(o) || fs.statSync(o).mtimeMs < srcTime);
const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, stdio: 'inherit' });
if (stale) run('npm', ['run', 'build', '--workspace', 'native'], root);
run(process.execPath, [require.resolve('typescript/bin/tsc'), '-b'], root);
run(process.execPath, [path.join(root, 'scripts', 'bundle-cli.js')], root);

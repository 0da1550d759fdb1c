// `xlurm report`'s drawing library (d3) and `xlurm mcp`'s SDK (with zod) load only in those two
// commands (docs/architecture.md, client start-up): not when the command table is read for
// --help, not in another command, and not in the bundle every command starts from.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';

const ROOT = path.resolve(__dirname, '../../../..');
const DIST = path.join(ROOT, 'packages', 'cli', 'dist');
const HEAVY = /[\\/]node_modules[\\/](@modelcontextprotocol|zod|d3-[a-z-]+)[\\/]|[\\/]dist[\\/](mcp|report[\\/]render|report[\\/]stats)\.js$/;

/** The modules a fresh process has loaded after `code` (run against the compiled CLI). */
function loadedAfter(code: string): string[] {
  const r = spawnSync(process.execPath, ['-e', `(async () => { ${code}; process.stdout.write('\\n@@MODULES@@' + JSON.stringify(Object.keys(require.cache))); })()`], {
    cwd: ROOT, encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', XLURM_HOME: path.join(ROOT, '.no-such-home'), XLURM_CONFIG: '/dev/null' },
  });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout.slice(r.stdout.lastIndexOf('@@MODULES@@') + 11)) as string[];
}

t.test('every command module loaded (help), and ordinary commands run: no d3, MCP SDK or zod', async (t) => {
  const mods = loadedAfter(`const c = require(${JSON.stringify(path.join(DIST, 'commands'))}); c.allCommands();
    const { main } = require(${JSON.stringify(path.join(DIST, 'main'))});
    for (const [p, a] of [['xlurm', ['--help']], ['xqueue', []], ['xinfo', []], ['xlurm', ['report', '--help']], ['xlurm', ['mcp', '--help']]]) await main(p, a)`);
  t.ok(mods.some((m) => m.endsWith(path.join('dist', 'commands', 'report.js'))), 'the report command module itself was loaded');
  t.same(mods.filter((m) => HEAVY.test(m)), [], 'none of the heavy modules');
});

t.test('the commands themselves do load them', async (t) => {
  const mods = loadedAfter(`require(${JSON.stringify(path.join(DIST, 'mcp'))})`);
  t.ok(mods.some((m) => /@modelcontextprotocol/.test(m)), 'the MCP server loads the SDK');
});

const bundle = path.join(ROOT, 'packages', 'cli', 'bundle', 'xlurm.js');
t.test('the bundle holds neither the libraries nor the drawing and server code', { skip: fs.existsSync(bundle) ? false : 'no bundle built (node scripts/bundle-cli.js)' }, async (t) => {
  const text = fs.readFileSync(bundle, 'utf8');
  for (const marker of ['McpServer', 'StdioServerTransport', 'scaleUtc', 'curveStepAfter', 'function renderReport', 'function deviceTimeline']) {
    t.notOk(text.includes(marker), `no ${marker}`);
  }
});

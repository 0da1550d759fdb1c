/**
 * `xlurm mcp` driven by the MCP SDK's own client over a real stdio pipe: the client spawns the
 * server as a process (optionally as another account, through setpriv) against a test daemon.
 */
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Daemon } from './daemon';
import type { Account } from './multiuser';
import type { Scope as Tap } from './tap';

export interface ToolReply { isError: boolean; text: string; data: any }

export interface Mcp {
  client: Client;
  /** Call a tool; the text of its first content item, its structured content and whether it is an error. */
  call(name: string, args?: Record<string, unknown>): Promise<ToolReply>;
  /** What the server wrote on stderr. */
  stderr(): string;
}

/** Start `xlurm mcp` for `d` (as `as` when given) and connect the SDK's client to it; closed at teardown. */
export async function startMcp(t: Tap, d: Daemon, opts: { as?: Account; cwd?: string } = {}): Promise<Mcp> {
  const node = ['-u', 'NODE_OPTIONS', process.execPath, path.join(d.cliBin, 'xlurm'), 'mcp'];
  const drop = opts.as ? ['setpriv', `--reuid=${opts.as.uid}`, `--regid=${opts.as.gid}`, '--clear-groups', '--', '/usr/bin/env'] : [];
  const transport = new StdioClientTransport({
    command: opts.as ? '/usr/bin/setpriv' : '/usr/bin/env',
    args: opts.as ? [...drop.slice(1), ...node] : node,
    env: { ...d.env, ...(opts.as ? { HOME: '/' } : {}) },
    cwd: opts.cwd ?? d.defaultCwd(),
    stderr: 'pipe',
  });
  let err = '';
  transport.stderr?.on('data', (b: Buffer) => { err += b.toString(); });
  const client = new Client({ name: 'xlurm-test', version: '1.0.0' });
  await client.connect(transport);
  t.teardown(() => client.close());
  return {
    client,
    stderr: () => err,
    async call(name, args = {}) {
      const r = await client.callTool({ name, arguments: args });
      const content = r.content as Array<{ type: string; text?: string }>;
      return { isError: r.isError === true, text: content[0]?.text ?? '', data: r.structuredContent };
    },
  };
}

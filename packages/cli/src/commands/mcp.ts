import type { XCommand } from '../command';
import { noExtra } from '../argv';
import { distModule } from '../dist-module';

const mcp: XCommand = {
  command: 'mcp',
  describe: 'Serve the Model Context Protocol on stdin/stdout for an AI agent: submit, queue, job, log, cancel, devices, wait (as you)',
  usage: '',
  options: {},
  builder: (y) => y,
  async handler(args) {
    noExtra(args, 0);
    // The server and the MCP SDK load only here, from dist/, never part of the bundle every
    // command starts from (docs/architecture.md, client start-up).
    const { serveStdio } = distModule<typeof import('../mcp')>('mcp');
    await serveStdio();
  },
};

export default mcp;

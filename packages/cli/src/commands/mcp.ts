import type { XCommand } from '../command';
import { noExtra } from '../argv';

const mcp: XCommand = {
  command: 'mcp',
  describe: 'Serve the Model Context Protocol on stdin/stdout for an AI agent: submit, queue, job, log, cancel, devices, wait (as you)',
  usage: '',
  options: {},
  builder: (y) => y,
  async handler(args) {
    noExtra(args, 0);
    // The MCP SDK loads only here (docs/architecture.md, client start-up).
    const { serveStdio } = require('../mcp') as typeof import('../mcp');
    await serveStdio();
  },
};

export default mcp;

/**
 * `xlurm mcp` (docs/behaviour.md §26.6): a Model Context Protocol server on standard input and
 * output, built on the official MCP TypeScript SDK, for an AI agent that runs as its own user on
 * the host. Every tool is a request through the same client as the other commands (client.ts):
 * the daemon sees the caller's SO_PEERCRED identity, so what an agent may see and do is exactly
 * what its user may. A refusal comes back as a tool error carrying the daemon's message.
 *
 * Loaded only by `xlurm mcp` (commands/mcp.ts imports it lazily), so the SDK and zod never load
 * in another command.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Job, JobSummary } from '@xlurm/protocol';
import { KIND_LABEL, VERSION, isTerminal } from '@xlurm/protocol';
import { request, stream } from './client';
import { captureEnv } from './env';
import { CliError, UsageError } from './errors';
import { reasonText } from './format/queue';
import { buildSubmission, checkJob, currentDir, defaultName, parseSubmitFlags, validateSubmitFlags } from './submit';

/** Bytes a `log` call returns at most by default, and at most ever. */
export const LOG_DEFAULT_BYTES = 64 * 1024;
export const LOG_MAX_BYTES = 1024 * 1024;
/** How long `wait` waits by default, and at most (an agent's call should not hang for ever). */
export const WAIT_DEFAULT_S = 300;
export const WAIT_MAX_S = 3600;

const text = (t: string): CallToolResult => ({ content: [{ type: 'text', text: t }] });
const json = (summary: string, value: unknown): CallToolResult => ({
  content: [{ type: 'text', text: `${summary}\n${JSON.stringify(value, null, 2)}` }],
  structuredContent: value as Record<string, unknown>,
});

/** A refusal or failure as a tool error with the daemon's (or the check's) message. */
function toolError(e: unknown): CallToolResult {
  const message = e instanceof CliError || e instanceof UsageError ? e.message : e instanceof Error ? e.message : String(e);
  return { isError: true, content: [{ type: 'text', text: message }] };
}

/** Tool calls still being answered, so the end of stdin lets them finish before the server closes. */
let inFlight = 0;
let idle: (() => void) | undefined;

async function guarded(fn: () => Promise<CallToolResult>): Promise<CallToolResult> {
  inFlight++;
  try {
    return await fn();
  } catch (e) {
    return toolError(e);
  } finally {
    // The reply is written after this resolves: let it go out first.
    setImmediate(() => { if (--inFlight === 0) idle?.(); });
  }
}

/** One line about a job: its state, and why it waits or how it ended. */
export function jobLine(job: Job): string {
  const parts = [`job ${job.id} (${job.spec.name}) ${job.state}`];
  if (job.state === 'PENDING' && job.reason) parts.push(`waiting: ${reasonText(job.reason)}`);
  if (job.devices.length) parts.push(`devices: ${job.devices.map((d) => `${KIND_LABEL[d.kind]}:${d.id}`).join(',')}`);
  if (job.result) parts.push(`exit code ${job.result.exit_code}${job.result.error ? `: ${job.result.error}` : ''}`);
  return parts.join('; ');
}

export interface SubmitInput {
  command?: string | undefined;
  script?: string | undefined;
  devices?: number | undefined;
  time_limit?: string | undefined;
  name?: string | undefined;
  cwd?: string | undefined;
}

/**
 * The submission the tool's arguments ask for, made and checked by the same code as xbatch's
 * (`--wrap CMD` for a command, the script text for a script), with this server's environment.
 */
export function mcpSubmission(input: SubmitInput, env: () => Record<string, string> = captureEnv) {
  if ((input.command === undefined) === (input.script === undefined)) {
    throw new CliError('give exactly one of command or script');
  }
  const flags = parseSubmitFlags({
    gpus: input.devices === undefined ? undefined : String(input.devices),
    'time-limit': input.time_limit,
    name: input.name,
  });
  if (input.cwd !== undefined && !input.cwd.startsWith('/')) throw new CliError(`the working directory must be an absolute path: ${input.cwd}`);
  const command = input.script === undefined ? ['bash', '-c', input.command!] : [];
  const count = validateSubmitFlags(flags);
  return buildSubmission({
    command, cwd: input.cwd ?? currentDir(), env: env(), count, flags, script: input.script ?? null,
    name: defaultName(flags, input.script === undefined ? undefined : 'script', command),
  });
}

/** The last `max` bytes of the job's log, as text (a cut UTF-8 sequence at the start is dropped). */
export async function logTail(id: number, max: number): Promise<{ text: string; size: number; truncated: boolean }> {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let size = 0;
  await stream('log', { id, offset: 0 }, {
    onLog(offset, bytes) {
      size = offset + bytes.length;
      kept.push(Buffer.from(bytes)); // the stream's buffer is reused
      keptBytes += bytes.length;
      while (kept.length > 1 && keptBytes - kept[0]!.length >= max) keptBytes -= kept.shift()!.length;
    },
  });
  let all = Buffer.concat(kept);
  const truncated = all.length > max || size > all.length;
  if (all.length > max) all = all.subarray(all.length - max);
  let start = 0;
  if (truncated) while (start < all.length && start < 4 && (all[start]! & 0xc0) === 0x80) start++;
  return { text: all.subarray(start).toString('utf8'), size, truncated };
}

/** Follow the job (state changes only) until it ends or `seconds` pass; the job as last seen. */
export async function waitFor(id: number, seconds: number): Promise<{ job: Job; ended: boolean }> {
  let last: Job = await request('get', { id });
  if (isTerminal(last.state)) return { job: last, ended: true };
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(new Error('timeout')), seconds * 1000);
  try {
    const end = await stream('follow', { id, bytes: false }, { onJob: (j) => { last = j; }, onLog: () => undefined }, { signal: ac.signal });
    if (end.job) last = end.job;
  } catch (e) {
    if (!ac.signal.aborted) throw e;
  } finally {
    clearTimeout(timer);
  }
  return { job: last, ended: isTerminal(last.state) };
}

/**
 * A tool's arguments as a strict object: an argument outside the schema is a
 * tool error naming it (docs/behaviour.md §28.11), never silently dropped
 * (an agent that misspells `time_limit` must not get a job without one).
 */
const args = <T extends z.ZodRawShape>(shape: T) => z.object(shape).strict();

export function createServer(): McpServer {
  const server = new McpServer({ name: 'xlurm', version: VERSION }, {
    instructions: 'xlurm schedules jobs on this host\'s accelerators. Submit a job, then use job or wait to see it start and end, and log to read its output. You act as the user who started this server.',
  });
  const id = z.number().int().min(1).describe('job id');

  server.registerTool('submit', {
    title: 'Submit a job',
    description: 'Queue a job: a shell command (run with bash -c) or a batch script\'s text, with devices, a time limit, a name and a working directory. Returns the new job; it runs when its devices are free.',
    inputSchema: args({
      command: z.string().min(1).optional().describe('shell command line, run with bash -c (give this or script)'),
      script: z.string().min(1).optional().describe('batch script text, run with bash (give this or command)'),
      devices: z.number().int().min(0).optional().describe('number of devices; 0 = CPU only (default 1)'),
      time_limit: z.string().optional().describe('wall-clock limit: seconds, or 30m, 2h, 1d, or HH:MM:SS'),
      name: z.string().optional().describe('job name'),
      cwd: z.string().optional().describe('absolute working directory (default: the server\'s)'),
    }),
  }, (input) => guarded(async () => {
    const job = checkJob(await request('submit', mcpSubmission(input)));
    return json(`submitted ${jobLine(job)}`, job);
  }));

  server.registerTool('queue', {
    title: 'Show the queue',
    description: 'Host-wide job summaries (pending and running; with all, the latest finished too). No commands or environments.',
    inputSchema: args({ all: z.boolean().optional().describe('include finished jobs (latest 100)') }),
  }, ({ all }) => guarded(async () => {
    const rows = await request('queue', { all: all ?? false, limit: 100 }) as JobSummary[];
    return json(`${rows.length} jobs`, { jobs: rows });
  }));

  server.registerTool('job', {
    title: 'Show a job',
    description: 'One of your jobs in full: state, devices, times, result, and for a pending job the reason it waits.',
    inputSchema: args({ id }),
  }, ({ id: jobId }) => guarded(async () => {
    const job = await request('get', { id: jobId });
    return json(jobLine(job), job);
  }));

  server.registerTool('log', {
    title: 'Read a job\'s log',
    description: `The end of one of your jobs' output (stdout and stderr), at most max_bytes (default ${LOG_DEFAULT_BYTES}, at most ${LOG_MAX_BYTES}).`,
    inputSchema: args({ id, max_bytes: z.number().int().min(1).max(LOG_MAX_BYTES).optional().describe('most bytes to return, from the end') }),
  }, ({ id: jobId, max_bytes }) => guarded(async () => {
    const tail = await logTail(jobId, max_bytes ?? LOG_DEFAULT_BYTES);
    return text(tail.truncated ? `[last ${Buffer.byteLength(tail.text)} of ${tail.size} bytes]\n${tail.text}` : tail.text);
  }));

  server.registerTool('cancel', {
    title: 'Cancel a job',
    description: 'Cancel one of your pending or running jobs (nothing happens to a finished one).',
    inputSchema: args({ id }),
  }, ({ id: jobId }) => guarded(async () => {
    await request('cancel', { id: jobId });
    return text(`Cancellation requested for job ${jobId}`);
  }));

  server.registerTool('devices', {
    title: 'Show the devices',
    description: 'Every device with its status (idle, allocated, busy, …) and the job holding it.',
    inputSchema: args({}),
  }, () => guarded(async () => {
    const views = await request('info', {});
    return json(`${views.length} devices`, { devices: views });
  }));

  server.registerTool('wait', {
    title: 'Wait for a job to end',
    description: `Wait until one of your jobs ends, for at most timeout_s seconds (default ${WAIT_DEFAULT_S}, at most ${WAIT_MAX_S}); returns the job as it then is.`,
    inputSchema: args({ id, timeout_s: z.number().int().min(1).max(WAIT_MAX_S).optional().describe('longest wait in seconds') }),
  }, ({ id: jobId, timeout_s }) => guarded(async () => {
    const { job, ended } = await waitFor(jobId, timeout_s ?? WAIT_DEFAULT_S);
    return json(ended ? jobLine(job) : `still ${job.state} after ${timeout_s ?? WAIT_DEFAULT_S}s: ${jobLine(job)}`, job);
  }));

  return server;
}

/** Serve on stdin/stdout until the client closes the connection. */
export async function serveStdio(): Promise<void> {
  const server = createServer();
  // The SDK's stdio transport does not end by itself when stdin does: the client closing its
  // end of the pipe ends the server.
  const ended = new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
  });
  await server.connect(new StdioServerTransport());
  await ended;
  if (inFlight > 0) await new Promise<void>((resolve) => { idle = resolve; });
  await server.close();
}

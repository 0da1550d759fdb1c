// `xlurm mcp` (docs/behaviour.md §26.6) driven by the official MCP SDK's client over a real stdio
// pipe against a real daemon on fake GPUs: every tool, and refusals as tool errors carrying the
// daemon's message.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startDaemon } from '../helpers/daemon';
import { fakeLibrary } from '../helpers/fixtures';
import { startMcp } from '../helpers/mcp';

const gpus = (n: number) => Array.from({ length: n }, (_, i) => `device ${i} GPU-7e57c0de-0000-4000-8000-00000000000${i} "Fake H100 80GB"`);

t.test('an agent submits, waits, reads the log, cancels; errors are tool errors', async (t) => {
  const fake = fakeLibrary(t, 'nvidia', gpus(2));
  const d = await startDaemon(t, { backend: 'nvidia', env: fake.env });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-mcp-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const mcp = await startMcp(t, d);

  const { tools } = await mcp.client.listTools();
  t.same(tools.map((x) => x.name).sort(), ['cancel', 'devices', 'job', 'log', 'queue', 'submit', 'wait']);
  const submitTool = tools.find((x) => x.name === 'submit')!;
  t.same(Object.keys(submitTool.inputSchema.properties ?? {}).sort(), ['command', 'cwd', 'devices', 'name', 'script', 'time_limit']);

  const sub = await mcp.call('submit', { command: 'echo hello-mcp; pwd; echo "gpus=$CUDA_VISIBLE_DEVICES"', devices: 1, name: 'agent-job', time_limit: '5m', cwd: dir });
  t.equal(sub.isError, false, sub.text);
  const id = sub.data.id as number;
  t.match(sub.text, new RegExp(`^submitted job ${id} \\(agent-job\\) (PENDING|RUNNING)`));
  t.equal(sub.data.spec.time_limit, 300);
  t.equal(sub.data.spec.cwd, dir);
  t.equal(sub.data.owner.uid, process.getuid!(), 'the job is the calling user\'s');

  const done = await mcp.call('wait', { id, timeout_s: 30 });
  t.equal(done.isError, false, done.text);
  t.equal(done.data.state, 'COMPLETED');
  t.equal(done.text.split('\n')[0], `job ${id} (agent-job) COMPLETED; devices: nv:0; exit code 0`);

  const log = await mcp.call('log', { id });
  t.equal(log.text, `hello-mcp\n${dir}\ngpus=GPU-7e57c0de-0000-4000-8000-000000000000\n`);
  const tail = await mcp.call('log', { id, max_bytes: 12 });
  t.equal(tail.text, `[last 12 of ${Buffer.byteLength(log.text)} bytes]\n${log.text.slice(-12)}`);

  const job = await mcp.call('job', { id });
  t.equal(job.data.id, id);
  t.equal(job.data.result.exit_code, 0);
  const queue = await mcp.call('queue', { all: true });
  t.ok((queue.data.jobs as Array<{ id: number }>).some((j) => j.id === id), 'queue lists it');
  t.notOk(JSON.stringify(queue.data).includes('hello-mcp'), 'queue summaries carry no command');
  const devices = await mcp.call('devices');
  t.same((devices.data.devices as Array<{ device: { id: number } }>).map((v) => v.device.id), [0, 1]);

  const script = await mcp.call('submit', { script: '#!/bin/bash\necho "from-script $XLURM_JOB_ID"\n', devices: 0, cwd: dir });
  t.equal(script.isError, false, script.text);
  t.equal(script.data.spec.script, '#!/bin/bash\necho "from-script $XLURM_JOB_ID"\n');
  t.equal((await mcp.call('wait', { id: script.data.id, timeout_s: 30 })).data.state, 'COMPLETED');
  t.equal((await mcp.call('log', { id: script.data.id })).text, `from-script ${script.data.id}\n`);

  const long = await mcp.call('submit', { command: 'sleep 60', devices: 1, cwd: dir });
  await d.waitState(long.data.id, 'RUNNING');
  const still = await mcp.call('wait', { id: long.data.id, timeout_s: 1 });
  t.equal(still.isError, false);
  t.match(still.text, /^still RUNNING after 1s: /);
  const cancel = await mcp.call('cancel', { id: long.data.id });
  t.equal(cancel.text, `Cancellation requested for job ${long.data.id}`);
  t.equal((await mcp.call('wait', { id: long.data.id, timeout_s: 30 })).data.state, 'CANCELLED');

  // Refusals: the daemon's words, as tool errors; the server keeps serving after each.
  const missing = await mcp.call('job', { id: 999999 });
  t.same([missing.isError, missing.text], [true, 'job not found']);
  t.same(await mcp.call('log', { id: 999999 }), { isError: true, text: 'job not found', data: undefined });
  const both = await mcp.call('submit', { command: 'true', script: 'true' });
  t.same([both.isError, both.text], [true, 'give exactly one of command or script']);
  const tooMany = await mcp.call('submit', { command: 'true', devices: 5 });
  const cli = await d.run('xbatch', ['-g', '5', '--wrap', 'true']);
  t.equal(tooMany.isError, true);
  t.equal(`xlurm: ${tooMany.text}\n`, cli.stderr, 'the same refusal as xbatch');
  const badLimit = await mcp.call('submit', { command: 'true', time_limit: 'soon' });
  t.equal(badLimit.isError, true);
  t.match(badLimit.text, /soon/);
  const relative = await mcp.call('submit', { command: 'true', cwd: 'rel/dir' });
  t.same([relative.isError, relative.text], [true, 'the working directory must be an absolute path: rel/dir']);
  const schema = await mcp.call('job', { id: 'x' });
  t.equal(schema.isError, true, 'arguments are checked against the tool\'s schema');
  t.equal((await mcp.call('devices')).isError, false, 'still serving');
  t.equal(mcp.stderr(), '', 'nothing on stderr');
});

t.test('the server ends when the client closes its stdin; a stopped daemon is a tool error', async (t) => {
  const d = await startDaemon(t, {});
  const mcp = await startMcp(t, d);
  t.equal((await mcp.call('devices')).isError, false);

  // Requests piped in and stdin closed at once: each is still answered before the server exits.
  const id = await d.batch('echo piped', ['-g', '0']);
  await d.waitState(id, 'COMPLETED');
  const piped = await d.run('xlurm', ['mcp'], {
    input: [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'log', arguments: { id } } },
    ].map((m) => JSON.stringify(m)).join('\n') + '\n',
  });
  t.equal(piped.code, 0, piped.stderr);
  const replies = piped.stdout.trim().split('\n').map((l) => JSON.parse(l) as { id: number; result: any });
  t.same(replies.map((r) => r.id), [1, 2]);
  t.same(replies[1]!.result.content, [{ type: 'text', text: 'piped\n' }]);

  await d.stop();
  const r = await mcp.call('queue');
  t.equal(r.isError, true);
  t.match(r.text, /^xlurm is not running; (ask the administrator to run `sudo xlurm start`|start it with `xlurm start`): /);
  await mcp.client.close();

  // Its stdin at its end (here /dev/null): the server exits by itself, status 0.
  const server = d.spawnCli('xlurm', ['mcp']);
  const [code] = await new Promise<[number | null]>((resolve) => server.once('exit', (c) => resolve([c])));
  t.equal(code, 0);
});

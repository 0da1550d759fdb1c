#!/usr/bin/env node
// install.sh's way to talk to whatever xlurm daemon is running, old or new.
// It speaks the daemon's own protocol version: it sends this checkout's
// version first and, on VERSION_MISMATCH, repeats the request with the `v`
// of the daemon's reply frame. Only built-in modules are used, so it runs
// from the checkout before anything is built or installed.
//
//   node packaging/daemon-ctl.js status HOME        print the daemon's status (JSON, one line)
//   node packaging/daemon-ctl.js stop HOME          stop it (running jobs continue)
//   node packaging/daemon-ctl.js stop-if-idle HOME  stop it unless a job is running
//
// `stop` and `stop-if-idle` return once the daemon process has exited.
// Exit status: 0 done; 3 no daemon answers on HOME/xlurm.sock; 4 jobs are
// running (stop-if-idle; the daemon's message is on stderr); 1 anything else.
'use strict';
const net = require('node:net');
const path = require('node:path');

const REPLY_TIMEOUT_MS = 10_000;
const EXIT_TIMEOUT_MS = 45_000;

class NoDaemon extends Error {}

function ownProtocol() {
  try {
    return require(path.join(__dirname, '..', 'packages', 'protocol', 'dist')).PROTOCOL_VERSION;
  } catch {
    return 1;
  }
}

/** One request on one connection; resolves to the first reply frame. */
function call(socketPath, op, v) {
  return new Promise((resolve, reject) => {
    const s = net.createConnection(socketPath);
    const chunks = [];
    let connected = false;
    const timer = setTimeout(() => { s.destroy(); reject(new Error('timed out waiting for the daemon')); }, REPLY_TIMEOUT_MS);
    s.on('connect', () => { connected = true; s.write(JSON.stringify({ v, op, args: {} }) + '\n'); });
    s.on('data', (b) => {
      chunks.push(b);
      const text = Buffer.concat(chunks).toString();
      const nl = text.indexOf('\n');
      if (nl < 0) return;
      clearTimeout(timer);
      s.destroy();
      try { resolve(JSON.parse(text.slice(0, nl))); } catch { reject(new Error('unexpected response')); }
    });
    s.on('error', (e) => {
      clearTimeout(timer);
      if (!connected && (e.code === 'ENOENT' || e.code === 'ECONNREFUSED')) reject(new NoDaemon(e.message));
      else reject(e);
    });
    s.on('close', () => { clearTimeout(timer); reject(new Error('connection closed before complete message')); });
  });
}

async function request(home, op) {
  const socketPath = path.join(home, 'xlurm.sock');
  const v = ownProtocol();
  let reply = await call(socketPath, op, v);
  if (reply && reply.ok === false && reply.error && reply.error.code === 'VERSION_MISMATCH' && typeof reply.v === 'number' && reply.v !== v) {
    reply = await call(socketPath, op, reply.v);
  }
  return reply;
}

const alive = (pid) => {
  try { process.kill(pid, 0); return true; } catch (e) { return e.code === 'EPERM'; }
};

async function waitExit(pid) {
  const deadline = Date.now() + EXIT_TIMEOUT_MS;
  while (alive(pid)) {
    if (Date.now() > deadline) throw new Error(`the daemon (pid ${pid}) did not exit within ${EXIT_TIMEOUT_MS / 1000} s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function refused(reply) {
  const e = new Error(reply && reply.error ? reply.error.message : 'unexpected response');
  e.code = reply && reply.error ? reply.error.code : undefined;
  return e;
}

async function status(home) {
  const reply = await request(home, 'status');
  if (!reply || reply.ok !== true) throw refused(reply);
  return reply.result;
}

async function main() {
  const [cmd, home] = process.argv.slice(2);
  if (!['status', 'stop', 'stop-if-idle'].includes(cmd) || !home) {
    process.stderr.write('usage: daemon-ctl.js status|stop|stop-if-idle HOME\n');
    return 2;
  }
  try {
    const st = await status(home);
    if (cmd === 'status') {
      process.stdout.write(JSON.stringify(st) + '\n');
      return 0;
    }
    // `restart` is the daemon's own "stop unless a job is running" (decided in
    // one step inside the daemon, so no job can start in between).
    const reply = await request(home, cmd === 'stop' ? 'stop' : 'restart');
    if (!reply || reply.ok !== true) {
      const e = refused(reply);
      process.stderr.write(`${e.message}\n`);
      return e.code === 'JOBS_RUNNING' ? 4 : 1;
    }
    await waitExit(st.pid);
    process.stdout.write(`stopped the xlurm ${st.version} daemon (pid ${st.pid})\n`);
    return 0;
  } catch (e) {
    if (e instanceof NoDaemon) return 3;
    process.stderr.write(`${e.message}\n`);
    return 1;
  }
}

main().then((code) => { process.exitCode = code; });

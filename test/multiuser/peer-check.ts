// docs/behaviour.md §2.9 as root: a client talks only to a socket whose peer (SO_PEERCRED)
// owns $XLURM_HOME, and sends nothing before checking. Here nobody plants a
// listening socket inside a root-owned state directory.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Daemon, nodeCommand } from '../helpers/daemon';
import { MULTIUSER_SKIP, accounts, as, background, rootHome, runtime, sharedDir } from '../helpers/multiuser';
import { waitFor } from '../helpers/wait';

/** A server anyone may connect to that answers every request with an empty list and prints how many bytes it got. */
const FAKE_SERVER = `
const net = require('net');
let total = 0;
net.createServer((s) => {
  s.on('data', (b) => { total += b.length; process.stdout.write('got ' + total + '\\n'); s.end('{"v":1,"ok":true,"result":[]}\\n'); });
  s.on('error', () => {});
}).listen(process.argv[1], () => { require('fs').chmodSync(process.argv[1], 0o666); process.stdout.write('listening\\n'); });
`;

async function plant(t: any, nobodyDir: string): Promise<{ socket: string; output: () => string }> {
  const { nobody } = accounts();
  const socket = path.join(nobodyDir, `fake-${Math.random().toString(36).slice(2)}.sock`);
  const [cmd, args] = nodeCommand(['-e', FAKE_SERVER, socket], nobody.uid);
  const srv = background(t, cmd, args, { uid: nobody.uid, gid: nobody.gid, env: { PATH: '/usr/bin:/bin' } });
  await waitFor(() => srv.output().includes('listening'), { what: 'the planted server' });
  return { socket, output: srv.output };
}

t.test('a socket planted by nobody in a root-owned home is refused before anything is sent', { skip: MULTIUSER_SKIP }, async (t) => {
  const { nobody, daemon } = accounts();
  const rt = await runtime();
  const nobodyDir = sharedDir(t, 0o755, 'xlmu-plant');
  fs.chownSync(nobodyDir, nobody.uid, nobody.gid);

  const home = rootHome(t);
  fs.mkdirSync(home, { mode: 0o755 });
  t.equal(fs.statSync(home).uid, 0);
  const fake = await plant(t, nobodyDir);
  fs.renameSync(fake.socket, path.join(home, 'xlurm.sock')); // as if nobody had won a race for the name
  const d = new Daemon(t, home, { runtime: rt });

  const secret = { XLURM_SECRET: 'planted-socket-must-not-see-this' };
  for (const who of [undefined, daemon, nobody]) {
    for (const [bin, args] of [['xqueue', ['--json']], ['xbatch', ['-g', '0', '--wrap', 'true']], ['xlurm', ['stop']]] as const) {
      const r = await d.run(bin, [...args], who ? as(who, { env: secret }) : { env: secret });
      const name = `${who?.name ?? 'root'}: ${bin} ${args.join(' ')}`;
      t.equal(r.code, 1, name);
      t.equal(r.stderr, 'xlurm: socket peer does not own the state directory\n', name);
      t.equal(r.stdout, '');
    }
  }
  t.notMatch(fake.output(), /got/, 'the planted server received no byte');

  // Control: the same kind of server in a home that nobody owns is trusted.
  const ownHome = path.join(nobodyDir, 'home');
  fs.mkdirSync(ownHome, { mode: 0o755 });
  fs.chownSync(ownHome, nobody.uid, nobody.gid);
  const trusted = await plant(t, nobodyDir);
  fs.renameSync(trusted.socket, path.join(ownHome, 'xlurm.sock'));
  const ok = await new Daemon(t, ownHome, { runtime: rt }).run('xqueue', ['--json']);
  t.equal(ok.code, 0, ok.stderr);
  t.equal(ok.stdout, '[]\n');
  t.match(trusted.output(), /got \d+/, 'control: a peer that owns the home gets the request');
});

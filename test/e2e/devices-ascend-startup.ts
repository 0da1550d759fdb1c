// Start-up of `--backend ascend` (spec 9.2, 9.3): which DCMI API is used (v2 only where
// dcmiv2_init accepts; the classic API on other boards and on drivers without v2), where the
// library is looked for, the XLURM_DCMI_LIBRARY override, discovery failures that stop start-up,
// and `auto`, which skips a missing DCMI and uses a working one (the fake DCMI,
// test/fixtures/fake-dcmi). Monitoring and allocation: devices-ascend.ts.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DAEMON_MAIN, baseEnv } from '../helpers/env';
import { Daemon, runProcess, startDaemon, tempHome } from '../helpers/daemon';
import { SHOW_VISIBILITY, fakeDaemon, views } from '../helpers/devices';
import { fakeLibrary } from '../helpers/fixtures';
import { waitFor } from '../helpers/wait';

// One card with two compute chips and an MCU.
const CHIPS = ['chip 3 0 0 Ascend 910B3', 'chip 3 1 1 Ascend 910B3', 'mcu 3 2'];
const DEVICES = [0, 1].map((id) => ({ kind: 'ascend', id, name: 'Ascend 910B3', visible: String(id), npu: 3, chip: id }));

t.test('the classic API where v2 is refused (a 910B board) or absent (an older driver)', async (t) => {
  for (const [name, kind, board] of [
    ['v2 symbols refuse', 'ascend', ['board 910B']],
    ['no v2 symbols', 'ascend-classic', []],
  ] as const) {
    t.test(name, async (t) => {
      const fake = fakeLibrary(t, kind, [...CHIPS, ...board, 'health 0 2']);
      const { d } = await fakeDaemon(t, [fake], { backend: 'ascend' });
      t.same((await views(d)).map((v) => [v.device, v.status]), [[DEVICES[0], 'unhealthy'], [DEVICES[1], 'idle']]);
      const calls = fake.calls();
      t.same(calls.filter((c) => c.startsWith('dcmiv2_')), kind === 'ascend' ? ['dcmiv2_init'] : [], 'v2: at most the refused init');
      for (const c of ['dcmi_init', 'dcmi_get_card_list', 'dcmi_get_device_num_in_card', 'dcmi_get_device_type',
        'dcmi_get_device_logic_id', 'dcmi_get_device_health', 'dcmi_get_device_resource_info']) {
        t.ok(calls.includes(c), `calls ${c}`);
      }
      fake.write([...CHIPS, ...board, 'procs 1 777']);
      await waitFor(async () => (await views(d)).map((v) => v.status).join() === 'idle,busy', { what: 'asc:0 idle, asc:1 busy' });
      fake.write([...CHIPS, ...board]);
      const r = await d.run('xrun', ['-g', '2', '--', 'sh', '-c', SHOW_VISIBILITY]);
      t.equal(r.stdout, 'CUDA=-1 ASC=0,1 MUSA=-1 MT=-1 MACA=-1 HIP=-1 ROCR=-1 ADI=0\n');
      t.notOk(fake.calls().some((c) => c.startsWith('dcmiv2_') && c !== 'dcmiv2_init'), 'never a v2 call after the refusal');
    });
  }
});

const daemon = (env: Record<string, string>, backend = 'ascend') =>
  runProcess(process.execPath, [DAEMON_MAIN, 'daemon', '--backend', backend], { env: baseEnv({ XLURM_HOME: tempHome(t), ...env }) });

const SEARCHED = ['/usr/local/dcmi/libdcmi.so', '/usr/local/Ascend/driver/lib64/driver/libdcmi.so'];
const hostHasDcmi = SEARCHED.some((p) => fs.existsSync(p)) && 'this host has a DCMI library';

t.test('no library: start-up fails naming every place searched; auto skips Ascend', { skip: hostHasDcmi }, async (t) => {
  const r = await daemon({});
  t.equal(r.code, 1);
  t.equal(r.stderr, 'xlurm: asc discovery: cannot load library: ' +
    SEARCHED.map((p) => `${p}: cannot open shared object file: No such file or directory; `).join('') +
    'libdcmi.so: cannot open shared object file: No such file or directory\n');

  const d = new Daemon(t, tempHome(t), { env: {} });
  const s = await d.run('xlurm', ['start', '--backend', 'asc'], { cwd: os.tmpdir() });
  t.equal(s.code, 1);
  t.equal(s.stderr, `xlurm: daemon exited (exit status: 1); see ${path.join(d.home, 'daemon.log')}\n`);
  t.match(fs.readFileSync(path.join(d.home, 'daemon.log'), 'utf8'), /xlurm: asc discovery: cannot load library: \/usr\/local\/dcmi\/libdcmi\.so: /);

  const auto = await startDaemon(t, { backend: 'auto' });
  t.match(auto.output, /asc discovery: cannot load library: \/usr\/local\/dcmi\/libdcmi\.so: cannot open shared object file/);
  t.same((await views(auto)).filter((v) => v.device.kind === 'ascend'), []);
});

t.test('the override: absolute only; it disables the search; auto finds the fake', async (t) => {
  const fake = fakeLibrary(t, 'ascend', CHIPS);
  let r = await daemon({ ...fake.env, XLURM_DCMI_LIBRARY: 'libdcmi.so' });
  t.equal(r.stderr, 'xlurm: asc discovery: XLURM_DCMI_LIBRARY must be an absolute path: libdcmi.so\n');
  r = await daemon({ ...fake.env, XLURM_DCMI_LIBRARY: '/nonexistent/libdcmi.so' });
  t.equal(r.stderr, 'xlurm: asc discovery: cannot load library: /nonexistent/libdcmi.so: cannot open shared object file: No such file or directory\n');

  fake.write([...CHIPS, 'board 910B', 'fail dcmi_init -8005']);
  r = await daemon(fake.env);
  t.equal(r.stderr, 'xlurm: asc discovery: dcmi_init: inner error (-8005); dcmiv2_init: not supported (-8255)\n');
  fake.write([...CHIPS, 'fail dcmi_get_device_logic_id -8007 1', 'board 910B']);
  r = await daemon(fake.env);
  t.equal(r.stderr, 'xlurm: asc discovery: card 3 chip 1: dcmi_get_device_logic_id: invalid device id (-8007); refusing to guess Ascend logical ids\n');
  fake.write(['mcu 3 0']);
  r = await daemon(fake.env);
  t.equal(r.stderr, 'xlurm: asc discovery: no compute devices discovered\n');

  fake.write(CHIPS);
  const d = await startDaemon(t, { backend: 'auto', env: fake.env });
  t.same((await views(d)).filter((v) => v.device.kind === 'ascend').map((v) => v.device), DEVICES);
  const st = await d.request('status', {}) as any;
  t.ok(st.result.backends.includes('ascend'));
});

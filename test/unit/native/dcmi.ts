// The Ascend DCMI vendor of the addon (native/src/addon/dcmi.cc) against the fake DCMI
// (test/fixtures/fake-dcmi), loaded into this test process: API choice (v2 only where dcmiv2_init
// accepts, else classic), per-chip discovery, and the decoding of names, health and process rows.
// Both builds of the fake (with and without the v2 symbols) read the same state file.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as native from '../../../native/ts/index';
import { buildFake, fakeLibrary } from '../../helpers/fixtures';
import { waitFor } from '../../helpers/wait';

const built = fs.existsSync(path.resolve(__dirname, '../../../native/build/Release/xlurm_native.node'));
if (!built) {
  t.plan(0, 'native addon not built (npm run build:native)');
} else {
  // card 2: two NPUs (logical 3 and 1) and an MCU; card 5: one NPU (logical 0)
  const CHIPS = [
    'chip 2 0 3 Ascend 910B3',
    'chip 2 1 1 Ascend 910B3',
    'mcu 2 2',
    'chip 5 0 0 Ascend 310P3',
  ];
  const fake = fakeLibrary(t, 'ascend', CHIPS);
  const classicOnly = buildFake('ascend-classic');
  Object.assign(process.env, fake.env);
  const open = (lib = fake.library) => native.deviceOpen('ascend', [lib], 2000);
  const DEVICES = [
    { id: 0, uuid: '0', name: 'Ascend 310P3', npu: 5, chip: 0, error: null },
    { id: 1, uuid: '1', name: 'Ascend 910B3', npu: 2, chip: 1, error: null },
    { id: 3, uuid: '3', name: 'Ascend 910B3', npu: 2, chip: 0, error: null },
  ];
  /** The calls `fn` makes (names from the fake's log). */
  async function callsOf(fn: () => unknown): Promise<string[]> {
    const before = fake.calls().length;
    await fn();
    return fake.calls().slice(before);
  }
  const v2Calls = (calls: string[]) => calls.filter((c) => c.startsWith('dcmiv2_'));
  const classicCalls = (calls: string[]) => calls.filter((c) => c.startsWith('dcmi_'));

  t.test('open failures say why', async (t) => {
    t.throws(() => native.deviceOpen('ascend', ['/nonexistent/libdcmi.so'], 2000),
      /^cannot load library: \/nonexistent\/libdcmi\.so: cannot open shared object file/,
      'ascend is compiled in: the open fails at the library, not at the kind');
    t.throws(() => native.deviceOpen('ascend', ['libc.so.6'], 2000), /^libc\.so\.6 does not export dcmi_init \(not a DCMI library\?\)$/);
    fake.write([...CHIPS, 'board 910B', 'fail dcmi_init -8005']);
    t.throws(() => open(), /^dcmi_init: inner error \(-8005\); dcmiv2_init: not supported \(-8255\)$/,
      'the classic failure, and why v2 was not used');
    fake.write([...CHIPS, 'fail dcmi_init -8008']);
    t.throws(() => open(classicOnly), /^dcmi_init: device does not exist \(-8008\)$/);
  });

  t.test('v2 where dcmiv2_init accepts: one device per NPU chip, sorted by logical id', async (t) => {
    fake.write(CHIPS);
    let h!: native.DeviceHandle;
    const calls = await callsOf(() => {
      h = open();
      t.same(native.deviceDiscover(h, 2000), DEVICES);
    });
    t.teardown(() => native.deviceClose(h, 2000));
    t.same(classicCalls(calls), [], 'no classic call');
    t.same(calls.slice(0, 2), ['dcmiv2_init', 'dcmiv2_get_device_list']);
    const probe = await callsOf(async () => t.same(await native.deviceProbe(h, [3, 0], 2000), [
      { id: 3, uuid: '3', processes: [], health: 'ok', error: null },
      { id: 0, uuid: '0', processes: [], health: 'ok', error: null },
    ]));
    // Then the chip's memory (card sharing, docs/behaviour.md §25.2; samples, §26.2) and its AI Core
    // utilisation (samples); never the device's error.
    t.same(probe, [
      'dcmiv2_get_slot_id_and_chip_id_by_dev_id', 'dcmiv2_get_device_health', 'dcmiv2_get_device_proc_mem_info', 'dcmiv2_get_device_hbm_info', 'dcmiv2_get_device_utilization_rate',
      'dcmiv2_get_slot_id_and_chip_id_by_dev_id', 'dcmiv2_get_device_health', 'dcmiv2_get_device_proc_mem_info', 'dcmiv2_get_device_hbm_info', 'dcmiv2_get_device_utilization_rate',
    ]);
    fake.write([...CHIPS, 'hbm 3 65536 1024']);
    t.same(await native.deviceProbe(h, [3, 0], 2000), [
      { id: 3, uuid: '3', processes: [], health: 'ok', error: null, memory_used: 1024 * 2 ** 20, memory_total: 65536 * 2 ** 20, memory_free: 64512 * 2 ** 20 },
      { id: 0, uuid: '0', processes: [], health: 'ok', error: null },
    ], 'HBM total and usage in bytes where the chip answers');
    fake.write([...CHIPS, 'util 3 37', 'util 0 101', 'hbm 0 65536 2048']);
    t.same(await native.deviceProbe(h, [3, 0], 2000), [
      { id: 3, uuid: '3', processes: [], health: 'ok', error: null, utilization: 37 },
      { id: 0, uuid: '0', processes: [], health: 'ok', error: null, memory_used: 2048 * 2 ** 20, memory_total: 65536 * 2 ** 20, memory_free: 63488 * 2 ** 20 },
    ], 'the AI Core utilisation (input type 2) in percent; above 100 is not a percentage: left out, never 0');
    fake.write([...CHIPS, 'util 3 37', 'fail dcmiv2_get_device_utilization_rate -8005 3']);
    t.same(await native.deviceProbe(h, [3], 2000), [{ id: 3, uuid: '3', processes: [], health: 'ok', error: null }],
      'a failed utilisation query leaves the figure out and is not the device\'s error');
    t.same((await native.deviceProbe(h, [2], 2000))[0]!.error, 'logical id 2 was not discovered');
  });

  t.test('v2 symbols present but refused (a non-950 board): the classic API', async (t) => {
    fake.write([...CHIPS, 'board 910B']);
    let h!: native.DeviceHandle;
    const calls = await callsOf(() => {
      h = open();
      t.same(native.deviceDiscover(h, 2000), DEVICES);
    });
    t.teardown(() => native.deviceClose(h, 2000));
    t.same(v2Calls(calls), ['dcmiv2_init'], 'v2 tried once');
    t.same(calls.slice(1, 4), ['dcmi_init', 'dcmi_get_card_list', 'dcmi_get_device_num_in_card']);
    t.ok(calls.includes('dcmi_get_device_logic_id'));
    const probe = await callsOf(async () => t.same(await native.deviceProbe(h, [1], 2000), [
      { id: 1, uuid: '1', processes: [], health: 'ok', error: null },
    ]));
    t.same(probe, ['dcmi_get_device_logic_id', 'dcmi_get_device_health', 'dcmi_get_device_resource_info', 'dcmi_get_device_hbm_info', 'dcmi_get_device_utilization_rate']);
    fake.write([...CHIPS, 'board 910B', 'util 1 64', 'hbm 1 32768 8192']);
    t.same(await native.deviceProbe(h, [1], 2000), [
      { id: 1, uuid: '1', processes: [], health: 'ok', error: null, utilization: 64, memory_used: 8192 * 2 ** 20, memory_total: 32768 * 2 ** 20, memory_free: 24576 * 2 ** 20 },
    ], 'the classic calls: utilisation and memory by (card, chip)');
  });

  t.test('a library without the v2 symbols: the classic API', async (t) => {
    fake.write(CHIPS); // a 950 board, but this build has no dcmiv2_* at all
    let h!: native.DeviceHandle;
    const calls = await callsOf(() => {
      h = open(classicOnly);
      t.same(native.deviceDiscover(h, 2000), DEVICES);
    });
    t.teardown(() => native.deviceClose(h, 2000));
    t.same(v2Calls(calls), []);
    t.equal(calls[0], 'dcmi_init');
  });

  for (const api of ['v2', 'classic'] as const) {
    const board = api === 'v2' ? [] : ['board 910B'];
    const call = (v2: string, classic: string) => (api === 'v2' ? v2 : classic);
    const PROCS = call('dcmiv2_get_device_proc_mem_info', 'dcmi_get_device_resource_info');
    const HEALTH = call('dcmiv2_get_device_health', 'dcmi_get_device_health');

    t.test(`${api}: health values, process rows and failures`, async (t) => {
      fake.write([...CHIPS, ...board]);
      const h = open();
      t.teardown(() => native.deviceClose(h, 2000));
      native.deviceDiscover(h, 2000);
      const probe = async (...state: string[]) => {
        fake.write([...CHIPS, ...board, ...state]);
        return native.deviceProbe(h, [0, 1, 3], 2000);
      };

      let rows = await probe('health 0 1', 'health 1 2', 'health 3 3');
      t.same(rows.map((r) => [r.health, r.error]), [['ok', null], ['unhealthy', null], ['unhealthy', null]],
        '1 (minor alarm) is usable; 2 and 3 (major, critical) are not');
      rows = await probe('health 0 0xFFFFFFFF', 'health 1 7');
      t.same(rows.map((r) => r.error), [
        `${HEALTH}: the device does not exist (health 0xFFFFFFFF)`, `${HEALTH}: invalid answer (health 7)`, null,
      ]);
      const unhealthyCalls = await callsOf(() => probe('health 1 3', 'procs 1 77'));
      t.equal(unhealthyCalls.filter((c) => c === PROCS).length, 2, 'no process query on an unhealthy chip');

      const many = Array.from({ length: 64 }, (_, i) => 1000 + i);
      rows = await probe(`procs 1 ${many.join(' ')}`, 'procs 3 4242');
      t.same(rows.map((r) => r.processes), [[], many, [4242]], 'all 64 rows the driver may write');
      t.same(rows.map((r) => r.uuid), ['0', '1', '3']);

      rows = await probe('procs 0 -5', 'procs 1 12 0', 'procs 3 4194304');
      t.same(rows.map((r) => [r.processes, r.error]), [
        [null, `${PROCS}: invalid answer (process id -5)`],
        [null, `${PROCS}: invalid answer (process id 0)`],
        [null, `${PROCS}: invalid answer (process id 4194304)`],
      ], 'a corrupt PID is an invalid answer, never "no processes"');

      rows = await probe(`fail ${PROCS} -8005 1`, `fail ${HEALTH} -8006 3`);
      t.same(rows.map((r) => r.error), [null, `${PROCS}: inner error (-8005)`, `${HEALTH}: timed out (-8006)`]);

      // a process exiting mid-call fails the driver's call once: retried
      const flaky = await callsOf(async () => {
        rows = await probe(`flaky ${PROCS} -8005 1`, 'procs 1 31');
        t.same(rows.map((r) => [r.processes, r.error]), [[[], null], [[31], null], [[], null]]);
      });
      t.equal(flaky.filter((c) => c === PROCS).length, 4, 'two calls for the flaky chip, one each for the others');

      const hang = await callsOf(async () => {
        fake.write([...CHIPS, ...board, `hang ${PROCS} 30 3`]);
        rows = await native.deviceProbe(h, [0, 3], 300);
        t.same(rows.map((r) => r.error), [`${PROCS} timed out after 300 ms`, `${PROCS} timed out after 300 ms`]);
        fake.write([...CHIPS, ...board]);
        await waitFor(async () => (await native.deviceProbe(h, [0], 2000))[0]!.error === null, { timeout: 5000, what: 'the hung call to return' });
      });
      t.notOk(hang.some((c) => c.startsWith('CONCURRENT')));
      t.same((await native.deviceProbe(h, [0], 2000))[0]!.error, null, 'recovered');
    });
  }

  t.test('identity: the logical id must still name the discovered chip', async (t) => {
    fake.write([...CHIPS, 'board 910B']);
    const hc = open();
    t.teardown(() => native.deviceClose(hc, 2000));
    native.deviceDiscover(hc, 2000);
    fake.write(['chip 2 0 3 Ascend 910B3', 'chip 2 1 4 Ascend 910B3', 'chip 5 0 0 Ascend 310P3', 'board 910B']);
    t.same((await native.deviceProbe(hc, [1], 2000))[0], { id: 1, uuid: '4', processes: [], health: 'ok', error: null },
      'classic: the chip reports its current logical id (the daemon compares it)');

    fake.write(CHIPS);
    const h2 = open();
    t.teardown(() => native.deviceClose(h2, 2000));
    native.deviceDiscover(h2, 2000);
    fake.write(['chip 2 0 3 Ascend 910B3', 'chip 7 0 1 Ascend 910B3', 'chip 5 0 0 Ascend 310P3']);
    t.same((await native.deviceProbe(h2, [1], 2000))[0], {
      id: 1, uuid: null, processes: null, health: null,
      error: 'device identity changed since discovery: logical id 1 was card 2 chip 1, is now card 7 chip 0',
    }, 'v2: slot and chip are compared');
  });

  t.test('discovery: names, skipped units, failures', async (t) => {
    const long = 'X'.repeat(40);
    for (const board of [[], ['board 910B']]) {
      fake.write([`chip 0 0 0 ${'T'.repeat(32)} ${long}`, 'chip 1 0 1 Ascend', ...board]);
      const h = open();
      const devs = native.deviceDiscover(h, 2000);
      t.same(devs.map((d) => d.name), [`${'T'.repeat(32)} ${'X'.repeat(32)}`, 'Ascend'],
        `${board.length ? 'classic' : 'v2'}: 32-byte fields without a terminator are cut at 32`);
      native.deviceClose(h, 2000);
    }

    fake.write([...CHIPS, 'board 910B', 'fail dcmi_get_device_chip_info -8007 1']);
    let h = open();
    t.same(native.deviceDiscover(h, 2000)[1], { id: 1, uuid: '1', name: 'Ascend', npu: 2, chip: 1, error: 'dcmi_get_device_chip_info: invalid device id (-8007)' },
      'a chip whose name cannot be read is reported with the reason (the daemon leaves it out)');
    fake.write([...CHIPS, 'board 910B', 'fail dcmi_get_device_logic_id -8007 1']);
    t.throws(() => native.deviceDiscover(h, 2000),
      /^card 2 chip 1: dcmi_get_device_logic_id: invalid device id \(-8007\); refusing to guess Ascend logical ids$/);
    fake.write([...CHIPS, 'board 910B', 'fail dcmi_get_card_list -8009']);
    t.throws(() => native.deviceDiscover(h, 2000), /^dcmi_get_card_list: ioctl failed \(-8009\)$/);
    native.deviceClose(h, 2000);

    fake.write([...CHIPS, 'fail dcmiv2_get_device_list -8012']);
    h = open();
    t.throws(() => native.deviceDiscover(h, 2000), /^dcmiv2_get_device_list: not ready \(-8012\)$/);
    fake.write([...CHIPS, 'hang dcmiv2_get_device_list 30']);
    t.throws(() => native.deviceDiscover(h, 300), /^dcmiv2_get_device_list timed out after 300 ms$/);
    native.deviceClose(h, 300);
    fake.write(CHIPS);
  });
}

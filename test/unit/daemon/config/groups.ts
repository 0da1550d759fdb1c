// [devices.groups] and [devices].group_affinity (docs/behaviour.md §21.5): syntax, ids in two groups, ids that do not exist.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Device } from '@xlurm/protocol';
import { checkGroupIds, parseGroups } from '../../../../packages/daemon/src/config/groups';
import { ConfigFileError, checkConfigText } from '../../../../packages/daemon/src/config/load';
import { loadDaemonConfig } from '../../../../packages/daemon/src/config/daemon';
import { parseDaemonArgs } from '../../../../packages/daemon/src/config/args';

function problems(text: string): string[] {
  try {
    checkConfigText('x.toml', text);
    return [];
  } catch (e) {
    if (!(e instanceof ConfigFileError)) throw e;
    return e.message.split('\n');
  }
}

t.test('group syntax: ; between groups, , and ranges inside', async (t) => {
  t.same(parseGroups('0-3;4-7'), [[0, 1, 2, 3], [4, 5, 6, 7]]);
  t.same(parseGroups(' 0, 2 ; 1,3-4 '), [[0, 2], [1, 3, 4]]);
  t.same(parseGroups('5'), [[5]]);
  t.equal(parseGroups('0-3;;4'), `invalid groups '0-3;;4': empty group; write e.g. "0-3;4-7"`);
  t.equal(parseGroups('0-3;a'), `invalid groups '0-3;a': 'a' is not an id or a range of ids; write e.g. "0-3;4-7"`);
  t.equal(parseGroups('3-1'), "invalid groups '3-1': range 3-1 is empty");
  t.equal(parseGroups('0-3;3-5'), 'device id 3 is in two groups (1 and 2)');
  t.equal(parseGroups('0,1,1'), 'device id 1 is listed twice in group 1');
  t.match(parseGroups('0-100000'), /at most 4096 devices/);
});

t.test('the file: [devices] keys, problems with their lines', async (t) => {
  t.same(checkConfigText('x.toml', '[devices]\ngroup_affinity = "require"\n[devices.groups]\nnv = "0-3;4-7"\nasc = "0-7"\n').settings,
    { devices: { group_affinity: 'require', groups: { nv: '0-3;4-7', asc: '0-7' } } });
  t.same(problems('[devices]\ngroup_affinity = "always"\n'), ["x.toml:2: devices.group_affinity: invalid group_affinity 'always': use prefer, require or off"]);
  t.same(problems('[devices.groups]\nnv = "0-3"\nasc = "0-1;1-2"\n'), ['x.toml:3: devices.groups.asc: device id 1 is in two groups (1 and 2)']);
  t.same(problems('[devices.groups]\nnv = [0, 1]\n'), ['x.toml:2: devices.groups.nv: must be a string, not an array']);
  t.match(problems('[devices.groups]\nnvidia = "0-3"\n')[0], /^x\.toml:2: devices\.groups\.nvidia: unknown key \(known keys of \[devices\.groups\]: nv, asc, /);
});

t.test('the settings: default prefer, declared groups per vendor', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xlurm-groups-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'x.toml');
  const args = parseDaemonArgs([]);
  fs.writeFileSync(file, '');
  let c = loadDaemonConfig(args, { file, named: true });
  t.equal(c.groupAffinity, 'prefer');
  t.same(c.groups, {});
  fs.writeFileSync(file, '[devices]\ngroup_affinity = "off"\ngroups.nv = "0-1;2-3"\n');
  c = loadDaemonConfig(args, { file, named: true });
  t.equal(c.groupAffinity, 'off');
  t.same(c.groups, { nvidia: [[0, 1], [2, 3]] });
});

t.test('declared ids must exist in their vendor', async (t) => {
  const dev = (kind: Device['kind'], id: number): Device => ({ kind, id, name: '', visible: '', npu: null, chip: null });
  const inv = [dev('nvidia', 0), dev('nvidia', 1), dev('ascend', 2)];
  t.equal(checkGroupIds({ nvidia: [[0], [1]] }, inv), undefined);
  t.same(checkGroupIds({ nvidia: [[0, 1, 2]] }, inv), { key: 'devices.groups.nv', problem: 'unknown nv device ID 2' });
  t.same(checkGroupIds({ ascend: [[0, 1], [2]] }, inv), { key: 'devices.groups.asc', problem: 'unknown asc device IDs 0, 1' });
});

// Lines of keys in TOML source: what the checks use to name `file:line`.
import t from 'tap';
import { keyLines, lineOf } from '../../../../packages/daemon/src/config/lines';

t.test('tables, keys, dotted and quoted keys', async (t) => {
  const src = [
    '# top', //                         1
    'title = "x"', //                   2
    '[daemon]', //                      3
    'max_running = 4  # comment', //    4
    '  "quoted key" = 1', //            5
    "[limits.users.'alice']", //        6
    'devices = 8', //                   7
    'a.b.c = 1', //                     8
  ].join('\n');
  const l = keyLines(src);
  t.equal(l.get('title'), 2);
  t.equal(l.get('daemon'), 3);
  t.equal(l.get('daemon.max_running'), 4);
  t.equal(l.get('daemon.quoted key'), 5);
  t.equal(l.get('limits'), 6, 'a dotted header names its parents too');
  t.equal(l.get('limits.users.alice'), 6);
  t.equal(l.get('limits.users.alice.devices'), 7);
  t.equal(l.get('limits.users.alice.a.b.c'), 8);
});

t.test('the inside of multi-line strings and arrays is not a key', async (t) => {
  const src = [
    'text = """', //          1
    'fake = 1', //            2
    '[fake]', //              3
    '"""', //                 4
    'list = [', //            5
    '  "x = 1",', //          6
    '  { inner = 2 },', //    7
    ']', //                   8
    'after = 1', //           9
    "lit = '''one", //        10
    "two = 2'''", //          11
    'last = 1', //            12
  ].join('\n');
  const l = keyLines(src);
  t.notOk(l.has('fake'));
  t.notOk(l.has('inner'));
  t.notOk(l.has('two'));
  t.equal(l.get('after'), 9);
  t.equal(l.get('last'), 12);
});

t.test('arrays of tables are numbered', async (t) => {
  const l = keyLines('[[job]]\nname = "a"\n[[job]]\nname = "b"\n');
  t.equal(l.get('job.0.name'), 2);
  t.equal(l.get('job.1'), 3);
  t.equal(l.get('job.1.name'), 4);
});

t.test('lineOf falls back to the nearest enclosing key', async (t) => {
  const l = keyLines('[daemon]\nlist = [1,\n 2]\n');
  t.equal(lineOf(l, 'daemon.list.1'), 2);
  t.equal(lineOf(l, 'other'), undefined);
});
